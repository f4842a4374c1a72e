import LatchkeyHTTP

/// Sign in with Apple from the hosted sign-in page (``AppleWebSignIn``):
///
/// - `GET /oauth/authorize/apple?<request>`: checks the authorization request, sets the
///   binding cookie and sends the browser (303) to Apple's authorize URL.
/// - `POST /oauth/apple/callback`: Apple's form post; checks the state against the cookie,
///   signs in to a browser session (a second factor goes to its page, as the password form
///   does) and 303 back to the authorization endpoint. Anything refused is an error page.
extension AuthorizeRoutes {
    static let appleStartPath = "/oauth/authorize/apple"

    /// The binding cookie of a web sign-in at Apple. `SameSite=None`, unlike the other cookies
    /// of the hosted pages: Apple's form post is a cross-site POST, and a `Lax` cookie would stay
    /// behind. It binds nothing but the state (an HMAC of it), lives ten minutes and is deleted by
    /// the callback, so sending it cross-site gives nothing away (see ``AppleWebSignIn``).
    static let appleCookieName = "__Host-latchkey_apple"

    /// This server's callback, Apple's `redirect_uri`.
    private var appleCallbackURL: String { authorization.issuer + AppleWebSignIn.callbackPath }

    /// The Sign in with Apple link: on to Apple with a fresh state.
    func appleStart(_ request: HTTPRequest) async throws -> HTTPResponse {
        let authorizationRequest = try await authorization.check(request.query)
        let start: AppleWebSignIn.Start
        do {
            start = try appleWeb.start(request: Self.encode(authorizationRequest.parameters), callbackURL: appleCallbackURL)
        } catch {
            return respond(.untrusted("Sign in with Apple is not set up on this server."))
        }
        var response = HTTPResponse.seeOther(start.authorizeURL, query: start.query)
        response.setCookie(
            try SetCookie(name: Self.appleCookieName, value: start.binding, maxAge: Int(AppleWebSignIn.lifetime), sameSite: SetCookie.SameSite.none))
        return response
    }

    /// Apple's form post: `code`, `id_token`, `state`, perhaps `user`; or `error` and `state`
    /// when the user cancelled.
    func appleCallback(_ request: HTTPRequest, caller context: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let binding = request.cookies[Self.appleCookieName].flatMap { $0.isEmpty ? nil : $0 }
        let pending: AppleWebSignIn.Resumed
        do {
            pending = try appleWeb.resume(state: form["state"] ?? "", binding: binding)
        } catch {
            await appleWeb.recordFailure(error, context: context)
            // The cookie stays: a forged post must not end the browser's own sign-in at Apple.
            return appleRefusal(
                "The answer from Apple does not belong to a sign-in started in this browser, or it came too late.", clearingCookie: false)
        }
        let authorizationRequest = try await resumed(["request": pending.request])
        let back = Self.authorizeURL(authorizationRequest.parameters)
        if form["error"] != nil {
            var response = HostedFlash(page: "sign_in", error: "Sign in with Apple was cancelled.", username: nil).redirect(to: back)
            response.clearAppleCookie()
            return response
        }
        guard let identityToken = form["id_token"], !identityToken.isEmpty, let code = form["code"], !code.isEmpty else {
            return appleRefusal("Apple's answer had no identity token or code.")
        }
        do {
            let signedIn = try await appleWeb.signIn(
                .init(identityToken: identityToken, authorizationCode: code, user: form["user"]), resumed: pending,
                callbackURL: appleCallbackURL, replacing: request.browserSessionToken, context: context)
            var response = try signedInResponse(signedIn, next: authorizationRequest)
            response.clearAppleCookie()
            return response
        } catch let error as AuthError {
            if var response = Self.secondFactorPage(after: error, authorizationRequest.parameters) {
                response.clearAppleCookie()
                return response
            }
            switch error.code {
            case .appleUnavailable, .unavailable, .overloaded:
                return appleRefusal("Apple cannot be reached just now. Please try again in a moment.", status: 503)
            case .accountDisabled:
                var response = Self.accountDisabledPage()
                response.clearAppleCookie()
                return response
            default:
                return appleRefusal("Apple's answer could not be verified. Please go back to the application and try again.")
            }
        }
    }

    /// The error page of a refused callback; the binding cookie goes with it unless told otherwise.
    private func appleRefusal(_ message: String, status: Int = 400, clearingCookie: Bool = true) -> HTTPResponse {
        var response = HTTPResponse.page(ErrorPage(title: "Sign in with Apple did not complete", message: message).render(), status: status)
        if clearingCookie { response.clearAppleCookie() }
        return response
    }
}

extension HTTPResponse {
    /// Deletes the web sign-in's binding cookie.
    fileprivate mutating func clearAppleCookie() {
        if let cookie = try? SetCookie.expired(name: AuthorizeRoutes.appleCookieName, sameSite: SetCookie.SameSite.none) { setCookie(cookie) }
    }
}
