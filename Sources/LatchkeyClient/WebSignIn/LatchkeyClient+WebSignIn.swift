public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON
import LatchkeyWire

extension LatchkeyClient {
    /// Starts a web sign-in (OAuth 2.1 authorization code with PKCE `S256`, OpenID Connect) against
    /// the server's `/oauth/authorize`, for the client in ``LatchkeyConfiguration/clientID``.
    ///
    /// Open ``WebSignInRequest/url`` in a browser (on Apple platforms, `signInWithWeb(redirectURI:anchor:…)`
    /// does), then hand the URL the browser ends at to ``completeWebSignIn(_:callbackURL:)``.
    ///
    /// - Parameters:
    ///   - redirectURI: one of the client's registered redirect URIs, exactly as registered.
    ///   - prompt: `login`, `none`, `consent` or `create`, passed on as it is.
    ///   - loginHint: the username to fill in on the sign-in page.
    ///   - provider: an upstream provider's id from the server's `providers` (`google`, `github`,
    ///     `sandbox` in development mode): the server skips its sign-in page and sends the browser
    ///     straight to that provider. `nil` (the default) shows the sign-in page, with a "Continue
    ///     with …" button per provider.
    /// - Throws: ``LatchkeyError/Code/invalidConfiguration`` without a `clientID`, for a redirect
    ///   URI that is not an absolute URI without query and fragment, or for a provider id that is
    ///   not `[a-z0-9-]{1,32}`.
    public func beginWebSignIn(
        redirectURI: String, scopes: [String] = ["openid", "profile", "email"], prompt: String? = nil, loginHint: String? = nil,
        provider: String? = nil
    ) throws -> WebSignInRequest {
        var generator = SystemRandomNumberGenerator()
        return try beginWebSignIn(
            redirectURI: redirectURI, scopes: scopes, prompt: prompt, loginHint: loginHint, provider: provider, using: &generator)
    }

    /// ``beginWebSignIn(redirectURI:scopes:prompt:loginHint:provider:)`` with the random values
    /// from `generator`, which must be cryptographically secure outside tests.
    func beginWebSignIn(
        redirectURI: String, scopes: [String], prompt: String?, loginHint: String?, provider: String? = nil,
        using generator: inout some RandomNumberGenerator
    ) throws -> WebSignInRequest {
        guard let clientID = configuration.clientID, !clientID.isEmpty else {
            throw LatchkeyError(.invalidConfiguration, "web sign-in needs LatchkeyConfiguration.clientID")
        }
        return try WebSignInRequest(
            authorizeURL: api.url("/oauth/authorize"), issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes,
            prompt: prompt, loginHint: loginHint, provider: provider, using: &generator)
    }

    /// Finishes a web sign-in with the URL the browser was sent back to.
    ///
    /// The callback is checked before anything is sent: it must be to the request's redirect URI,
    /// repeat no parameter, carry the server's `iss` and the request's `state`, and hold a code.
    /// Then the code is exchanged at `/oauth/token` with the PKCE verifier, the user is read with
    /// `GET /v1/me`, and the session is stored and announced as ``AuthEvent/signedIn(_:)``, as
    /// every other sign-in. Its refresh token then refreshes through ``refresh()`` as usual. New
    /// tokens that cannot be kept (a response that fails the checks, an unreadable user) are
    /// revoked at the server, best effort.
    ///
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/invalidCallback`` for a callback that is
    ///   not this request's answer; ``LatchkeyError/Code/canceled`` (reason `access_denied`) when
    ///   the user declined; ``LatchkeyError/Code/webSignIn(error:)`` for another error answer
    ///   (`login_required`, `invalid_scope`, …); ``LatchkeyError/Code/server(code:)`` when the
    ///   token endpoint refuses the code (`invalid_grant`, …); ``LatchkeyError/Code/network``.
    public func completeWebSignIn(_ request: WebSignInRequest, callbackURL: URL) async throws -> Session {
        try await completeWebSignIn(request, callbackURL: callbackURL, linkingTo: nil)
    }

    /// ``completeWebSignIn(_:callbackURL:)``; with `linkingTo`, the user id the answer must be
    /// for (a link of an upstream identity to the signed-in account). An answer for another user
    /// is not stored: its refresh token is revoked and ``LatchkeyError/Code/identityNotLinked``
    /// thrown, the signed-in session kept. When it is that user, the new session replaces the
    /// one before it, whose refresh token is revoked.
    func completeWebSignIn(_ request: WebSignInRequest, callbackURL: URL, linkingTo userID: String?) async throws -> Session {
        let code = try request.code(from: callbackURL)
        let issuedAt = configuration.now()
        let response = try await exchange(code, for: request)
        return try await land(response, issuedAt: issuedAt, issuer: request.issuer, clientID: request.clientID, nonce: request.nonce, linkingTo: userID)
    }

    /// Checks a token response of `/oauth/token` (``WebSignInTokens``), reads the user with
    /// `GET /v1/me`, and stores the session and announces it as every other sign-in does.
    /// Tokens this client will not store are revoked rather than left live at the server with
    /// nobody holding them: a response that fails the checks, or one whose user cannot be read.
    ///
    /// - Parameters:
    ///   - nonce: the nonce the ID token must echo; `nil` for a grant without one (a device's).
    ///   - userID: as in ``completeWebSignIn(_:callbackURL:linkingTo:)``.
    func land(
        _ response: WireOAuthTokenResponse, issuedAt: Date, issuer: String, clientID: String, nonce: String?, linkingTo userID: String?
    ) async throws -> Session {
        let tokens: WebSignInTokens
        do {
            tokens = try WebSignInTokens(response, issuer: issuer, clientID: clientID, nonce: nonce)
        } catch {
            if let refreshToken = response.refreshToken { await revoke(refreshToken) }
            throw error
        }
        let account: WireAccount
        do {
            account = try await api.call("GET", "/v1/me", bearer: tokens.accessToken, as: WireAccount.self)
        } catch {
            await revoke(tokens.refreshToken)
            throw (error as? ServerAPI.Failure)?.error ?? error
        }
        guard account.user.id == tokens.subject else {
            await revoke(tokens.refreshToken)
            throw LatchkeyError(.invalidResponse, "GET /v1/me answered another user than the access token's sub")
        }
        if let userID, account.user.id != userID {
            await revoke(tokens.refreshToken)
            throw LatchkeyError(
                .identityNotLinked, "the provider's sign-in ended in another account than the signed-in one; nothing was linked")
        }
        // A link replaces the session it started from (keeping its Apple user for the launch
        // check); the one before is ended at the server.
        let previous = userID == nil ? nil : current()
        let session = Session(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken,
            expiresAt: issuedAt.addingTimeInterval(TimeInterval(response.expiresIn)), sessionID: tokens.sessionID,
            user: Account.User(account.user))
        let stored = signedIn(session, appleUserID: previous?.appleUserID).session
        if let replaced = previous?.session.refreshToken, replaced != stored.refreshToken { await revoke(replaced) }
        return stored
    }

    /// A whole web sign-in in one call: ``beginWebSignIn(redirectURI:scopes:prompt:loginHint:provider:)``,
    /// then `browser`, which opens the request's URL and returns the URL the server sent the
    /// browser back to, then ``completeWebSignIn(_:callbackURL:)``.
    ///
    /// The Apple glue passes an `ASWebAuthenticationSession` as `browser`; tests and tools pass
    /// their own user agent.
    ///
    /// - Throws: as ``beginWebSignIn(redirectURI:scopes:prompt:loginHint:provider:)`` and
    ///   ``completeWebSignIn(_:callbackURL:)``, and whatever `browser` throws.
    public func signInWithWeb(
        redirectURI: String, scopes: [String] = ["openid", "profile", "email"], prompt: String? = nil, loginHint: String? = nil,
        browser: @Sendable (WebSignInRequest) async throws -> URL
    ) async throws -> Session {
        let request = try beginWebSignIn(redirectURI: redirectURI, scopes: scopes, prompt: prompt, loginHint: loginHint)
        let callbackURL = try await browser(request)
        return try await completeWebSignIn(request, callbackURL: callbackURL)
    }

    /// The server's issuer: its URL without a trailing slash.
    nonisolated var issuer: String {
        var text = configuration.baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// Best effort: revokes a refresh token this client will not keep (RFC 7009).
    private func revoke(_ refreshToken: String) async {
        _ = try? await api.send("POST", "/v1/revoke", body: WireRevokeRequest(token: refreshToken, tokenTypeHint: "refresh_token"))
    }

    /// `POST /oauth/token` with `grant_type=authorization_code`, form-encoded, as a public client.
    private func exchange(_ code: String, for request: WebSignInRequest) async throws -> WireOAuthTokenResponse {
        try await postForm(
            "/oauth/token",
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", request.redirectURI),
                ("client_id", request.clientID), ("code_verifier", request.verifier),
            ], as: WireOAuthTokenResponse.self)
    }

    /// Posts `fields` form-encoded to an OAuth endpoint (as a public client) and reads the answer.
    /// With App Attest set up, a token request (`/oauth/token`) carries an app check token; an
    /// `app_check_failed` answer is sent once more with a new one.
    ///
    /// - Throws: ``LatchkeyError/Code/server(code:)`` with the OAuth error body's `error` (its
    ///   description in the message); ``LatchkeyError/Code/invalidResponse`` for a 200 the wire
    ///   contract does not describe; ``LatchkeyError/Code/network``.
    func postForm<Answer: WireCodable>(_ path: String, _ fields: [(String, String)], as answer: Answer.Type) async throws -> Answer {
        var post = URLRequest(url: api.url(path))
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.setValue("application/json", forHTTPHeaderField: "Accept")
        post.httpBody = Data(FormEncoding.encode(fields).utf8)
        let appCheck = path == "/oauth/token" ? api.appCheck : nil
        var answer: (data: Data, response: HTTPURLResponse, refusal: WireOAuthError?)
        var retried = false
        repeat {
            let token = try await appCheck?.token()
            if let token { post.setValue(token, forHTTPHeaderField: "X-Latchkey-App-Check") }
            let (data, response) = try await api.perform(post)
            answer = (data, response, response.statusCode == 200 ? nil : try? WireOAuthError(parsing: Array(data)))
            guard !retried, let appCheck, let token, answer.refusal?.error == WireErrorCode.appCheckFailed.rawValue else { break }
            await appCheck.discard(token)
            retried = true
        } while true
        let (data, response) = (answer.data, answer.response)
        guard response.statusCode == 200 else {
            guard let body = answer.refusal else {
                let code = response.statusCode >= 500 ? "server_error" : "http_\(response.statusCode)"
                throw LatchkeyError(.server(code: code), "\(path) answered HTTP \(response.statusCode)", status: response.statusCode)
            }
            let message = body.errorDescription.map { "\(path) refused: " + $0 } ?? "\(path) answered \(body.error)"
            throw LatchkeyError(.server(code: body.error), message, status: response.statusCode)
        }
        do {
            return try Answer(parsing: Array(data))
        } catch {
            throw LatchkeyError(.invalidResponse, "\(path) answered a body the wire contract does not describe: \(error)")
        }
    }
}

/// What a web sign-in's token response must hold, checked: a Bearer access token whose claims
/// name the session (`sid`) and the user (`sub`), a refresh token, and, when there is an ID
/// token, one for this client, from this issuer, echoing this request's nonce.
struct WebSignInTokens {
    var accessToken: String
    var refreshToken: String
    var sessionID: String
    var subject: String

    /// - Parameter nonce: what the ID token must echo; `nil` for a grant without a nonce.
    /// - Throws: ``LatchkeyError/Code/invalidResponse`` naming the first thing missing or wrong.
    init(_ response: WireOAuthTokenResponse, issuer: String, clientID: String, nonce: String?) throws {
        guard response.tokenType.lowercased() == "bearer" else {
            throw LatchkeyError(.invalidResponse, "/oauth/token answered token_type \(response.tokenType), not Bearer")
        }
        guard let refreshToken = response.refreshToken, !refreshToken.isEmpty else {
            throw LatchkeyError(
                .invalidResponse, "/oauth/token answered no refresh token; register the app as a first-party native client")
        }
        guard let claims = JWTClaims.unverifiedPayload(of: response.accessToken), let sessionID = claims["sid"]?.stringValue,
            let subject = claims["sub"]?.stringValue
        else {
            throw LatchkeyError(.invalidResponse, "the access token is not a JWT with sid and sub")
        }
        if let idToken = response.idToken {
            guard let id = JWTClaims.unverifiedPayload(of: idToken) else { throw LatchkeyError(.invalidResponse, "the ID token is not a JWT") }
            let audience = id["aud"]?.stringValue.map { [$0] } ?? id["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard id["iss"]?.stringValue == issuer, audience.contains(clientID), id["sub"]?.stringValue == subject else {
                throw LatchkeyError(.invalidResponse, "the ID token is not for this client and user from this server")
            }
            if let nonce {
                guard let echoed = id["nonce"]?.stringValue, WebSignInRequest.constantTimeEqual(echoed, nonce) else {
                    throw LatchkeyError(.invalidResponse, "the ID token does not echo this request's nonce")
                }
            }
        }
        self.accessToken = response.accessToken
        self.refreshToken = refreshToken
        self.sessionID = sessionID
        self.subject = subject
    }
}
