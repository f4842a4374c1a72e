import FoundationEssentials
import LatchkeyStore

extension SessionRepository {
    /// Leaves a tombstone for each live refresh token of the user's unexpired sessions, holding
    /// only the token's hash and `reason`, kept until the session would have expired; so a later
    /// refresh with one answers `invalid_grant` with that reason. A token that already has a
    /// tombstone keeps it.
    ///
    /// - Returns: How many tombstones this call left.
    @discardableResult
    func tombstoneLiveTokens(userID: String, reason: String, now: Date, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            """
            INSERT INTO ended_refresh_tokens (token_hash, reason, expires_at)
            SELECT refresh_tokens.token_hash, ?, sessions.absolute_expires_at
            FROM refresh_tokens JOIN sessions ON sessions.id = refresh_tokens.session_id
            WHERE sessions.user_id = ? AND refresh_tokens.retired_at IS NULL AND sessions.absolute_expires_at > ?
            ON CONFLICT DO NOTHING
            """,
            [.text(reason), .text(userID), .time(now)])
    }
}
