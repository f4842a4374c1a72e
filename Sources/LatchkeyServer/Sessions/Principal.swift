/// The user and session behind a valid access token: who a signed-in request acts for.
package struct Principal: Sendable {
    package var userID: String
    package var sessionID: String
    package var amr: [String]
    /// The OAuth client the token was issued to, `nil` for a `/v1` sign-in.
    package var clientID: String?
    /// The OAuth scopes granted, `nil` for a `/v1` sign-in (which has no scopes, only the API).
    package var scopes: Set<String>?
}
