import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON

/// The front channel of the OAuth provider: `GET /oauth/authorize` and the hosted pages' forms
/// (sign in, sign up, second factor, consent, the email flows of AuthorizeRoutes+Email.swift and
/// the passkeys of AuthorizeRoutes+Passkeys.swift),
/// each of which answers `303` (S23) and checks the whole authorization request again from the
/// hidden `request` field it carries.
struct AuthorizeRoutes {
    let authorization: AuthorizationService
    let browserSessions: BrowserSessionService
    let csrf: CSRFProtection
    /// `nil` when passwords are off: the sign-in page then offers only Sign in with Apple.
    let passwords: PasswordService?
    let factors: FactorService
    /// Sign in with Apple from the sign-in page (AppleWebRoutes.swift); linked when configured.
    let appleWeb: AppleWebSignIn
    /// "Forgot password?" and "Email me a code" (AuthorizeRoutes+Email.swift); `nil` when mail
    /// cannot be delivered, and then the pages do not link them.
    let email: EmailService?
    /// Passkeys on the pages (AuthorizeRoutes+Passkeys.swift); `nil` when passkeys are off, and
    /// the pages offer them only where ``offeredPasskeys`` says.
    let passkeys: PasskeyService?
    /// Upstream providers (AuthorizeRoutes+Providers.swift): a button each on the pages.
    let federation: FederationService
    /// Devices' sign-ins: `/device` and the device consent page (AuthorizeRoutes+Device.swift).
    let devices: DeviceAuthorizationService

    static let signInPath = "/oauth/authorize/sign-in"
    static let signUpPath = "/oauth/authorize/sign-up"
    static let secondFactorPath = "/oauth/authorize/second-factor"
    static let consentPath = "/oauth/authorize/consent"

    func register(on router: Router) {
        let routes = self
        add(.get, "/oauth/authorize", on: router) { request, caller in try await routes.show(request, parameters: request.query, caller: caller) }
        // OpenID Connect Core §3.1.2.1: the authorization endpoint takes POST too, its
        // parameters form-encoded; the answer is the same as for GET.
        add(.post, "/oauth/authorize", on: router) { request, caller in try await routes.show(request, parameters: try request.formBody(), caller: caller) }
        add(.post, Self.signInPath, on: router) { request, caller in try await routes.signIn(request, creating: false, caller: caller) }
        add(.post, Self.signUpPath, on: router) { request, caller in try await routes.signIn(request, creating: true, caller: caller) }
        add(.get, Self.secondFactorPath, on: router) { request, _ in try await routes.secondFactorPage(request) }
        add(.post, Self.secondFactorPath, on: router) { request, caller in try await routes.secondFactor(request, caller: caller) }
        add(.post, Self.consentPath, on: router) { request, caller in try await routes.consent(request, caller: caller) }
        add(.get, Self.appleStartPath, on: router) { request, _ in try await routes.appleStart(request) }
        add(.post, AppleWebSignIn.callbackPath, on: router) { request, caller in try await routes.appleCallback(request, caller: caller) }
        add(.get, FederationService.callbackPath("{id}"), on: router) { request, caller in try await routes.providerCallback(request, caller: caller) }
        add(.get, Self.logoutPath, on: router) { request, caller in try await routes.logout(request, parameters: request.query, posted: false, caller: caller) }
        add(.post, Self.logoutPath, on: router) { request, caller in try await routes.logout(request, parameters: try request.formBody(), posted: true, caller: caller) }
        registerEmailFlows(on: router)
        registerPasskeyForms(on: router)
        registerDevicePages(on: router)
    }

    /// Adds a front-channel route whose ``AuthorizationFailure``, wherever it is thrown, becomes
    /// the answer it names: the error page, or the error sent back to the client. The handler
    /// gets who sent the request from the request's ``LatchkeyContext``.
    func add(
        _ method: HTTPMethod, _ path: String, on router: Router,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse
    ) {
        let routes = self
        router.group("", context: LatchkeyContext.self).on(method, path) { request, context in
            do {
                return try await handler(request, context.caller)
            } catch let failure as AuthorizationFailure {
                return routes.respond(failure)
            }
        }
    }

    // MARK: Logout

    static let logoutPath = "/oauth/logout"

    /// RP-initiated logout: ends the browser session, then back to the client or the
    /// signed-out page; or first the page that asks the user, whose form posts back here.
    func logout(_ request: HTTPRequest, parameters: [String: String], posted: Bool, caller: RequestContext) async throws -> HTTPResponse {
        let browserSession = try await currentBrowserSession(request)
        // Only the confirmation page's own form, posted with its token, says the user asked
        // here (S29); a GET never does, so a token in a URL counts for nothing.
        let confirmed = posted && browserSession.map { csrf.verify(parameters[HostedForm.csrfFieldName] ?? "", binding: $0.id) } == true
        let outcome = try await authorization.logout(
            parameters, browserToken: request.browserSessionToken, browserSession: browserSession, confirmed: confirmed,
            context: caller)
        var response: HTTPResponse
        switch outcome {
        case .confirm(let session, let carried):
            let form = HostedForm(
                action: Self.logoutPath, csrfToken: csrf.token(binding: session.id),
                hidden: carried.sorted { $0.key < $1.key }.map { HiddenField(name: $0.key, value: $0.value) })
            // Still signed in: the cookie stays.
            return .page(SignOutPage(form: form).render())
        case .redirect(let uri, let state):
            response = .seeOther(uri, query: state.map { [("state", $0)] } ?? [])
        case .signedOut:
            response = .page(SignedOutPage(returnLink: nil).render())
        }
        response.clearBrowserSessionCookie()
        return response
    }

    // MARK: The authorization endpoint

    /// Checks the request and shows what it needs next: a hosted page, or the answer to the client.
    func show(_ request: HTTPRequest, parameters: [String: String], caller: RequestContext) async throws -> HTTPResponse {
        let authorizationRequest = try await authorization.check(parameters)
        let browserSession = try await currentBrowserSession(request)
        // A browser back from signing in to the account an upstream identity waits for.
        let linkSpent = try await completePendingLink(request, browserSession: browserSession, caller: caller)
        var response = try await next(request, authorizationRequest, browserSession: browserSession, caller: caller)
        if linkSpent { response.clearPendingLinkCookie() }
        return response
    }

    /// What an authorization request needs next: a hosted page, an upstream, or the answer.
    private func next(
        _ request: HTTPRequest, _ authorizationRequest: AuthorizationRequest, browserSession: BrowserSession?, caller: RequestContext
    ) async throws -> HTTPResponse {
        let flash = HostedFlash(request)
        var response: HTTPResponse
        let step = try await authorization.next(authorizationRequest, browserSession: browserSession, context: caller)
        switch step {
        case .respond(let answer):
            response = respond(answer)
        case .signIn, .signUp:
            if let provider = authorizationRequest.parameters["provider"] { return await providerStart(provider, authorizationRequest) }
            let creating = authorizationRequest.prompts.contains(.create) || flash?.page == "sign_up"
            let (token, binding) = preSessionBinding(request)
            let form = HostedForm(
                action: creating ? Self.signUpPath : Self.signInPath, csrfToken: csrf.token(binding: binding),
                hidden: [HiddenField(name: "request", value: Self.encode(authorizationRequest.parameters))])
            let username = flash?.username ?? authorizationRequest.loginHint ?? ""
            let clientName = authorizationRequest.client.name
            let html: HTML
            var passkey: PasskeyForm?
            if creating {
                var page = SignUpPage(
                    clientName: clientName, form: form, username: username, error: flash?.error,
                    signInLink: Self.authorizeURL(authorizationRequest.parameters.removing(prompt: .create)),
                    emailCodeLink: emailFlowLink(.signIn, authorizationRequest.parameters.adding(prompt: .create)))
                passkey = await passkeySignUpForm(authorizationRequest.parameters, loginHint: authorizationRequest.loginHint, csrfToken: form.csrfToken)
                page.passkey = passkey
                page.providers = providerButtons(authorizationRequest.parameters)
                html = page.render()
            } else {
                var page = SignInPage(
                    clientName: clientName, form: form, username: username, error: flash?.error,
                    signUpLink: passwords == nil ? nil : Self.authorizeURL(authorizationRequest.parameters.adding(prompt: .create)),
                    appleLink: appleWeb.isConfigured ? Self.appleStartPath + "?" + Self.encode(authorizationRequest.parameters) : nil,
                    forgotPasswordLink: emailFlowLink(.reset, authorizationRequest.parameters),
                    emailCodeLink: emailFlowLink(.signIn, authorizationRequest.parameters.removing(prompt: .create)))
                passkey = await passkeySignInForm(authorizationRequest.parameters, csrfToken: form.csrfToken)
                page.passkey = passkey
                page.providers = providerButtons(authorizationRequest.parameters)
                html = page.render()
            }
            response = .page(html)
            if passkey != nil { response.allowPasskeyScript() }
            if let token { try response.setPreSessionCSRFCookie(token) }
        case .consent, .deviceConsent:
            guard let browserSession else { return respond(.untrusted("The sign-in ended; start again from the application.")) }
            let form = HostedForm(
                action: Self.consentPath, csrfToken: csrf.token(binding: browserSession.id),
                hidden: [HiddenField(name: "request", value: Self.encode(authorizationRequest.parameters))])
            let (name, scopes) = (authorizationRequest.client.name, authorizationRequest.scopes)
            response = .page(
                step == .deviceConsent
                    ? DeviceConsentPage(clientName: name, scopes: scopes, form: form).render()
                    : ConsentPage(clientName: name, scopes: scopes, form: form).render())
        }
        if flash != nil { HostedFlash.clear(on: &response) }
        return response
    }

    // MARK: Forms

    /// The sign-in and sign-up forms: on success a browser session and back to the
    /// authorization endpoint; a second factor goes to its page; a refusal goes back to the
    /// form with the reason and the username kept.
    func signIn(_ request: HTTPRequest, creating: Bool, caller context: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        let back = Self.authorizeURL(authorizationRequest.parameters)
        let username = String((form["username"] ?? "").prefix(256))
        let page = creating ? "sign_up" : "sign_in"
        guard preSessionFormIsGenuine(request, form) else {
            return HostedFlash(page: page, error: "This page had expired. Please try again.", username: username).redirect(to: back)
        }
        guard let passwords else { return respond(.untrusted("Passwords are not enabled on this server.")) }
        let password = form["password"] ?? ""
        // The browser session this sign-in replaces (another user's, or one too old for
        // prompt=login or max_age) ends with it.
        let target = SignInTarget.browser(replacing: request.browserSessionToken)
        do {
            let signedIn =
                creating
                ? try await passwords.signUp(username: username, password: password, givenName: nil, familyName: nil, context: context, target: target)
                : try await passwords.logIn(username: username, password: password, context: context, target: target)
            return try signedInResponse(signedIn, next: authorizationRequest)
        } catch let error as AuthError {
            if let response = Self.secondFactorPage(after: error, authorizationRequest.parameters) { return response }
            return HostedFlash(page: page, error: Self.sentence(for: error, creating: creating), username: username).redirect(to: back)
        }
    }

    /// The second-factor page, for a sign-in that proved its first factor.
    func secondFactorPage(_ request: HTTPRequest) async throws -> HTTPResponse {
        let authorizationRequest = try await authorization.check(request.query)
        guard let mfaToken = HostedFlash.mfaToken(from: request) else { return .seeOther(Self.authorizeURL(authorizationRequest.parameters)) }
        let (token, binding) = preSessionBinding(request)
        let form = HostedForm(
            action: Self.secondFactorPath, csrfToken: csrf.token(binding: binding),
            hidden: [HiddenField(name: "request", value: Self.encode(authorizationRequest.parameters))])
        let flash = HostedFlash(request)
        var page = SecondFactorPage(form: form, error: flash?.error)
        page.passkey = await passkeySecondFactorForm(authorizationRequest.parameters, mfaToken: mfaToken, csrfToken: form.csrfToken)
        var response = try preSessionPage(page.render(), newCSRFCookie: token, flashShown: flash != nil)
        if page.passkey != nil { response.allowPasskeyScript() }
        return response
    }

    /// A TOTP code or a recovery code for the pending sign-in.
    func secondFactor(_ request: HTTPRequest, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        let again = Self.secondFactorPath + "?" + Self.encode(authorizationRequest.parameters)
        guard preSessionFormIsGenuine(request, form) else {
            return HostedFlash(page: "second_factor", error: "This page had expired. Please try again.", username: nil).redirect(to: again)
        }
        guard let mfaToken = HostedFlash.mfaToken(from: request) else { return .seeOther(Self.authorizeURL(authorizationRequest.parameters)) }
        let code = (form["code"] ?? "").filter { !$0.isWhitespace }
        let proof: MFAProof = code.count == 6 && code.allSatisfy { $0.isASCII && $0.isNumber } ? .totp(code) : .recoveryCode(code)
        return try await completeSecondFactor(
            proof, mfaToken: mfaToken, request: request, authorizationRequest, caller: caller,
            ended: { $0.code == .invalidGrant && $0.reason != .invalidCode }, sentence: { Self.sentence(for: $0, creating: false) })
    }

    /// Completes the pending sign-in of `mfaToken` with `proof`, and the authorization goes on. A
    /// refusal that `ended` the pending sign-in (expired, too many wrong tries) starts it again
    /// from the sign-in page; any other shows the second-factor page again with its `sentence`.
    func completeSecondFactor(
        _ proof: MFAProof, mfaToken: String, request: HTTPRequest, _ authorizationRequest: AuthorizationRequest, caller: RequestContext,
        ended: (AuthError) -> Bool, sentence: (AuthError) -> String
    ) async throws -> HTTPResponse {
        do {
            let signedIn = try await factors.mfaVerify(
                token: mfaToken, proof: proof, context: caller, target: .browser(replacing: request.browserSessionToken))
            var response = try signedInResponse(signedIn, next: authorizationRequest)
            HostedFlash.clearMFAToken(on: &response)
            return response
        } catch let error as AuthError where error.code == .accountDisabled {
            // Disabled after the first factor held: the pending sign-in ends, and the page says why.
            var response = HostedFlash(page: "sign_in", error: Self.accountDisabledSentence, username: nil)
                .redirect(to: Self.authorizeURL(authorizationRequest.parameters))
            HostedFlash.clearMFAToken(on: &response)
            return response
        } catch let error as AuthError where error.code == .invalidGrant || error.code == .rateLimited || error.code == .notFound {
            guard ended(error) else {
                let again = Self.secondFactorPath + "?" + Self.encode(authorizationRequest.parameters)
                return HostedFlash(page: "second_factor", error: sentence(error), username: nil).redirect(to: again)
            }
            var response = HostedFlash(page: "sign_in", error: "The sign-in took too long or had too many wrong attempts. Please sign in again.", username: nil)
                .redirect(to: Self.authorizeURL(authorizationRequest.parameters))
            HostedFlash.clearMFAToken(on: &response)
            return response
        }
    }

    /// The second-factor page, when a first factor's refusal is `mfa_required`: its token goes
    /// into the page's cookie.
    static func secondFactorPage(after error: AuthError, _ parameters: [String: String]) -> HTTPResponse? {
        guard error.code == .secondFactorRequired, let token = error.secondFactor?.token else { return nil }
        var response = HTTPResponse.seeOther(secondFactorPath + "?" + encode(parameters))
        HostedFlash.setMFAToken(token, on: &response)
        return response
    }

    /// The consent page's answer.
    func consent(_ request: HTTPRequest, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        guard let browserSession = try await currentBrowserSession(request),
            csrf.verify(form["csrf_token"] ?? "", binding: browserSession.id)
        else { return .seeOther(Self.authorizeURL(authorizationRequest.parameters)) }
        if let id = authorizationRequest.deviceAuthorizationID {
            return try await deviceDecision(allow: form["decision"] == "allow", id: id, browserSession: browserSession, caller: caller)
        }
        let answer = try await authorization.decide(
            allow: form["decision"] == "allow", request: authorizationRequest, browserSession: browserSession, context: caller)
        return respond(answer)
    }

    // MARK: Helpers

    /// The authorization request a form carries, checked again.
    func resumed(_ form: [String: String]) async throws -> AuthorizationRequest {
        guard var encoded = form["request"], let parameters = encoded.withUTF8({ PercentEncoding.parseForm(UnsafeRawBufferPointer($0)) })
        else { throw AuthorizationFailure.untrusted("The form did not carry its authorization request; start again from the application.") }
        return try await authorization.check(parameters)
    }

    /// The browser session of the request's cookie, if it is live.
    func currentBrowserSession(_ request: HTTPRequest) async throws -> BrowserSession? {
        guard let token = request.browserSessionToken else { return nil }
        return try await browserSessions.current(token: token)
    }

    /// The CSRF binding of a page shown before sign-in: the pre-session cookie, and a new one
    /// to set when the browser has none.
    func preSessionBinding(_ request: HTTPRequest) -> (newCookie: String?, binding: String) {
        if let existing = request.preSessionCSRFValue { return (nil, existing) }
        let fresh = BrowserCookies.newCSRFValue()
        return (fresh, fresh)
    }

    /// Whether a form posted before sign-in carries the CSRF token bound to this browser's
    /// pre-session cookie (S29).
    func preSessionFormIsGenuine(_ request: HTTPRequest, _ form: [String: String]) -> Bool {
        guard let binding = request.preSessionCSRFValue else { return false }
        return csrf.verify(form[HostedForm.csrfFieldName] ?? "", binding: binding)
    }

    /// A page shown before sign-in: the pre-session cookie its form's token is bound to, set
    /// when the browser had none, and the flash cleared once the page has shown it.
    func preSessionPage(_ html: HTML, newCSRFCookie token: String?, flashShown: Bool) throws -> HTTPResponse {
        var response = HTTPResponse.page(html)
        if let token { try response.setPreSessionCSRFCookie(token) }
        if flashShown { HostedFlash.clear(on: &response) }
        return response
    }

    /// A completed sign-in: the browser session cookie, and back to the authorization endpoint,
    /// whose `prompt=login` and `max_age` that sign-in has satisfied.
    func signedInResponse(_ signedIn: SignedIn, next request: AuthorizationRequest) throws -> HTTPResponse {
        var response = HTTPResponse.seeOther(Self.authorizeURL(request.afterSignIn))
        if case .browser(let session, let token) = signedIn {
            try response.setBrowserSessionCookie(token, maxAge: Int(session.expiresAt.timeIntervalSince(session.createdAt)))
        }
        return response
    }

    /// The answer to the client (303 to its redirect URI, or a form posted to it) or, when the
    /// client or redirect URI cannot be trusted, an error page (S20).
    func respond(_ failure: AuthorizationFailure) -> HTTPResponse {
        switch failure {
        case .untrusted(let message): .page(ErrorPage(title: "This sign-in link is not valid", message: message).render(), status: 400)
        case .toClient(let answer): respond(answer)
        }
    }

    func respond(_ answer: AuthorizationResponse) -> HTTPResponse {
        // A device's sign-in has no redirect URI: a refusal meant for the client is said on a page.
        if answer.redirectURI.isEmpty {
            let message = if case .error(_, let description) = answer.result { description } else { "" }
            return .page(ErrorPage(title: "This sign-in cannot go on", message: message + ". Start again on your device.").render(), status: 400)
        }
        let parameters = answer.parameters(issuer: authorization.issuer)
        switch answer.mode {
        case .query:
            return .seeOther(answer.redirectURI, query: parameters.map { ($0.name, $0.value) })
        case .formPost:
            return .formPost(to: answer.redirectURI, parameters.map { HiddenField(name: $0.name, value: $0.value) })
        }
    }

    /// A refusal in words for the page.
    static func sentence(for error: AuthError, creating: Bool) -> String {
        switch error.code {
        case .invalidCredentials: "The username or password is not right."
        case .rateLimited: "Too many attempts. Please wait \(max(1, (error.retryAfter ?? 60) / 60)) minutes and try again."
        case .overloaded, .unavailable: "The server is busy. Please try again in a moment."
        case .conflict: "That username is taken. Please choose another."
        case .invalidGrant: "That code is not right. Please try again."
        case .invalidRequest: creating ? "The password cannot be used: \(error.message)." : "Please enter a username and a password."
        case .accountDisabled: accountDisabledSentence
        default: "Something went wrong. Please try again."
        }
    }

    /// What the pages say to a disabled account's sign-in (S50).
    static let accountDisabledSentence = "This account is disabled. Please contact the service's support."

    /// The error page of a disabled account's sign-in that has no form to go back to (an
    /// upstream provider's or Apple's answer): 403, as the API's `account_disabled`.
    static func accountDisabledPage() -> HTTPResponse {
        .page(ErrorPage(title: "This account is disabled", message: accountDisabledSentence).render(), status: 403)
    }

    static func encode(_ parameters: [String: String]) -> String { PercentEncoding.encodeForm(parameters) }

    static func authorizeURL(_ parameters: [String: String]) -> String { "/oauth/authorize?" + encode(parameters) }
}

extension [String: String] {
    /// The parameters with `prompt` holding `prompt` too.
    fileprivate func adding(prompt: AuthorizationRequest.Prompt) -> [String: String] {
        var copy = self
        let values = Set((self["prompt"] ?? "").split(separator: " ").map(String.init)).union([prompt.rawValue])
        copy["prompt"] = values.sorted().joined(separator: " ")
        return copy
    }

    /// The parameters without `prompt` value `prompt`.
    fileprivate func removing(prompt: AuthorizationRequest.Prompt) -> [String: String] {
        var copy = self
        let values = Set((self["prompt"] ?? "").split(separator: " ").map(String.init)).subtracting([prompt.rawValue])
        copy["prompt"] = values.isEmpty ? nil : values.sorted().joined(separator: " ")
        return copy
    }
}
