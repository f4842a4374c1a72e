import FoundationEssentials
import LatchkeyHTTP
import LatchkeyStore

/// Deleting an account: `DELETE /v1/me`, Apple's account-delete notification and
/// `latchkey users delete` all end here.
///
/// In one transaction: the user's Apple refresh tokens move to the revocation outbox, every
/// session ends (bearer checks in this process see it at once; the live refresh tokens leave a
/// tombstone, so a later refresh answers reason `account_deleted`), the user row and everything
/// hanging off it (identities, credentials, factors, sessions) are deleted, and the user's audit
/// entries lose their IP address and details, keeping only user id, event and time (docs/reference.md).
struct AccountDeletion {
    let sessions: SessionService
    let masterKey: MasterKey
    let outbox: AppleRevocationOutbox

    /// Deletes `userID` inside the caller's transaction.
    ///
    /// - Parameters:
    ///   - revokeAtApple: Whether to queue the Apple refresh tokens for revocation; not when
    ///     Apple itself told us the account is gone.
    ///   - reason: Why, for the audit entry: `user`, `apple`, `operator`.
    /// - Returns: Whether the user existed.
    @discardableResult
    func delete(userID: String, reason: String, revokeAtApple: Bool, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> Bool {
        let dialect = sessions.database.dialect
        guard try connection.queryOne(dialect.sql("SELECT 1 AS one FROM users WHERE id = ?"), [.text(userID)]) != nil else { return false }
        if revokeAtApple {
            let identities = try connection.query(
                dialect.sql("SELECT id, apple_client_id, apple_refresh_token FROM identities WHERE user_id = ? AND apple_refresh_token IS NOT NULL"),
                [.text(userID)])
            for identity in identities {
                let token = try masterKey.unseal(try identity.blob("apple_refresh_token"), context: AppleService.refreshTokenContext(try identity.string("id")))
                try outbox.enqueue(refreshToken: token, clientID: try identity.string("apple_client_id"), userID: userID, now: now, on: connection)
            }
        }
        try sessions.revokeAll(userID: userID, reason: "account_deleted", context: context, now: now, on: connection)
        try connection.execute(
            dialect.sql(
                """
                INSERT INTO ended_refresh_tokens (token_hash, reason, expires_at)
                SELECT refresh_tokens.token_hash, 'account_deleted', sessions.absolute_expires_at
                FROM refresh_tokens JOIN sessions ON sessions.id = refresh_tokens.session_id
                WHERE sessions.user_id = ? AND refresh_tokens.retired_at IS NULL AND sessions.absolute_expires_at > ?
                ON CONFLICT DO NOTHING
                """),
            [.text(userID), .time(now)])
        try connection.execute(dialect.sql("DELETE FROM users WHERE id = ?"), [.text(userID)])
        try connection.execute(dialect.sql("UPDATE audit_log SET ip = NULL, details = '{}' WHERE user_id = ?"), [.text(userID)])
        try sessions.audit.record(
            .init(time: now, userID: userID, event: .accountDeleted, outcome: .success, requestID: context.requestID, details: ["reason": reason]),
            on: connection)
        return true
    }
}

extension AppleService {
    /// Deletes an account and queues its Apple tokens for revocation, then sends the queue.
    ///
    /// - Parameters:
    ///   - principal: The signed-in user deleting their own account; a user with a second
    ///     factor must have proved it in the last five minutes. `nil` for an operator.
    /// - Throws: 404 when there is no such user; 403 `insufficient_authentication`.
    func deleteAccount(userID: String, principal: Principal?, reason: String, context: RequestContext) async throws {
        let now = clock()
        let deletion = AccountDeletion(sessions: sessions, masterKey: masterKey, outbox: outbox)
        let existed = try await database.write { connection in
            if let principal { try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection) }
            return try deletion.delete(userID: userID, reason: reason, revokeAtApple: true, context: context, now: now, on: connection)
        }
        guard existed else { throw HTTPError.notFound("no such user") }
        // The revocation is durable now; sending it does not hold up the answer.
        Task { [outbox, jobs = BackgroundJobs(metrics: sessions.metrics)] in
            await jobs.run(.appleRevocationOutbox) { _ = try await outbox.runDue() }
        }
    }
}
