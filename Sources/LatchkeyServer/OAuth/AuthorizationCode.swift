import FoundationEssentials

/// An authorization code (S22): 256 random bits given to the client once, stored only as a
/// SHA-256 hash, good for one exchange within ``lifetime``, and bound to the client, the redirect
/// URI, the PKCE challenge and the nonce of the request it answers.
struct AuthorizationCode: Sendable, Hashable {
    var hash: [UInt8]
    var clientID: String
    var userID: String
    var browserSessionID: String?
    var redirectURI: String
    var codeChallenge: String
    /// Space-separated, sorted.
    var scope: String
    var nonce: String?
    /// When the user last proved who they are (the ID token's `auth_time`), and how (`amr`).
    var authTime: Date
    var amr: [String]
    var createdAt: Date
    var expiresAt: Date
    /// Set by the exchange; a code that comes back after it is a replay.
    var usedAt: Date?
    /// The session the exchange created, revoked when the code is replayed.
    var sessionID: String?

    static let lifetime: TimeInterval = 60
}
