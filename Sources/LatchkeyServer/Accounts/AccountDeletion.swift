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
struct AccountDeletion: Sendable {
    let dependencies: Dependencies
    let sessions: SessionService
    /// Opens the sealed Apple refresh tokens, to queue them for revocation.
    let masterKey: MasterKey
    let outbox: AppleRevocationOutbox
    let identities = IdentityRepository()
    let sessionRows = SessionRepository()

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
        guard try dependencies.users.lock(userID, now: now, on: connection) else { return false }
        if revokeAtApple {
            for identity in try identities.list(userID: userID, on: connection) {
                guard let sealed = identity.sealedAppleRefreshToken, let clientID = identity.appleClientID else { continue }
                let token = try masterKey.unseal(sealed, context: AppleService.refreshTokenContext(identity.id))
                try outbox.enqueue(refreshToken: token, clientID: clientID, userID: userID, now: now, on: connection)
            }
        }
        try sessions.revokeAll(userID: userID, reason: "account_deleted", context: context, now: now, on: connection)
        try sessionRows.tombstoneLiveTokens(userID: userID, reason: "account_deleted", now: now, on: connection)
        try dependencies.users.delete(userID, on: connection)
        try dependencies.audit.scrub(userID: userID, on: connection)
        // The deleted user's address goes with their data; an admin who deleted them is named.
        var entry = context.entry(.accountDeleted, .success, userID: userID, now: now, details: ["reason": reason])
        entry.ip = nil
        try dependencies.audit.record(entry, on: connection)
        return true
    }
}
