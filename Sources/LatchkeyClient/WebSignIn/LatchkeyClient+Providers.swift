public import Foundation

/// Upstream providers (docs/providers.md): signing in through Google, GitHub or another OpenID
/// Connect provider the server is configured with, linking one to the signed-in account, and
/// listing and removing the account's identities.
///
/// A provider sign-in is a web sign-in (``signInWithWeb(redirectURI:scopes:prompt:loginHint:browser:)``)
/// whose authorize URL carries `provider=<id>`: the server skips its own sign-in page and sends
/// the browser straight to the provider, then back to the app's redirect URI with a code, which
/// is exchanged at `/oauth/token` as every web sign-in's. Nothing of the provider's (its tokens,
/// its client secret) ever reaches the app. Provider ids are checked against `[a-z0-9-]{1,32}`
/// before anything is sent.
extension LatchkeyClient {
    // MARK: Sign-in

    /// Signs in through an upstream provider in one call: the request of
    /// ``beginWebSignIn(redirectURI:scopes:prompt:loginHint:provider:)`` with `provider`, then
    /// `browser`, which opens the request's URL and returns the URL the server sent the browser
    /// back to, then ``completeWebSignIn(_:callbackURL:)``.
    ///
    /// The Apple glue's `signIn(with:redirectURI:presentingFrom:…)` passes an
    /// `ASWebAuthenticationSession` as `browser`; tests and tools pass their own user agent.
    ///
    /// - Parameters:
    ///   - provider: the provider's id in the server's `providers` (`google`, `github`; `sandbox`
    ///     on the development server).
    ///   - redirectURI: a redirect URI registered for the client, exactly as registered.
    ///   - loginHint: passed on to the server.
    /// - Returns: The new session, stored and announced as ``AuthEvent/signedIn(_:)``; the account
    ///   is the one the provider's identity is linked to, or a new one.
    /// - Throws: ``LatchkeyError/Code/invalidConfiguration`` for a provider id that is not
    ///   `[a-z0-9-]{1,32}` (nothing is sent); as ``completeWebSignIn(_:callbackURL:)`` (the
    ///   server's refusal arrives as ``LatchkeyError/Code/webSignIn(error:)``, the user's no as
    ///   ``LatchkeyError/Code/canceled``); and whatever `browser` throws.
    public func signIn(
        with provider: String, redirectURI: String, scopes: [String] = ["openid", "profile", "email"], loginHint: String? = nil,
        browser: @Sendable (WebSignInRequest) async throws -> URL
    ) async throws -> Session {
        let request = try beginWebSignIn(redirectURI: redirectURI, scopes: scopes, prompt: nil, loginHint: loginHint, provider: provider)
        let callbackURL = try await browser(request)
        return try await completeWebSignIn(request, callbackURL: callbackURL)
    }

    /// Links an upstream provider's identity to the signed-in account: a provider sign-in with
    /// `prompt=login`, which the server answers by linking the identity the user proves at the
    /// provider to the account its sign-in page is signed in to in that browser (or, with none,
    /// after asking the user to sign in to it there).
    ///
    /// The answer must be for the signed-in user. Then the new session (signed in moments ago,
    /// as ``unlink(_:)`` wants) replaces the one before it, which is revoked at the server, and
    /// is announced as ``AuthEvent/signedIn(_:)``. An answer for any other account is not kept.
    ///
    /// - Parameters:
    ///   - provider: the provider's id in the server's `providers`.
    ///   - redirectURI: a redirect URI registered for the client, exactly as registered.
    ///   - browser: opens the request's URL and returns the URL the server sent the browser back to.
    /// - Returns: The account's new session; ``identities()`` now lists the provider.
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/notSignedIn`` without a session;
    ///   ``LatchkeyError/Code/invalidConfiguration`` for a provider id that is not
    ///   `[a-z0-9-]{1,32}`; ``LatchkeyError/Code/identityNotLinked`` when the browser ended signed
    ///   in to another account (its tokens are revoked, the signed-in session kept); as
    ///   ``signIn(with:redirectURI:scopes:loginHint:browser:)`` otherwise.
    public func link(
        provider: String, redirectURI: String, scopes: [String] = ["openid", "profile", "email"],
        browser: @Sendable (WebSignInRequest) async throws -> URL
    ) async throws -> Session {
        guard let userID = current()?.session.user.id else { throw LatchkeyError(.notSignedIn, "there is no session to link to; sign in first") }
        let request = try beginWebSignIn(redirectURI: redirectURI, scopes: scopes, prompt: "login", loginHint: nil, provider: provider)
        let callbackURL = try await browser(request)
        return try await completeWebSignIn(request, callbackURL: callbackURL, linkingTo: userID)
    }

    // MARK: Identities

    /// The ways the signed-in account signs in, as `GET /v1/me` lists them: `password`, `apple`,
    /// and one identity per linked provider, its ``Account/Identity/provider`` the provider's id.
    ///
    /// The same list as ``me()``'s ``Account/identities``, whose user it also refreshes.
    ///
    /// - Throws: ``LatchkeyError`` as ``me()``: ``LatchkeyError/Code/notSignedIn``, ….
    public func identities() async throws -> [Account.Identity] {
        try await me().identities
    }

    /// Removes the account's identity at an upstream provider (`DELETE /v1/me/identities/{provider}`):
    /// the provider no longer signs in to this account. The provider's own grant to Latchkey is
    /// the user's to revoke there.
    ///
    /// - Parameter provider: the identity's ``Account/Identity/provider``, a provider id.
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/invalidConfiguration`` for a provider id
    ///   that is not `[a-z0-9-]{1,32}` (nothing is sent); `insufficient_authentication` (403) as
    ///   ``LatchkeyError/Code/server(code:)`` unless this session signed in within the last five
    ///   minutes (sign in again first, e.g. with ``signIn(with:redirectURI:scopes:loginHint:browser:)``);
    ///   `conflict` (409) when it is the account's last way to sign in (no password, passkey, Apple
    ///   ID or other provider left: add one first), as ``removePasskey(_:)``; `not_found` (404)
    ///   when the account has no identity at that provider.
    public func unlink(_ provider: String) async throws {
        try WebSignInRequest.checkProviderID(provider)
        _ = try await authorizedSend("DELETE", "/v1/me/identities/\(provider)")
    }
}
