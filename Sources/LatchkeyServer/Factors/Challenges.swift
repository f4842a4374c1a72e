import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// What a challenge may authorise (S16): registering a device key, a step-up in a session, or
/// the second factor of a sign-in.
enum ChallengePurpose: String, Sendable {
    case register
    case stepUp = "step_up"
    case mfa
}

/// A device-key challenge (docs/security.md S16): 32 random bytes, single use, 120 seconds, bound to
/// a user, a purpose, the device key that must sign it (none for `register`) and the session or
/// `mfa_token` that asked for it.
///
/// Only the SHA-256 of the bytes is stored (S7). That digest is also exactly what ECDSA-SHA256
/// verification needs, so the bytes themselves are never kept.
struct Challenge: Sendable {
    var id: String
    var userID: String
    var deviceKeyID: String?
    var purpose: ChallengePurpose
    var sessionID: String?
    var mfaTokenHash: [UInt8]?
    /// SHA-256 of the challenge bytes.
    var digest: [UInt8]
    var expiresAt: Date
    var usedAt: Date?

    /// How long a challenge lives: docs/reference.md's upper bound (S16).
    static let lifetime = 120

    /// Creates a challenge inside the caller's transaction.
    ///
    /// - Returns: The body docs/reference.md gives for it: `{challenge_id, challenge, expires_in}`.
    static func issue(
        userID: String, purpose: ChallengePurpose, deviceKeyID: String?, sessionID: String?, mfaTokenHash: [UInt8]?, now: Date,
        dialect: SQLDialect, on connection: any SQLConnection
    ) throws -> JSONValue {
        let id = Identifiers.make("chl")
        let bytes = SecureRandom.bytes(count: 32)
        try connection.execute(
            dialect.sql(
                """
                INSERT INTO challenges (id, user_id, device_key_id, purpose, challenge_hash, created_at, expires_at, session_id, mfa_token_hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """),
            [
                .text(id), .text(userID), SQLValue(deviceKeyID), .text(purpose.rawValue), .blob(HashFunction.sha256.hash(bytes)), .time(now),
                .time(now.addingTimeInterval(TimeInterval(lifetime))), SQLValue(sessionID), mfaTokenHash.map(SQLValue.blob) ?? .null,
            ])
        return ["challenge_id": .string(id), "challenge": .string(Base64URL.encode(bytes)), "expires_in": .number(Double(lifetime))]
    }

    /// Reads a challenge by id.
    static func find(_ id: String, dialect: SQLDialect, on connection: any SQLConnection) throws -> Challenge? {
        guard let row = try connection.queryOne(dialect.sql("SELECT * FROM challenges WHERE id = ?"), [.text(id)]),
            let purpose = ChallengePurpose(rawValue: try row.string("purpose"))
        else { return nil }
        return Challenge(
            id: try row.string("id"), userID: try row.string("user_id"), deviceKeyID: row.optionalString("device_key_id"), purpose: purpose,
            sessionID: row.optionalString("session_id"), mfaTokenHash: row.optionalBlob("mfa_token_hash"),
            digest: try row.blob("challenge_hash"), expiresAt: try row.date("expires_at"), usedAt: row.optionalDate("used_at"))
    }

    /// Throws `invalid_grant` unless the challenge can still be spent at `now`: replay is
    /// recognised by the challenge id (S16), never by signature bytes.
    func checkUsable(now: Date) throws {
        if usedAt != nil { throw HTTPError.invalidGrant(.reused, "the challenge was already used") }
        if now >= expiresAt { throw HTTPError.invalidGrant(.expired, "the challenge has expired") }
    }

    /// Marks the challenge used inside the transaction of what it authorises (S28).
    ///
    /// - Returns: false when another request spent it first or it expired meanwhile.
    static func spend(_ id: String, now: Date, dialect: SQLDialect, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            dialect.sql("UPDATE challenges SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?"),
            [.time(now), .text(id), .time(now)]) == 1
    }
}
