package import FoundationEssentials
package import LatchkeyJSON
import LatchkeyStore

extension LatchkeyApplication {
    /// Imports team-transfer ids (`latchkey apple import-transfers FILE`) from a JSON array of
    /// `{"transfer_sub": …, "sub": <old Apple id>}` or `{"transfer_sub": …, "user_id": <our user id>}`,
    /// in one transaction; see ``AppleService/importTransfers(_:context:)``.
    ///
    /// - Returns: How many identities now carry a transfer id, and how many entries matched none.
    /// - Throws: ``AuthError`` `invalid_request` naming the first bad entry; nothing is recorded then.
    package func importAppleTransfers(_ json: JSONValue) async throws -> (recorded: Int, unknown: Int) {
        let result = try await services.apple.importTransfers(try Self.transferEntries(json), context: RequestContext())
        return (result.recorded, result.unknown)
    }

    /// The entries of a transfer file, checked.
    static func transferEntries(_ json: JSONValue) throws(AuthError) -> [AppleService.TransferEntry] {
        guard case .array(let entries) = json else { throw .invalidRequest("the file must hold a JSON array") }
        var parsed: [AppleService.TransferEntry] = []
        for (index, entry) in entries.enumerated() {
            guard let transferSubject = entry["transfer_sub"]?.stringValue, !transferSubject.isEmpty else {
                throw .invalidRequest("entry \(index): transfer_sub is required")
            }
            if let subject = entry["sub"]?.stringValue {
                parsed.append(.init(transferSubject: transferSubject, target: .subject(subject)))
            } else if let userID = entry["user_id"]?.stringValue {
                parsed.append(.init(transferSubject: transferSubject, target: .userID(userID)))
            } else {
                throw .invalidRequest("entry \(index): sub or user_id is required")
            }
        }
        return parsed
    }

    /// Sets a user's password (`latchkey users set-password`; see
    /// ``PasswordService/setPassword(userID:password:username:context:)``), which also lifts a
    /// lockout on the account.
    ///
    /// - Returns: Whether the account's failed sign-ins were cleared (audited as
    ///   `password.lockout_lifted`).
    /// - Throws: ``AuthError`` whose message says what is wrong.
    package func setPassword(userID: String, password: String, username: String?) async throws -> Bool {
        try await services.passwords.setPassword(userID: userID, password: password, username: username, context: RequestContext(requestID: "cli"))
    }

    /// Deletes an account as `DELETE /v1/me` does (`latchkey users delete`): sessions end, Apple
    /// tokens are queued for revocation and sent, personal data goes.
    ///
    /// - Returns: How many of the user's Apple revocations are still queued because Apple could
    ///   not be reached (or is not configured here); a running server keeps retrying them.
    /// - Throws: `not_found` when there is no such user.
    package func deleteUser(id: String) async throws -> Int {
        try await services.accounts.delete(userID: id, principal: nil, reason: "operator", context: RequestContext())
        try await services.apple.outbox.runDue()
        return try await services.apple.outbox.pending(userID: id)
    }

    /// A user's sign-in identities, for `latchkey users show`.
    package func identities(userID: String) async throws -> [IdentitySummary] {
        let identities = IdentityRepository()
        return try await database.read { connection in
            try identities.list(userID: userID, on: connection).map { identity in
                IdentitySummary(
                    provider: identity.provider, subject: identity.subject, email: identity.email, revokedAt: identity.revokedAt,
                    hasAppleRefreshToken: identity.sealedAppleRefreshToken != nil, lastValidatedAt: identity.lastValidatedAt,
                    transferSubject: identity.transferSubject, createdAt: identity.createdAt)
            }
        }
    }
}

/// One sign-in identity of a user, as an operator sees it.
package struct IdentitySummary: Sendable {
    package var provider: String
    package var subject: String
    package var email: String?
    /// Set after `consent-revoked` or a failed daily validation, until the user signs in again.
    package var revokedAt: Date?
    /// Whether an Apple refresh token is stored (sealed) for revocation and validation.
    package var hasAppleRefreshToken: Bool
    package var lastValidatedAt: Date?
    /// An imported team-transfer id awaiting the user's next sign-in.
    package var transferSubject: String?
    package var createdAt: Date
}
