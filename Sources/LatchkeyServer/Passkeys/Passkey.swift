import FoundationEssentials

/// A registered passkey: a WebAuthn credential of one account, as its registration verified it.
struct Passkey: Sendable, Hashable {
    var id: String
    var userID: String
    /// The authenticator's credential id (at most 1,023 bytes), unique across accounts.
    var credentialID: [UInt8]
    /// The COSE key as the authenticator gave it.
    var publicKey: [UInt8]
    /// The COSE algorithm: -7 (ES256), -8 (EdDSA), -257 (RS256).
    var algorithm: Int
    /// The last signature counter seen; 0 for synced passkeys, which never count.
    var signCount: UInt32
    /// BE: the credential may be synced (iCloud Keychain).
    var backupEligible: Bool
    /// BS: the credential is synced now; it may change at any use.
    var backedUp: Bool
    /// What the client said it can reach the authenticator by (`internal`, `hybrid`, …).
    var transports: [String]
    /// The authenticator model's id (16 bytes; zero for many synced passkeys).
    var aaguid: [UInt8]
    /// How its attestation was taken: `none`, `self`, or `verified`.
    var attestation: String
    /// The account holder's name for it ("iPhone"), changeable.
    var name: String
    var createdAt: Date
    var lastUsedAt: Date?
}
