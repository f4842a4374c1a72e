import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The daily check of stored Apple refresh tokens (docs/reference.md: at most once a day per user).
///
/// A pass claims the identities whose last validation is a day old by moving their
/// `last_validated_at` forward (plus up to an hour of jitter, so checks spread out rather than
/// all falling due together), then asks Apple about each, a few at a time. Each claim is a
/// compare-and-set on the `last_validated_at` the pass read, so with several server processes
/// each identity is checked by one of them; what the check finds is written only while that
/// claim still holds. Apple answering `invalid_grant` means the user withdrew the app's
/// authorization: the identity is marked revoked and its sessions end, so the next refresh
/// answers reason `consent_revoked`. When Apple cannot be reached the identity is tried again in
/// an hour.
extension AppleService {
    /// How often a token is checked.
    static let validationInterval: TimeInterval = 86_400
    /// How many checks run at once.
    static let validationConcurrency = 4

    /// Validates every due token once.
    ///
    /// - Returns: How many identities were found revoked.
    @discardableResult
    func validateDueTokens(limit: Int = 256) async throws -> Int {
        let now = clock()
        let identities = identities
        let due = try await database.write { connection in
            var claimed: [(identity: Identity, claim: Date)] = []
            let candidates = try identities.dueForValidation(
                provider: Self.provider, before: now.addingTimeInterval(-Self.validationInterval), limit: limit, claiming: true,
                on: connection)
            for identity in candidates {
                // Whole seconds, as the column stores them, so the claim compares equal later.
                let claim = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + .random(in: 0..<3600)).rounded(.down))
                if try identities.claimValidation(id: identity.id, read: identity.lastValidatedAt, until: claim, on: connection) {
                    claimed.append((identity, claim))
                }
            }
            return claimed
        }
        var revoked = 0
        var index = 0
        while index < due.count {
            let batch = due[index..<min(index + Self.validationConcurrency, due.count)]
            index += batch.count
            revoked += try await withThrowingTaskGroup(of: Int.self) { group in
                for (identity, claim) in batch {
                    group.addTask { try await self.validate(identity, claim: claim, claimedAt: now) ? 0 : 1 }
                }
                return try await group.reduce(0, +)
            }
        }
        return revoked
    }

    /// Asks Apple about one claimed identity's token; `false` when Apple says it is gone and
    /// this check revoked the identity.
    private func validate(_ identity: Identity, claim: Date, claimedAt: Date) async throws -> Bool {
        guard let sealed = identity.sealedAppleRefreshToken, let clientID = identity.appleClientID else {
            // Written together by every sign-in since migration 2; a row without a client id
            // cannot be checked, and says so instead of stopping the pass.
            ServerLog.write(.warning, "apple_validation_skipped", time: clock(), ["identity": .string(identity.id), "reason": "no apple_client_id"])
            return true
        }
        let token = try masterKey.unseal(sealed, context: Self.refreshTokenContext(identity.id))
        let identities = identities
        do {
            if try await client.validate(refreshToken: String(decoding: token, as: UTF8.self), clientID: clientID) {
                return true
            }
        } catch {
            let retry = claimedAt.addingTimeInterval(3600 - Self.validationInterval)
            // Rescheduled only while the claim holds: a sign-in meanwhile stored a fresh token.
            try await database.write { connection in
                _ = try identities.rescheduleValidation(id: identity.id, claimedUntil: claim, to: retry, on: connection)
            }
            return true
        }
        let now = clock()
        let revoked = try await database.write { connection in
            try self.revokeIdentity(identity, claimedUntil: claim, source: "validation", context: RequestContext(), now: now, on: connection)
        }
        return !revoked
    }
}
