import FoundationEssentials
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
    let identities = IdentityRepository()
    let sessionRecords = SessionRepository()

    var users: UserRepository { sessions.users }

    /// Deletes `userID` inside the caller's transaction.
    ///
    /// - Parameters:
    ///   - revokeAtApple: Whether to queue the Apple refresh tokens for revocation; not when
    ///     Apple itself told us the account is gone.
    ///   - reason: Why, for the audit entry: `user`, `apple`, `operator`.
    /// - Returns: Whether the user existed.
    @discardableResult
    func delete(userID: String, reason: String, revokeAtApple: Bool, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> Bool {
        // Taking the user's row first makes a concurrent deletion of the same user wait, then
        // find nothing and write nothing.
        guard try users.lock(userID, now: now, on: connection) else { return false }
        if revokeAtApple {
            for identity in try identities.list(userID: userID, on: connection) {
                guard let sealed = identity.sealedAppleRefreshToken, let clientID = identity.appleClientID else { continue }
                let token = try masterKey.unseal(sealed, context: AppleService.refreshTokenContext(identity.id))
                try outbox.enqueue(refreshToken: token, clientID: clientID, userID: userID, now: now, on: connection)
            }
        }
        try sessions.revokeAll(userID: userID, reason: "account_deleted", context: context, now: now, on: connection)
        try sessionRecords.tombstoneLiveTokens(userID: userID, reason: "account_deleted", now: now, on: connection)
        try users.delete(userID, on: connection)
        try sessions.audit.scrub(userID: userID, on: connection)
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
    /// - Throws: ``AuthError/Code/notFound`` when there is no such user;
    ///   ``AuthError/Code/insufficientAuthentication``.
    func deleteAccount(userID: String, principal: Principal?, reason: String, context: RequestContext) async throws {
        let now = clock()
        let deletion = AccountDeletion(sessions: sessions, masterKey: masterKey, outbox: outbox)
        let existed = try await database.write { connection in
            if let principal { try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection) }
            return try deletion.delete(userID: userID, reason: reason, revokeAtApple: true, context: context, now: now, on: connection)
        }
        guard existed else { throw AuthError.notFound("no such user") }
        // The revocation is durable now; sending it does not hold up the answer.
        Task { [outbox, jobs = BackgroundJobs(metrics: sessions.metrics)] in
            await jobs.run(.appleRevocationOutbox) { _ = try await outbox.runDue() }
        }
    }
}
