import FoundationEssentials
import LatchkeyStore

/// The `mfa_tokens` table: half-finished sign-ins waiting for a second factor.
struct MFATokenRepository: Sendable {
    /// What a wrong proof did to a token.
    struct Failure: Sendable, Hashable {
        /// The token's wrong proofs, this one included.
        var failures: Int
        /// Whether this wrong proof ended the token.
        var ended: Bool
    }

    /// Stores a new token inside the caller's transaction.
    func insert(_ token: MFAToken, on connection: any SQLConnection) throws {
        try connection.execute(
            "INSERT INTO mfa_tokens (token_hash, user_id, first_factor, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            [.blob(token.hash), .text(token.userID), .text(token.firstFactor), .time(token.createdAt), .time(token.expiresAt)])
    }

    /// The token with this hash.
    func find(hash: [UInt8], on connection: any SQLConnection) throws -> MFAToken? {
        guard let row = try connection.queryOne("SELECT * FROM mfa_tokens WHERE token_hash = ?", [.blob(hash)]) else { return nil }
        return MFAToken(
            hash: try row.blob("token_hash"), userID: try row.string("user_id"), firstFactor: try row.string("first_factor"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"), failures: Int(try row.int("failures")),
            ended: row.optionalString("ended_reason").map(MFAToken.Ending.init(rawValue:)))
    }

    /// Compare-and-set: ends the token as `completed` only if it has not ended and has not
    /// expired at `now`, so a token completes one sign-in at most.
    ///
    /// - Returns: Whether this call completed it (false: another request completed or ended it
    ///   first, or it expired).
    func complete(hash: [UInt8], at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE mfa_tokens SET ended_at = ?, ended_reason = ? WHERE token_hash = ? AND ended_at IS NULL AND expires_at > ?",
            [.time(now), .text(MFAToken.Ending.completed.rawValue), .blob(hash), .time(now)]) == 1
    }

    /// Counts a wrong proof on a token that has not ended, and ends it (`too_many_failures`) when
    /// that makes `maximum`, in one statement: concurrent wrong proofs each count, and exactly
    /// one of them ends the token.
    ///
    /// - Returns: The count and whether this call ended the token; nil when it had already ended.
    func recordFailure(hash: [UInt8], maximum: Int, at now: Date, on connection: any SQLConnection) throws -> Failure? {
        let ending = MFAToken.Ending.tooManyFailures.rawValue
        guard
            let row = try connection.queryOne(
                """
                UPDATE mfa_tokens SET failures = failures + 1,
                    ended_at = CASE WHEN failures + 1 >= ? THEN ? ELSE ended_at END,
                    ended_reason = CASE WHEN failures + 1 >= ? THEN ? ELSE ended_reason END
                WHERE token_hash = ? AND ended_at IS NULL
                RETURNING failures, ended_reason
                """,
                [.integer(Int64(maximum)), .time(now), .integer(Int64(maximum)), .text(ending), .blob(hash)])
        else { return nil }
        return Failure(failures: Int(try row.int("failures")), ended: row.optionalString("ended_reason") == ending)
    }
}
