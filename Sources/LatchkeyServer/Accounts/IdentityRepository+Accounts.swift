import FoundationEssentials
import LatchkeyStore

/// An Apple refresh token as `identities` stores it: sealed under the master key, with what
/// revoking it at Apple needs.
struct SealedAppleRefreshToken: Sendable, Hashable {
    /// The identity row, the context the token is sealed under.
    var identityID: String
    var clientID: String
    var sealed: [UInt8]
}

extension IdentityRepository {
    /// The user's sign-in identities at providers, oldest first, for `GET /v1/me`.
    func accountIdentities(userID: String, on connection: any SQLConnection) throws -> [AccountIdentity] {
        try connection.query("SELECT provider, email, created_at FROM identities WHERE user_id = ? ORDER BY created_at", [.text(userID)])
            .map { row in
                AccountIdentity(provider: try row.string("provider"), email: row.optionalString("email"), createdAt: try row.date("created_at"))
            }
    }

    /// The sealed Apple refresh tokens of the user's identities that have one, for revocation
    /// when the account is deleted.
    func appleRefreshTokens(userID: String, on connection: any SQLConnection) throws -> [SealedAppleRefreshToken] {
        try connection.query(
            "SELECT id, apple_client_id, apple_refresh_token FROM identities WHERE user_id = ? AND apple_refresh_token IS NOT NULL",
            [.text(userID)]
        ).map { row in
            SealedAppleRefreshToken(
                identityID: try row.string("id"), clientID: try row.string("apple_client_id"), sealed: try row.blob("apple_refresh_token"))
        }
    }
}
