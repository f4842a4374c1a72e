import FoundationEssentials

/// One WebAuthn ceremony: the options a client was given, answered once, success or not.
struct PasskeyCeremony: Sendable, Hashable {
    /// What the answer does.
    enum Kind: String, Sendable {
        /// A passkey for a signed-in account.
        case registration
        /// A new account with a passkey ("create with a passkey").
        case signup
        /// A sign-in: discoverable (AutoFill) or for a named account.
        case signIn = "sign-in"
        /// A passkey as the second factor after a password.
        case secondFactor = "second-factor"
    }

    /// The `flow_id` the options carried.
    var id: String
    var kind: Kind
    /// At least 32 random bytes, as the options sent them.
    var challenge: [UInt8]
    /// The account it is for: a registration's, a second factor's.
    var userID: String?
    /// The user handle the options named: the account's (registration) or a new one (sign-up).
    var userHandle: [UInt8]?
    /// A sign-up's username, or the name a sign-in asked for.
    var username: String?
    var givenName: String?
    var familyName: String?
    /// iOS 18's automatic passkey upgrade (a registration without user presence), or an
    /// AutoFill sign-in (whose challenge outlives the timeout, as browsers ignore it there).
    var conditional: Bool
    var createdAt: Date
    var expiresAt: Date
}
