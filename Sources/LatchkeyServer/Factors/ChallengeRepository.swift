import FoundationEssentials
import LatchkeyStore

/// The `challenges` table: one-time device-key challenges (S16).
struct ChallengeRepository: Sendable {
    /// Stores a new challenge inside the caller's transaction.
    func insert(_ challenge: Challenge, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO challenges (id, user_id, device_key_id, purpose, challenge_hash, created_at, expires_at, session_id, mfa_token_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(challenge.id), .text(challenge.userID), SQLValue(challenge.deviceKeyID), .text(challenge.purpose.rawValue),
                .blob(challenge.digest), .time(challenge.createdAt), .time(challenge.expiresAt), SQLValue(challenge.sessionID),
                challenge.mfaTokenHash.map(SQLValue.blob) ?? .null,
            ])
    }

    /// The challenge with this id; nil when there is none or its purpose is not one Latchkey knows.
    func find(id: String, on connection: any SQLConnection) throws -> Challenge? {
        guard let row = try connection.queryOne("SELECT * FROM challenges WHERE id = ?", [.text(id)]),
            let purpose = ChallengePurpose(rawValue: try row.string("purpose"))
        else { return nil }
        return Challenge(
            id: try row.string("id"), userID: try row.string("user_id"), deviceKeyID: row.optionalString("device_key_id"), purpose: purpose,
            sessionID: row.optionalString("session_id"), mfaTokenHash: row.optionalBlob("mfa_token_hash"),
            digest: try row.blob("challenge_hash"), createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            usedAt: row.optionalDate("used_at"))
    }

    /// Compare-and-set: marks the challenge used only if it is unused and unexpired at `now`.
    ///
    /// - Returns: Whether this call spent it (false: another request spent it first, it expired,
    ///   or it does not exist).
    func spend(id: String, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE challenges SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?", [.time(now), .text(id), .time(now)]) == 1
    }
}
