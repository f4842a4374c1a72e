import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON

/// "Forgot password?" and "Email me a code" on the hosted pages, inside an authorization: two
/// pages each, over ``EmailService`` (docs/reference.md, "Email"), which keeps the rules (no
/// enumeration, the request limits, five tries per code, the password rules) and writes the
/// audit entries.
///
/// - `GET /oauth/authorize/password-reset` (or `/email-sign-in`) asks for the address; its form
///   posts there, starts the flow, keeps the flow's id in ``HostedEmailFlow`` and answers `303`
///   to `…/confirm`, whatever the address (S23, no enumeration).
/// - `GET …/confirm` asks for the code (and for a reset the new password); its form posts there
///   and signs in through the pipeline as the sign-in form does: a browser session and back to
///   the authorization endpoint, or the second-factor page for an account that has one (a reset
///   never skips it).
///
/// A refusal goes back to the code page with the reason in words while the flow lives (a wrong
/// code, a refused password), or to the address page once it has ended (expired, used, too
/// many wrong codes, replaced by a newer one).
extension AuthorizeRoutes {
    static let passwordResetPath = "/oauth/authorize/password-reset"
    static let emailSignInPath = "/oauth/authorize/email-sign-in"

    /// The address page of the flow of `purpose` (`reset` or `sign-in`).
    static func emailFlowPath(_ purpose: EmailPurpose) -> String {
        purpose == .reset ? passwordResetPath : emailSignInPath
    }

    /// The code page of the flow of `purpose`.
    static func emailCodePath(_ purpose: EmailPurpose) -> String {
        emailFlowPath(purpose) + "/confirm"
    }

    /// Whether the pages offer the flow of `purpose`: only when mail can be delivered, and a
    /// reset only when passwords are on.
    func offersEmailFlow(_ purpose: EmailPurpose) -> Bool {
        email != nil && (purpose != .reset || passwords != nil)
    }

    /// The sign-in or sign-up page's link to the flow of `purpose`, carrying the authorization
    /// request; `nil` when the flow is not offered.
    func emailFlowLink(_ purpose: EmailPurpose, _ parameters: [String: String]) -> String? {
        offersEmailFlow(purpose) ? Self.emailFlowPath(purpose) + "?" + Self.encode(parameters) : nil
    }

    func registerEmailFlows(on router: Router) {
        let routes = self
        for purpose in [EmailPurpose.reset, .signIn] where offersEmailFlow(purpose) {
            add(.get, Self.emailFlowPath(purpose), on: router) { request, _ in try await routes.emailAddressPage(request, purpose) }
            add(.post, Self.emailFlowPath(purpose), on: router) { request, caller in
                try await routes.startEmailFlow(request, purpose, caller: caller)
            }
            add(.get, Self.emailCodePath(purpose), on: router) { request, _ in try await routes.emailCodePage(request, purpose) }
            add(.post, Self.emailCodePath(purpose), on: router) { request, caller in
                try await routes.confirmEmailFlow(request, purpose, caller: caller)
            }
        }
    }

    // MARK: The address page

    /// The address page: the flash's address after a refusal, else the pending flow's (to ask
    /// for a new code), else the request's `login_hint`.
    func emailAddressPage(_ request: HTTPRequest, _ purpose: EmailPurpose) async throws -> HTTPResponse {
        let authorizationRequest = try await authorization.check(request.query)
        let flash = HostedFlash(request)
        let shown = flash.flatMap { $0.page == Self.flashPage(purpose, code: false) ? $0 : nil }
        let (token, binding) = preSessionBinding(request)
        let form = HostedForm(
            action: Self.emailFlowPath(purpose), csrfToken: csrf.token(binding: binding),
            hidden: [HiddenField(name: "request", value: Self.encode(authorizationRequest.parameters))])
        let pending = HostedEmailFlow(request).flatMap { $0.purpose == purpose ? $0 : nil }
        let page = EmailAddressPage(
            kind: Self.pageKind(purpose, authorizationRequest), clientName: authorizationRequest.client.name, form: form,
            email: shown?.username ?? pending?.email ?? authorizationRequest.loginHint ?? "", error: shown?.error,
            backLink: Self.authorizeURL(authorizationRequest.parameters))
        return try preSessionPage(page.render(), newCSRFCookie: token, flashShown: flash != nil)
    }

    /// The address page's form: starts the flow (the service mails only an address with an
    /// account, or any address when the request has `prompt=create`) and goes on to the code
    /// page, the same way for every address.
    func startEmailFlow(_ request: HTTPRequest, _ purpose: EmailPurpose, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        let query = Self.encode(authorizationRequest.parameters)
        let again = Self.emailFlowPath(purpose) + "?" + query
        let typed = String((form["email"] ?? "").prefix(320))
        let flashPage = Self.flashPage(purpose, code: false)
        guard preSessionFormIsGenuine(request, form) else {
            return HostedFlash(page: flashPage, error: Self.expired, username: typed).redirect(to: again)
        }
        guard let email else { return respond(.untrusted("Email is not available on this server.")) }
        do {
            // The message is written in the browser's language (`Accept-Language`).
            let locale = EmailRoutes.locale(request, email)
            let started =
                purpose == .reset
                ? try await email.requestPasswordReset(email: typed, locale: locale, context: caller)
                : try await email.requestSignIn(email: typed, create: authorizationRequest.prompts.contains(.create), locale: locale, context: caller)
            var response = HTTPResponse.seeOther(Self.emailCodePath(purpose) + "?" + query)
            // The service accepted the address, so it normalises.
            let address = (try? EmailService.address(typed)) ?? typed
            HostedEmailFlow(purpose: purpose, flowID: started.flowID, email: address).set(on: &response, maxAge: started.expiresIn)
            return response
        } catch let error as AuthError {
            let sentence = error.code == .invalidRequest ? "Please enter an email address." : Self.sentence(for: error, creating: false)
            return HostedFlash(page: flashPage, error: sentence, username: typed).redirect(to: again)
        }
    }

    // MARK: The code page

    /// The code page of the flow this browser started; without one, back to the address page.
    func emailCodePage(_ request: HTTPRequest, _ purpose: EmailPurpose) async throws -> HTTPResponse {
        let authorizationRequest = try await authorization.check(request.query)
        let query = Self.encode(authorizationRequest.parameters)
        guard let email, let pending = HostedEmailFlow(request), pending.purpose == purpose else {
            return .seeOther(Self.emailFlowPath(purpose) + "?" + query)
        }
        let flash = HostedFlash(request)
        let shown = flash.flatMap { $0.page == Self.flashPage(purpose, code: true) ? $0 : nil }
        let (token, binding) = preSessionBinding(request)
        let form = HostedForm(
            action: Self.emailCodePath(purpose), csrfToken: csrf.token(binding: binding), hidden: [HiddenField(name: "request", value: query)])
        let page = EmailCodePage(
            kind: Self.pageKind(purpose, authorizationRequest), clientName: authorizationRequest.client.name, form: form, email: pending.email,
            minutes: max(1, email.codeTTL / 60), error: shown?.error, newCodeLink: Self.emailFlowPath(purpose) + "?" + query,
            backLink: Self.authorizeURL(authorizationRequest.parameters))
        return try preSessionPage(page.render(), newCSRFCookie: token, flashShown: flash != nil)
    }

    /// The code page's form: the code (and for a reset the new password) for the pending flow,
    /// then signed in as by the sign-in form.
    func confirmEmailFlow(_ request: HTTPRequest, _ purpose: EmailPurpose, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let authorizationRequest = try await resumed(form)
        let query = Self.encode(authorizationRequest.parameters)
        let again = Self.emailCodePath(purpose) + "?" + query
        let start = Self.emailFlowPath(purpose) + "?" + query
        guard preSessionFormIsGenuine(request, form) else {
            return HostedFlash(page: Self.flashPage(purpose, code: true), error: Self.expired, username: nil).redirect(to: again)
        }
        guard let email else { return respond(.untrusted("Email is not available on this server.")) }
        guard let pending = HostedEmailFlow(request), pending.purpose == purpose else {
            return HostedFlash(page: Self.flashPage(purpose, code: false), error: "The code took too long. Please ask for a new one.", username: nil)
                .redirect(to: start)
        }
        // As the API takes it: at most 16 characters; spaces a person typed between digits are not part of it.
        let code = String((form["code"] ?? "").filter { !$0.isWhitespace }.prefix(16))
        let proof = EmailProof.code(flowID: pending.flowID, code: code)
        // The browser session this sign-in replaces ends with it, as after the sign-in form.
        let target = SignInTarget.browser(replacing: request.browserSessionToken)
        do {
            let signedIn =
                purpose == .reset
                ? try await email.confirmPasswordReset(proof, password: form["password"] ?? "", context: caller, target: target)
                : try await email.confirmSignIn(proof, context: caller, target: target)
            var response = try signedInResponse(signedIn, next: authorizationRequest)
            HostedEmailFlow.clear(on: &response)
            return response
        } catch let error as AuthError {
            if var response = Self.secondFactorPage(after: error, authorizationRequest.parameters) {
                HostedEmailFlow.clear(on: &response)
                return response
            }
            if error.code == .invalidGrant, error.reason != .invalidCode {
                // The flow has ended: a new code is the way on.
                var response = HostedFlash(page: Self.flashPage(purpose, code: false), error: Self.sentence(forEnded: error, purpose), username: pending.email)
                    .redirect(to: start)
                HostedEmailFlow.clear(on: &response)
                return response
            }
            let sentence =
                error.code == .invalidGrant
                ? "That code is not right. Please check the message and try again." : Self.sentence(for: error, creating: true)
            return HostedFlash(page: Self.flashPage(purpose, code: true), error: sentence, username: nil).redirect(to: again)
        }
    }

    // MARK: Helpers

    /// What an expired form says (its CSRF token no longer matches the browser).
    static let expired = "This page had expired. Please try again."

    /// The flash's `page` for the address page or the code page of a flow.
    static func flashPage(_ purpose: EmailPurpose, code: Bool) -> String {
        (purpose == .reset ? "password_reset" : "email_sign_in") + (code ? "_code" : "")
    }

    /// A sign-in code asked for from the sign-up page (`prompt=create`) may create the account.
    static func pageKind(_ purpose: EmailPurpose, _ request: AuthorizationRequest) -> EmailPageKind {
        purpose == .reset ? .passwordReset : request.prompts.contains(.create) ? .signUp : .signIn
    }

    /// Why a flow cannot be used any more, in words.
    static func sentence(forEnded error: AuthError, _ purpose: EmailPurpose) -> String {
        switch error.reason {
        case .expired?: "The code has expired. Please ask for a new one."
        case .used? where purpose == .reset: "This code was used already. If you chose a new password with the link in the message, sign in with it."
        case .used?: "This code was used already. Please ask for a new one."
        case .superseded?: "A newer message replaced this code. Please ask for a new one."
        case .tooManyAttempts?: "Too many wrong codes. Please ask for a new one."
        default: "That code cannot be used. Please ask for a new one."
        }
    }
}

/// The email flow a hosted page started, kept between its two pages: the flow's id (the code
/// proves nothing without it) and the address, in a `__Host-` cookie (`HttpOnly`,
/// `SameSite=Lax`) that lives as long as the flow. Neither is a secret; the code is, and it is
/// never stored here.
struct HostedEmailFlow: Sendable, Hashable {
    static let cookieName = "__Host-latchkey_email"

    var purpose: EmailPurpose
    var flowID: String
    var email: String

    init(purpose: EmailPurpose, flowID: String, email: String) {
        self.purpose = purpose
        self.flowID = flowID
        self.email = email
    }

    /// The flow a request's cookie names, if any and well-formed.
    init?(_ request: HTTPRequest) {
        guard let value = request.cookies[Self.cookieName], let bytes = Base64URL.decode(value), let json = try? JSONValue(parsing: bytes),
            let purpose = json["purpose"]?.stringValue.flatMap(EmailPurpose.init), let flowID = json["flow_id"]?.stringValue, !flowID.isEmpty,
            flowID.utf8.count <= 128, let email = json["email"]?.stringValue
        else { return nil }
        self.init(purpose: purpose, flowID: flowID, email: email)
    }

    /// Keeps the flow for `maxAge` seconds, the flow's lifetime.
    func set(on response: inout HTTPResponse, maxAge: Int) {
        let json: JSONValue = ["purpose": .string(purpose.rawValue), "flow_id": .string(flowID), "email": .string(email)]
        // Base64url is all cookie-octets, so the cookie is always accepted.
        if let cookie = try? SetCookie(name: Self.cookieName, value: Base64URL.encode(Array(json.serializedString.utf8)), maxAge: maxAge) {
            response.setCookie(cookie)
        }
    }

    /// Forgets the flow once it signed in or ended.
    static func clear(on response: inout HTTPResponse) {
        if let cookie = try? SetCookie.expired(name: cookieName) { response.setCookie(cookie) }
    }
}
