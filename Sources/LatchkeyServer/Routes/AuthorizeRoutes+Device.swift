import LatchkeyHTTP

/// `/device`, the hosted page of the device authorization grant (RFC 8628 §3.3): the person
/// types the code their device shows, then goes through `/oauth/authorize` as any sign-in does
/// (every method, the second factor, the browser session), carrying only the device
/// authorization's reference, and answers on the device consent page (the consent form of
/// AuthorizeRoutes.swift).
extension AuthorizeRoutes {
    static let devicePath = DeviceAuthorizationService.verificationPath
    /// The ``HostedFlash`` page name of `/device`.
    private static let deviceFlashPage = "device"

    func registerDevicePages(on router: Router) {
        let routes = self
        add(.get, Self.devicePath, on: router) { request, _ in try await routes.devicePage(request) }
        add(.post, Self.devicePath, on: router) { request, caller in try await routes.deviceCode(request, caller: caller) }
    }

    /// The code form; `user_code` in the query (`verification_uri_complete`) fills it in, and
    /// nothing happens until the person presses Continue.
    func devicePage(_ request: HTTPRequest) async throws -> HTTPResponse {
        let flash = HostedFlash(request).flatMap { $0.page == Self.deviceFlashPage ? $0 : nil }
        let typed = flash?.username ?? request.query["user_code"] ?? ""
        let (token, binding) = preSessionBinding(request)
        let form = HostedForm(action: Self.devicePath, csrfToken: csrf.token(binding: binding))
        let code = UserCode.normalize(typed).map(UserCode.display) ?? String(typed.prefix(16))
        return try preSessionPage(DeviceCodePage(form: form, code: code, error: flash?.error).render(), newCSRFCookie: token, flashShown: flash != nil)
    }

    /// The typed code: a pending authorization's goes on to sign-in and consent; a wrong one, or
    /// one past the address's limit (S45), comes back to the form with the reason.
    func deviceCode(_ request: HTTPRequest, caller: RequestContext) async throws -> HTTPResponse {
        let form = try request.formBody()
        let typed = String((form["user_code"] ?? "").prefix(16))
        func again(_ error: String, keeping code: String?) -> HTTPResponse {
            HostedFlash(page: Self.deviceFlashPage, error: error, username: code).redirect(to: Self.devicePath)
        }
        guard preSessionFormIsGenuine(request, form) else { return again("This page had expired. Please try again.", keeping: typed) }
        switch try await devices.enter(userCode: typed, context: caller) {
        case .found(let id, let clientID):
            return .seeOther(Self.authorizeURL(["client_id": clientID, AuthorizationRequest.deviceParameter: id]))
        case .wrong:
            return again("That code is not right, or it has expired. Check the code your device shows and try again.", keeping: typed)
        case .limited(let retryAfter):
            return again(
                "Too many wrong codes were typed from your network. Please wait \(max(1, (retryAfter + 59) / 60)) minutes and try again.",
                keeping: nil)
        }
    }

    /// The answer on a device's consent page (S46): the device authorization is approved or
    /// denied for the signed-in user, once.
    func deviceDecision(allow: Bool, id: String, browserSession: BrowserSession, caller: RequestContext) async throws -> HTTPResponse {
        let decision = try await devices.decide(allow: allow, id: id, browserSession: browserSession, context: caller)
        return .page(DeviceAnsweredPage(decision: decision).render())
    }
}
