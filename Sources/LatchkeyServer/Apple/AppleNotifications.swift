import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// Apple's server-to-server notifications (docs/reference.md "Server-to-server notifications").
extension AppleService {
    /// What a notification did.
    enum NotificationOutcome: String, Sendable {
        case applied, alreadySeen = "already_seen", unknownUser = "unknown_user", ignored
    }

    /// Verifies and applies a notification (`POST /v1/apple/notifications` `{"payload": JWS}`).
    ///
    /// The JWS is held to Apple's keys, issuer and our client ids (any `exp` is checked); its
    /// `jti` is remembered in the same transaction that applies it, so a retried delivery is
    /// answered 200 without being applied twice.
    ///
    /// - Throws: 400 `invalid_request` naming the failed check.
    @discardableResult
    func handleNotification(_ payload: String, context: RequestContext) async throws -> NotificationOutcome {
        let claims: JWTClaims
        do {
            let policy = JWTValidationPolicy(
                issuer: settings.issuer, audiences: settings.clientIDs, algorithms: [.rs256], requiredClaims: ["iss", "aud", "iat", "jti", "events"])
            claims = try await keys.verify(payload, policy: policy).claims
        } catch let error as JOSEError {
            throw HTTPError.invalidRequest("the notification failed verification: \(AppleIdentityToken.check(for: error)): \(error.reason)")
        } catch let error as AppleError {
            throw error.httpError
        }
        // Apple serialises `events` into a string; accept an object too.
        var events = claims["events"]
        if let text = events?.stringValue { events = try? JSONValue(parsing: Array(text.utf8)) }
        guard let jti = claims.tokenID, let type = events?["type"]?.stringValue, let subject = events?["sub"]?.stringValue else {
            throw HTTPError.invalidRequest("the notification has no jti, or its events carry no type or sub")
        }
        let email = events?["email"]?.stringValue
        let now = clock()
        let keepUntil = max(claims.expiresAt ?? now, now).addingTimeInterval(7 * 86_400)
        let dialect = database.dialect
        let deletion = AccountDeletion(sessions: sessions, masterKey: masterKey, outbox: outbox)
        return try await database.write { connection in
            let fresh = try connection.execute(
                dialect.sql("INSERT INTO apple_notifications (jti, received_at, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"),
                [.text(String(jti.prefix(200))), .time(now), .time(keepUntil)])
            guard fresh == 1 else { return .alreadySeen }
            let identity = try self.appleIdentity(subject: subject, on: connection)
            var outcome = NotificationOutcome.applied
            if let identity {
                let identityID = try identity.string("id")
                let userID = try identity.string("user_id")
                switch type {
                case "email-disabled":
                    try connection.execute(dialect.sql("UPDATE identities SET email_disabled_at = ? WHERE id = ?"), [.time(now), .text(identityID)])
                case "email-enabled":
                    try connection.execute(
                        dialect.sql("UPDATE identities SET email_disabled_at = NULL, email = COALESCE(?, email) WHERE id = ?"),
                        [SQLValue(email), .text(identityID)])
                case "consent-revoked":
                    try self.revokeIdentity(id: identityID, userID: userID, source: "notification", context: context, now: now, on: connection)
                case "account-delete", "account-deleted":
                    try deletion.delete(userID: userID, reason: "apple", revokeAtApple: false, context: context, now: now, on: connection)
                default:
                    outcome = .ignored
                }
            } else {
                outcome = .unknownUser
            }
            try self.audit.record(
                .init(time: now, userID: try identity?.string("user_id"), event: .appleNotification, outcome: AuditOutcome(rawValue: outcome.rawValue),
                      details: ["type": String(type.prefix(40))]),
                on: connection)
            return outcome
        }
    }
}
