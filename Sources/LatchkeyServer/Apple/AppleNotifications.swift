import FoundationEssentials
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
    /// `jti` is remembered in the same transaction that applies it (an insert whose changed-row
    /// count says whether it is the first delivery), so a retried delivery is answered without
    /// being applied twice, even by another server process.
    ///
    /// - Returns: What the notification did.
    /// - Throws: ``AuthError`` `invalid_request` naming the failed check; `apple_unavailable`
    ///   when Apple's keys cannot be fetched.
    @discardableResult
    func handleNotification(_ payload: String, context: RequestContext) async throws -> NotificationOutcome {
        let claims: JWTClaims
        do {
            let policy = JWTValidationPolicy(
                issuer: settings.issuer, audiences: settings.allClientIDs, algorithms: [.rs256], requiredClaims: ["iss", "aud", "iat", "jti", "events"])
            claims = try await keys.verify(payload, policy: policy).claims
        } catch let error as JOSEError {
            throw AuthError.invalidRequest("the notification failed verification: \(AppleIdentityToken.check(for: error)): \(error.message)")
        } catch let error as RemoteKeySetUnavailable {
            throw AppleError.unavailable(error.message).authError
        }
        // Apple serialises `events` into a string; accept an object too.
        var events = claims["events"]
        if let text = events?.stringValue { events = try? JSONValue(parsing: Array(text.utf8)) }
        guard let jti = claims.tokenID, !jti.isEmpty, let type = events?["type"]?.stringValue, let subject = events?["sub"]?.stringValue else {
            throw AuthError.invalidRequest("the notification has no jti, or its events carry no type or sub")
        }
        let email = events?["email"]?.stringValue
        let now = clock()
        let keepUntil = max(claims.expiresAt ?? now, now).addingTimeInterval(7 * 86_400)
        let identities = identities
        let replays = replays
        return try await database.write { connection in
            guard try replays.rememberNotification(jti: String(jti.prefix(200)), receivedAt: now, until: keepUntil, on: connection) else {
                return .alreadySeen
            }
            let identity = try self.appleIdentity(subject: subject, on: connection)
            var outcome = NotificationOutcome.applied
            if let identity {
                switch type {
                case "email-disabled":
                    _ = try identities.setEmailDisabled(id: identity.id, at: now, on: connection)
                case "email-enabled":
                    _ = try identities.setEmailDisabled(id: identity.id, at: nil, email: email, on: connection)
                case "consent-revoked":
                    try self.revokeIdentity(identity, source: "notification", context: context, now: now, on: connection)
                case "account-delete", "account-deleted":
                    try self.deletion.delete(userID: identity.userID, reason: "apple", revokeAtApple: false, context: context, now: now, on: connection)
                default:
                    outcome = .ignored
                }
            } else {
                outcome = .unknownUser
            }
            try self.audit.record(
                .init(time: now, userID: identity?.userID, event: .appleNotification, outcome: AuditOutcome(rawValue: outcome.rawValue),
                      details: ["type": String(type.prefix(40))]),
                on: connection)
            return outcome
        }
    }
}
