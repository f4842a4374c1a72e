import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

extension LatchkeyApplication {
    /// Imports team-transfer ids (`latchkey apple import-transfers FILE`); see
    /// ``AppleService/importTransfers(_:context:)``.
    ///
    /// - Returns: How many identities now carry a transfer id, and how many entries matched none.
    public func importAppleTransfers(_ json: JSONValue) async throws -> (recorded: Int, unknown: Int) {
        let result = try await apple.importTransfers(json, context: RequestContext())
        return (result.recorded, result.unknown)
    }

    /// Sets a user's password (`latchkey users set-password`; see
    /// ``PasswordService/setPassword(userID:password:username:context:)``), which also lifts a
    /// lockout on the account.
    ///
    /// - Returns: Whether the account's failed sign-ins were cleared (audited as
    ///   `password.lockout_lifted`).
    /// - Throws: ``AuthError`` whose message says what is wrong.
    public func setPassword(userID: String, password: String, username: String?) async throws -> Bool {
        try await passwords.setPassword(userID: userID, password: password, username: username, context: RequestContext(requestID: "cli"))
    }

    /// Deletes an account as `DELETE /v1/me` does (`latchkey users delete`): sessions end, Apple
    /// tokens are queued for revocation and sent, personal data goes.
    ///
    /// - Returns: How many of the user's Apple revocations are still queued because Apple could
    ///   not be reached (or is not configured here); a running server keeps retrying them.
    /// - Throws: `not_found` when there is no such user.
    public func deleteUser(id: String) async throws -> Int {
        try await apple.deleteAccount(userID: id, principal: nil, reason: "operator", context: RequestContext())
        try await apple.outbox.runDue()
        return try await database.read { connection in
            Int(try connection.queryOne(
                self.database.dialect.sql("SELECT count(*) AS n FROM apple_revocations WHERE user_id = ?"), [.text(id)])!.int("n"))
        }
    }

    /// A user's sign-in identities, for `latchkey users show`.
    public func identities(userID: String) async throws -> [IdentitySummary] {
        try await database.read { connection in
            try connection.query(
                self.database.dialect.sql(
                    "SELECT * FROM identities WHERE user_id = ? ORDER BY created_at"), [.text(userID)]
            ).map { row in
                IdentitySummary(
                    provider: try row.string("provider"), subject: try row.string("subject"), email: row.optionalString("email"),
                    revokedAt: row.optionalDate("revoked_at"), hasAppleRefreshToken: row.optionalBlob("apple_refresh_token") != nil,
                    lastValidatedAt: row.optionalDate("last_validated_at"), transferSubject: row.optionalString("transfer_sub"),
                    createdAt: try row.date("created_at"))
            }
        }
    }
}

/// One sign-in identity of a user, as an operator sees it.
public struct IdentitySummary: Sendable {
    public var provider: String
    public var subject: String
    public var email: String?
    /// Set after `consent-revoked` or a failed daily validation, until the user signs in again.
    public var revokedAt: Date?
    /// Whether an Apple refresh token is stored (sealed) for revocation and validation.
    public var hasAppleRefreshToken: Bool
    public var lastValidatedAt: Date?
    /// An imported team-transfer id awaiting the user's next sign-in.
    public var transferSubject: String?
    public var createdAt: Date
}
