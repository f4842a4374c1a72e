import FoundationEssentials
import LatchkeyHTTP

/// Sign-in through upstream providers (``FederationService``):
///
/// - `GET /oauth/authorize?…&provider=ID`, when the request needs a sign-in: the binding cookie,
///   and 303 to the upstream. The sign-in and sign-up pages link each provider that way.
/// - `GET /oauth/providers/{id}/callback`: the upstream's answer, checked in order (state, an
///   upstream `error=`, the RFC 9207 `iss`, the code exchange, the ID token); a browser session
///   and back to the authorization endpoint, the second-factor page, the sign-in page to link an
///   existing account, the upstream's error sent to the app, or an error page.
extension AuthorizeRoutes {
    /// The binding cookie of a sign-in at an upstream: `SameSite=Lax`, which the upstream's
    /// redirect back (a top-level GET) carries; ten minutes; deleted by the callback.
    static let providerCookieName = "__Host-latchkey_provider"
    /// An upstream identity waiting for the user to sign in to the account that has its email
    /// (``PendingLink``, sealed).
    static let linkCookieName = "__Host-latchkey_link"

    /// The sign-in and sign-up pages' "Continue with …" buttons.
    func providerButtons(_ parameters: [String: String]) -> [ProviderButton] {
        federation.providers.map { provider in
            var linked = parameters
            linked["provider"] = provider.id
            return ProviderButton(link: Self.authorizeURL(linked), name: provider.settings.displayName)
        }
    }

    /// The browser goes to the upstream with a fresh state; an unknown provider is the client's
    /// `invalid_request`.
    func providerStart(_ id: String, _ authorizationRequest: AuthorizationRequest) async -> HTTPResponse {
        guard let provider = federation.provider(id) else {
            return respond(authorizationRequest.error("invalid_request", "the provider parameter names no provider of this server"))
        }
        var parameters = authorizationRequest.parameters
        parameters["provider"] = nil
        let start: FederationService.Start
        do {
            start = try await federation.start(provider, request: Self.encode(parameters), callbackURL: providerCallbackURL(id))
        } catch {
            return providerRefusal(provider, error, retry: authorizationRequest.parameters)
        }
        var response = HTTPResponse.seeOther(start.authorizeURL, query: start.query)
        if let cookie = try? SetCookie(name: Self.providerCookieName, value: start.binding, maxAge: Int(ProviderState.lifetime)) {
            response.setCookie(cookie)
        }
        return response
    }

    /// The upstream's redirect back.
    func providerCallback(_ request: HTTPRequest, caller context: RequestContext) async throws -> HTTPResponse {
        guard let provider = request.pathParameters["id"].flatMap(federation.provider) else {
            return .page(ErrorPage(title: "Unknown provider", message: "This server has no such sign-in provider.").render(), status: 404)
        }
        let query = request.query
        if let error = query["error"], (query["state"] ?? "").isEmpty {
            // Some providers drop `state` from an error (RFC 6749 §4.1.2.1 says they must not):
            // no app can be told, but the person is, and the audit names the upstream's error.
            let code = await recordUpstreamError(error, provider: provider, context: context)
            let name = provider.settings.displayName
            let message = code == "access_denied"
                ? "Sign-in with \(name) was cancelled. Go back to the application to try again."
                : "\(name) answered with an error (\(code)). Go back to the application to try again."
            return .page(ErrorPage(title: "Sign-in with \(name) did not complete", message: message).render(), status: 400)
        }
        let state: ProviderState.Resumed
        do {
            state = try federation.resume(query["state"] ?? "", provider: provider, binding: request.cookies[Self.providerCookieName])
            try await federation.spend(state)
        } catch let failure as ProviderSignInFailure {
            await federation.recordFailure(failure, provider: provider.id, context: context)
            // The cookie stays: a forged or replayed answer must not end the browser's own sign-in.
            return providerRefusal(provider, failure, retry: nil, clearingCookie: false)
        }
        let authorizationRequest = try await resumed(["request": state.request])
        var parameters = authorizationRequest.parameters
        parameters["provider"] = provider.id
        if let error = query["error"] {
            let code = await recordUpstreamError(error, provider: provider, context: context)
            var response = respond(authorizationRequest.error(code.isEmpty ? "server_error" : code, "\(provider.settings.displayName) answered \(code)"))
            response.clearProviderCookie()
            return response
        }
        var response: HTTPResponse
        do {
            guard let code = query["code"], !code.isEmpty, code.utf8.count <= 4096 else {
                throw ProviderSignInFailure(.exchangeFailed, "the answer carried no code")
            }
            let signedIn = try await federation.signIn(
                provider, resumed: state, callback: .init(code: code, issuer: query["iss"]), callbackURL: providerCallbackURL(provider.id),
                browserSession: try await currentBrowserSession(request), replacing: request.browserSessionToken, context: context)
            response = try signedInResponse(signedIn, next: authorizationRequest)
        } catch let failure as ProviderSignInFailure {
            await federation.recordFailure(failure, provider: provider.id, context: context)
            return providerRefusal(provider, failure, retry: parameters)
        } catch let required as FederationService.LinkRequired {
            await federation.recordLinkRequired(provider: provider.id, context: context)
            response = try linkFirst(required.link, provider: provider, authorizationRequest)
        } catch let error as AuthError {
            if let secondFactor = Self.secondFactorPage(after: error, authorizationRequest.parameters) {
                response = secondFactor
            } else if error.code == .accountDisabled {
                response = Self.accountDisabledPage()
            } else if [.unavailable, .overloaded].contains(error.code) {
                return providerRefusal(provider, ProviderSignInFailure(.upstreamUnavailable, error.message), retry: parameters)
            } else {
                return providerRefusal(provider, ProviderSignInFailure(.exchangeFailed, error.message), retry: nil)
            }
        }
        response.clearProviderCookie()
        return response
    }

    /// An account has the upstream's email and may not be linked by it: the sign-in page, asking
    /// the user to sign in to that account, after which ``completePendingLink(_:browserSession:caller:)``
    /// links the identity.
    private func linkFirst(_ link: PendingLink, provider: UpstreamProvider, _ authorizationRequest: AuthorizationRequest) throws -> HTTPResponse {
        var parameters = authorizationRequest.parameters
        parameters["provider"] = nil
        parameters["prompt"] = "login"
        if let email = link.profile.email { parameters["login_hint"] = email }
        let name = provider.settings.displayName
        var response = HostedFlash(
            page: "sign_in", error: "An account with this email already exists. Sign in to it to connect your \(name) account.",
            username: link.profile.email
        ).redirect(to: Self.authorizeURL(parameters))
        response.setCookie(try SetCookie(name: Self.linkCookieName, value: try link.sealed(federation.masterKey), maxAge: Int(PendingLink.lifetime)))
        return response
    }

    /// The authorization endpoint's step for a browser that carries a pending link: once it has
    /// signed in after the link was offered, the identity is linked to that account.
    ///
    /// - Returns: Whether the cookie is spent (linked, expired or not genuine) and goes.
    func completePendingLink(_ request: HTTPRequest, browserSession: BrowserSession?, caller: RequestContext) async throws -> Bool {
        guard let sealed = request.cookies[Self.linkCookieName], !sealed.isEmpty else { return false }
        return try await federation.completeLink(sealed: sealed, browserSession: browserSession, context: caller)
    }

    /// Audits an upstream's `error=` as `upstream_error`; returns the error code as it may be shown
    /// and sent on.
    private func recordUpstreamError(_ error: String, provider: UpstreamProvider, context: RequestContext) async -> String {
        let code = UpstreamClient.code(error)
        await federation.recordFailure(
            ProviderSignInFailure(.upstreamError, "the upstream answered an error", upstreamError: code), provider: provider.id, context: context)
        return code
    }

    private func providerCallbackURL(_ id: String) -> String { authorization.issuer + FederationService.callbackPath(id) }

    /// The error page of a refused upstream sign-in: 503 with `Retry-After` and a link to try
    /// again when the upstream could not be reached, else 400.
    private func providerRefusal(
        _ provider: UpstreamProvider, _ failure: ProviderSignInFailure, retry: [String: String]?, clearingCookie: Bool = true
    ) -> HTTPResponse {
        let name = provider.settings.displayName
        var response: HTTPResponse
        if failure.code == .upstreamUnavailable {
            var page = ErrorPage(title: "\(name) cannot be reached", message: "\(name) did not answer in time. Please try again in a moment.")
            page.retryLink = retry.map(Self.authorizeURL)
            response = .page(page.render(), status: 503)
            response.headers.set("Retry-After", "5")
        } else {
            let message =
                switch failure.code {
                case .stateOtherBrowser: "The answer from \(name) belongs to a sign-in started in another browser. Please start again from the application."
                case .stateExpired: "The sign-in took too long. Please start again from the application."
                case .stateReplayed: "This sign-in was already completed. Please start again from the application."
                default: "The answer from \(name) could not be verified. Please go back to the application and try again."
                }
            response = .page(ErrorPage(title: "Sign-in with \(name) did not complete", message: message).render(), status: 400)
        }
        if clearingCookie { response.clearProviderCookie() }
        return response
    }
}

extension HTTPResponse {
    fileprivate mutating func clearProviderCookie() {
        if let cookie = try? SetCookie.expired(name: AuthorizeRoutes.providerCookieName) { setCookie(cookie) }
    }

    /// Deletes the pending-link cookie.
    mutating func clearPendingLinkCookie() {
        if let cookie = try? SetCookie.expired(name: AuthorizeRoutes.linkCookieName) { setCookie(cookie) }
    }
}
