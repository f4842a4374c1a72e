import FoundationEssentials
import LatchkeyStore

/// The daily check of stored Apple refresh tokens (docs/reference.md: at most once a day per user).
///
/// A pass claims the identities whose last validation is a day old by moving their
/// `last_validated_at` forward (plus up to an hour of jitter, so checks spread out rather than
/// all falling due together), then asks Apple about each, a few at a time. Apple answering
/// `invalid_grant` means the user withdrew the app's authorization: the identity is marked
/// revoked and its sessions end, so the next refresh answers reason `consent_revoked`. When Apple
/// cannot be reached the identity is tried again in an hour.
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
        let dialect = database.dialect
        let due = try await database.write { connection in
            let rows = try connection.query(
                dialect.sql(
                    """
                    SELECT id, user_id, apple_client_id, apple_refresh_token FROM identities
                    WHERE provider = 'apple' AND apple_refresh_token IS NOT NULL AND revoked_at IS NULL
                        AND (last_validated_at IS NULL OR last_validated_at <= ?)
                    ORDER BY last_validated_at LIMIT ?
                    """),
                [.time(now.addingTimeInterval(-Self.validationInterval)), .integer(Int64(limit))])
            for row in rows {
                try connection.execute(
                    dialect.sql("UPDATE identities SET last_validated_at = ? WHERE id = ?"),
                    [.time(now.addingTimeInterval(.random(in: 0..<3600))), .text(try row.string("id"))])
            }
            return rows
        }
        var revoked = 0
        var index = 0
        while index < due.count {
            let batch = due[index..<min(index + Self.validationConcurrency, due.count)]
            index += batch.count
            revoked += try await withThrowingTaskGroup(of: Int.self) { group in
                for row in batch {
                    group.addTask { try await self.validate(row, claimedAt: now) ? 0 : 1 }
                }
                return try await group.reduce(0, +)
            }
        }
        return revoked
    }

    /// Asks Apple about one identity's token; `false` when Apple says it is gone.
    private func validate(_ row: SQLRow, claimedAt: Date) async throws -> Bool {
        let identityID = try row.string("id")
        let userID = try row.string("user_id")
        let token = try masterKey.unseal(try row.blob("apple_refresh_token"), context: Self.refreshTokenContext(identityID))
        let dialect = database.dialect
        do {
            if try await client.validate(refreshToken: String(decoding: token, as: UTF8.self), clientID: try row.string("apple_client_id")) {
                return true
            }
        } catch {
            let retry = claimedAt.addingTimeInterval(3600 - Self.validationInterval)
            try await database.write { connection in
                try connection.execute(dialect.sql("UPDATE identities SET last_validated_at = ? WHERE id = ?"), [.time(retry), .text(identityID)])
            }
            return true
        }
        let now = clock()
        try await database.write { connection in
            try self.revokeIdentity(id: identityID, userID: userID, source: "validation", context: RequestContext(), now: now, on: connection)
        }
        return false
    }
}
