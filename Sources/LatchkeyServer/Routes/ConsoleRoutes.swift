import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// The middleware of `/admin`: finds the console session of the request's cookie and the role
/// its account holds now (a revoked role counts at once, S59), and names the admin as the
/// `actor` of every audit entry the request writes. Without a live session the browser goes to
/// sign in, and comes back to the page it asked for.
struct ConsoleAuthenticator: RouterMiddleware {
    typealias Context = LatchkeyContext

    let console: ConsoleService

    func handle(
        _ request: HTTPRequest, context: LatchkeyContext, next: (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        guard let token = request.cookies[ConsoleRoutes.cookieName], !token.isEmpty, let current = try await console.current(token: token) else {
            // A form posted without a session does nothing; the browser starts from the overview.
            let returnTo = request.method == .get ? ConsoleRoutes.pathAndQuery(request) : "/admin"
            return try await ConsoleRoutes.signIn(console, returnTo: returnTo, fresh: false)
        }
        var context = context
        context.console = current.session
        context.adminRole = current.role
        context.caller.actor = current.session.userID
        return try await next(request, context)
    }
}

/// `/admin`: the admin console (docs/admin.md "The console"), server-rendered pages over the
/// services the admin API calls, with the same role for each action (S64). Every page has the
/// hosted pages' headers; every form carries the console session's CSRF token and every POST
/// checks it (S61); destructive actions need a sign-in younger than five minutes (S62).
struct ConsoleRoutes {
    let console: ConsoleService
    let admin: AdminService
    let accounts: AccountService
    let clients: ClientService
    let keys: SigningKeyRing
    /// The email flows, when mail can be delivered; without, no password reset.
    let email: EmailService?
    let csrf: CSRFProtection
    let clock: @Sendable () -> Date

    /// The console session's cookie: `Secure`, `HttpOnly`, `SameSite=Strict`, `Path=/admin`.
    /// `__Secure-` rather than `__Host-`, which would demand `Path=/`.
    static let cookieName = "__Secure-latchkey_console"
    /// The binding of the sign-in's `state` (``BrowserBoundState``), for the way out and back.
    static let stateCookieName = "__Secure-latchkey_console_state"
    static let cookiePath = "/admin"

    func register(on router: Router) {
        let routes = self
        router.group("", context: LatchkeyContext.self).get(ConsoleService.callbackPath) { request, context in
            try await routes.callback(request, caller: context.caller)
        }
        let group = router.group("/admin", middleware: ConsoleAuthenticator(console: console))

        page(group, "") { request, context, frame in
            try context.requireConsoleRole(.support)
            let stats = try await admin.stats()
            let page = ConsoleOverviewPage(
                frame: frame, stats: stats, chart: try await console.signInChart(), databaseEngine: admin.databaseEngine, keys: try await keys.allKeys(),
                now: clock())
            return .page(page.render())
        }
        action(group, "/sign-out") { _, context, _ in
            try await console.signOut(try context.requireConsoleRole(.support), context: context.caller)
            var response = HTTPResponse.page(SignedOutPage(returnLink: "/admin").render())
            if let cookie = try? SetCookie.expired(name: Self.cookieName, path: Self.cookiePath, sameSite: .strict) { response.setCookie(cookie) }
            return response
        }
        registerUsers(group)
        registerClients(group)
        registerAuditAndKeys(group)
    }

    // MARK: Users

    private func registerUsers(_ group: RouterGroup<LatchkeyContext>) {
        let (admin, accounts, email) = (admin, accounts, email)
        page(group, "/users") { request, context, frame in
            try context.requireConsoleRole(.support)
            let query = try AdminRoutes.parameter(request, "query", maxLength: 256) ?? ""
            let page = try await admin.users(
                query: query, cursor: try AdminRoutes.cursor(request), limit: try AdminCursor.limit(request.query["limit"]))
            return .page(ConsoleUsersPage(frame: frame, query: query, page: page).render())
        }
        page(group, "/users/{id}") { request, context, frame in
            try context.requireConsoleRole(.support)
            let detail = try await admin.user(id: request.pathParameters["id"] ?? "")
            let notice = request.query["done"].flatMap { ConsoleUserPage.notices[$0] }
            return .page(ConsoleUserPage(frame: frame, detail: detail, canSendMail: email != nil, notice: notice).render())
        }
        page(group, "/users/{id}/confirm/{action}") { request, context, frame in
            let userID = request.pathParameters["id"] ?? ""
            let name = request.pathParameters["action"] ?? ""
            guard let action = UserAction(rawValue: name) else { throw AuthError.notFound("no action \(name)") }
            try context.requireConsoleRole(action.role)
            if action.destructive, let again = try await freshSignIn(request, context) { return again }
            let detail = try await admin.user(id: userID)
            let who = ConsoleFrame.shown(detail.summary.user.email ?? detail.summary.username ?? userID)
            var hidden: [HiddenField] = []
            for field in ["session_id", "kind", "factor"] {
                if let value = try AdminRoutes.parameter(request, field, maxLength: 128) { hidden.append(HiddenField(name: field, value: value)) }
            }
            let base = "/admin/users/" + PercentEncoding.encode(userID)
            let page = ConsoleConfirmPage(
                frame: frame, section: "/admin/users", title: action.title, question: action.question(who), action: base + "/" + action.rawValue,
                hidden: hidden, button: action.title, danger: action.destructive, back: base)
            return .page(page.render())
        }
        action(group, "/users/{id}/{action}") { request, context, form in
            let userID = request.pathParameters["id"] ?? ""
            let name = request.pathParameters["action"] ?? ""
            guard let action = UserAction(rawValue: name) else { throw AuthError.notFound("no action \(name)") }
            try context.requireConsoleRole(action.role)
            if action.destructive, let again = try await freshSignIn(request, context, form: form) { return again }
            let caller = context.caller
            switch action {
            case .endSession:
                guard let sessionID = form["session_id"], !sessionID.isEmpty, sessionID.utf8.count <= 64 else {
                    throw AuthError.invalidRequest("session_id must be a session id")
                }
                _ = try await admin.revokeSessions(userID: userID, sessionID: sessionID, context: caller)
            case .endSessions: _ = try await admin.revokeSessions(userID: userID, sessionID: nil, context: caller)
            case .disable: _ = try await accounts.disable(userID: userID, context: caller)
            case .enable: _ = try await accounts.enable(userID: userID, context: caller)
            case .passwordReset:
                guard let email else { throw AuthError.notFound("mail cannot be delivered on this server") }
                try await email.requestPasswordReset(userID: userID, locale: EmailRoutes.locale(request, email), context: caller)
            case .removeFactor:
                try await admin.removeFactor(userID: userID, kind: form["kind"] ?? "", id: form["factor"] ?? "", context: caller)
            case .delete:
                try await admin.deleteUser(id: userID, context: caller)
                return .seeOther("/admin/users")
            }
            return .seeOther("/admin/users/" + PercentEncoding.encode(userID), query: [("done", action.rawValue)])
        }
    }

    /// What the user page's buttons do, by the last segment of their path.
    enum UserAction: String, Sendable {
        case endSession = "end-session"
        case endSessions = "end-sessions"
        case disable, enable
        case passwordReset = "password-reset"
        case removeFactor = "remove-factor"
        case delete

        /// The role the action needs, as the admin API's route of the same action.
        var role: AdminRole { destructive ? .admin : .support }
        /// Whether it needs a fresh sign-in (S62).
        var destructive: Bool { self == .delete || self == .removeFactor }

        var title: String {
            switch self {
            case .endSession: "End the session"
            case .endSessions: "End every session"
            case .disable: "Disable the account"
            case .enable: "Enable the account"
            case .passwordReset: "Send a password reset"
            case .removeFactor: "Remove the factor"
            case .delete: "Delete the account"
            }
        }

        func question(_ who: String) -> String {
            switch self {
            case .endSession: "End this session of \(who)? Its tokens stop working at once."
            case .endSessions: "End every session of \(who)? Each device has to sign in again."
            case .disable: "Disable \(who)? The account cannot sign in, and its sessions end."
            case .enable: "Enable \(who) again? Ended sessions do not come back."
            case .passwordReset: "Send \(who) a message to choose a new password?"
            case .removeFactor: "Remove this factor of \(who)? It stops working at once, even if it is the last way to sign in."
            case .delete: "Delete \(who) and everything about the account? This cannot be undone."
            }
        }
    }

    // MARK: Clients

    private func registerClients(_ group: RouterGroup<LatchkeyContext>) {
        let clients = clients
        page(group, "/clients") { _, context, frame in
            try context.requireConsoleRole(.admin)
            return .page(ConsoleClientsPage(frame: frame, clients: try await clients.list()).render())
        }
        action(group, "/clients") { _, context, form in
            try context.requireConsoleRole(.admin)
            let registration = ClientRegistration(
                name: String((form["name"] ?? "").prefix(200)), redirectURIs: Self.uris(form["redirect_uris"]), confidential: form["confidential"] == "true")
            let (client, secret) = try await clients.register(registration, context: context.caller)
            guard let secret else { return .seeOther("/admin/clients/" + PercentEncoding.encode(client.id)) }
            return .page(ConsoleClientPage(frame: try frame(context), client: client, secret: secret, notice: "The client is added.").render())
        }
        page(group, "/clients/{id}") { request, context, frame in
            try context.requireConsoleRole(.admin)
            guard let client = try await clients.client(id: request.pathParameters["id"] ?? "") else { throw AuthError.notFound("no such client") }
            let notice = request.query["done"] == "redirect-uris" ? "The redirect URIs are saved." : nil
            return .page(ConsoleClientPage(frame: frame, client: client, secret: nil, notice: notice).render())
        }
        action(group, "/clients/{id}/redirect-uris") { request, context, form in
            try context.requireConsoleRole(.admin)
            let id = request.pathParameters["id"] ?? ""
            let change = ClientService.ClientChange(
                name: nil, redirectURIs: Self.uris(form["redirect_uris"]), postLogoutRedirectURIs: nil, scopes: nil)
            _ = try await clients.update(id: id, change, context: context.caller)
            return .seeOther("/admin/clients/" + PercentEncoding.encode(id), query: [("done", "redirect-uris")])
        }
        page(group, "/clients/{id}/confirm/{action}") { request, context, frame in
            try context.requireConsoleRole(.admin)
            if let again = try await freshSignIn(request, context) { return again }
            let id = request.pathParameters["id"] ?? ""
            guard let client = try await clients.client(id: id) else { throw AuthError.notFound("no such client") }
            let base = "/admin/clients/" + PercentEncoding.encode(id)
            let name = ConsoleFrame.shown(client.name)
            let page: ConsoleConfirmPage
            switch request.pathParameters["action"] {
            case "rotate-secret":
                page = ConsoleConfirmPage(
                    frame: frame, section: "/admin/clients", title: "Rotate the secret",
                    question: "Give \(name) a new secret? The old one stops working at once.", action: base + "/rotate-secret", hidden: [],
                    button: "Rotate the secret", danger: true, back: base)
            case "remove":
                page = ConsoleConfirmPage(
                    frame: frame, section: "/admin/clients", title: "Remove the client",
                    question: "Remove \(name)? Its sessions, codes and grants go with it.", action: base + "/remove", hidden: [],
                    button: "Remove the client", danger: true, back: base)
            default: throw AuthError.notFound("no such action")
            }
            return .page(page.render())
        }
        action(group, "/clients/{id}/rotate-secret") { request, context, _ in
            try context.requireConsoleRole(.admin)
            if let again = try await freshSignIn(request, context) { return again }
            let id = request.pathParameters["id"] ?? ""
            let secret = try await clients.rotateSecret(id: id, context: context.caller)
            guard let client = try await clients.client(id: id) else { throw AuthError.notFound("no such client") }
            return .page(ConsoleClientPage(frame: try frame(context), client: client, secret: secret, notice: nil).render())
        }
        action(group, "/clients/{id}/remove") { request, context, _ in
            try context.requireConsoleRole(.admin)
            if let again = try await freshSignIn(request, context) { return again }
            guard try await clients.remove(id: request.pathParameters["id"] ?? "", context: context.caller) else { throw AuthError.notFound("no such client") }
            return .seeOther("/admin/clients")
        }
    }

    /// The redirect URIs of a form field, separated by spaces (a form value holds no line
    /// breaks: the form parser refuses control characters, and a redirect URI holds no space).
    static func uris(_ text: String?) -> [String] {
        (text ?? "").split(separator: " ").map(String.init)
    }

    // MARK: Audit log and keys

    private func registerAuditAndKeys(_ group: RouterGroup<LatchkeyContext>) {
        let (admin, keys, clock) = (admin, keys, clock)
        page(group, "/audit") { request, context, frame in
            try context.requireConsoleRole(.support)
            let page = try await admin.audit(try Self.auditFilter(request), cursor: try AdminRoutes.cursor(request), limit: AdminCursor.defaultLimit)
            var typed: [String: String] = [:]
            for name in ["user", "event", "since", "until"] { typed[name] = try AdminRoutes.parameter(request, name, maxLength: 64) }
            return .page(ConsoleAuditPage(frame: frame, filter: typed, page: page).render())
        }
        // The export: the filter's entries as NDJSON, newest first, as a download.
        group.get("/audit/export") { request, context in
            try context.requireConsoleRole(.support)
            let page = try await admin.audit(try Self.auditFilter(request), cursor: nil, limit: AdminRoutes.maxExportLimit)
            var response = HTTPResponse(
                status: 200, headers: ["Content-Type": "application/x-ndjson", "Content-Disposition": "attachment; filename=\"audit.ndjson\""],
                body: page.rows.flatMap { WireAuditEntry($0.entry).json.serialized + [0x0A] })
            response.headers.add(contentsOf: .hostedPageSecurity)
            return response
        }
        page(group, "/keys") { request, context, frame in
            try context.requireConsoleRole(.admin)
            let notice = request.query["done"] == "rotate" ? "New keys are published; they sign in 15 minutes." : nil
            return .page(ConsoleKeysPage(frame: frame, keys: try await keys.allKeys(), now: clock(), notice: notice).render())
        }
        page(group, "/keys/confirm/rotate") { request, context, frame in
            try context.requireConsoleRole(.admin)
            if let again = try await freshSignIn(request, context) { return again }
            let page = ConsoleConfirmPage(
                frame: frame, section: "/admin/keys", title: "Rotate the signing keys",
                question: "Publish a new key for each algorithm now? It signs from 15 minutes on; tokens signed before stay valid.",
                action: "/admin/keys/rotate", hidden: [], button: "Rotate the keys", danger: true, back: "/admin/keys")
            return .page(page.render())
        }
        action(group, "/keys/rotate") { request, context, _ in
            try context.requireConsoleRole(.admin)
            if let again = try await freshSignIn(request, context) { return again }
            let now = clock()
            for algorithm in SigningKeyRing.algorithms {
                _ = try await keys.rotate(algorithm, activationDelay: 900, now: now, context: context.caller)
            }
            return .seeOther("/admin/keys", query: [("done", "rotate")])
        }
    }

    static func auditFilter(_ request: HTTPRequest) throws -> AdminRepository.AuditFilter {
        AdminRepository.AuditFilter(
            userID: try AdminRoutes.parameter(request, "user", maxLength: 64), event: try AdminRoutes.parameter(request, "event", maxLength: 64),
            since: try AdminRoutes.time(request, "since"), until: try AdminRoutes.time(request, "until"))
    }

    // MARK: Signing in

    /// `/admin/callback`: back from the authorization endpoint. On success the console session's
    /// cookie and back to the page the browser asked for; a refusal is a page that says why.
    func callback(_ request: HTTPRequest, caller: RequestContext) async throws -> HTTPResponse {
        let parameters = request.query
        if let error = parameters["error"] {
            return Self.refusal(400, "The sign-in did not finish", "The sign-in answered \(error). Go back to the console to try again.")
        }
        guard let code = parameters["code"], let state = parameters["state"] else {
            return Self.refusal(400, "The sign-in did not finish", "The answer carried no code. Go back to the console to try again.")
        }
        let signedIn: (token: String, returnTo: String)
        do {
            signedIn = try await console.finish(code: code, state: state, binding: request.cookies[Self.stateCookieName], context: caller)
        } catch is BrowserBoundState.Refusal {
            return Self.refusal(400, "The sign-in did not finish", "It started in another browser or took too long. Go back to the console to try again.")
        } catch ConsoleService.Refusal.noRole {
            return Self.refusal(403, "This account cannot use the console", "Only accounts with the role admin or support can. An operator grants one with latchkey admins grant.")
        } catch ConsoleService.Refusal.secondFactorNeeded {
            return Self.refusal(
                403, "Add a second factor first",
                "The console needs a sign-in with a second factor or a passkey. Add an authenticator app or a passkey to this account, then sign in again.")
        } catch let error as AuthError where error.code == .invalidGrant {
            return Self.refusal(400, "The sign-in did not finish", "The sign-in had expired. Go back to the console to try again.")
        }
        var response = HTTPResponse.seeOther(signedIn.returnTo.hasPrefix("/admin") ? signedIn.returnTo : "/admin")
        response.setCookie(
            try SetCookie(name: Self.cookieName, value: signedIn.token, path: Self.cookiePath, maxAge: Int(ConsoleService.lifetime), sameSite: .strict))
        if let cookie = try? SetCookie.expired(name: Self.stateCookieName, path: Self.cookiePath) { response.setCookie(cookie) }
        return response
    }

    /// 303 to the authorization endpoint for the console, with the state's binding cookie.
    static func signIn(_ console: ConsoleService, returnTo: String, fresh: Bool) async throws -> HTTPResponse {
        let (parameters, binding) = try await console.authorizationRequest(returnTo: returnTo, fresh: fresh)
        var response = HTTPResponse.seeOther(AuthorizeRoutes.authorizeURL(parameters))
        response.setCookie(try SetCookie(name: stateCookieName, value: binding, path: cookiePath, maxAge: 600))
        return response
    }

    /// For a destructive action with a sign-in older than five minutes (S62): the way through a
    /// new sign-in back to the action's confirmation page (a POST's page is its confirmation
    /// page, which gets the fields of `form` that name what the action is on); `nil` when the
    /// sign-in is fresh.
    func freshSignIn(_ request: HTTPRequest, _ context: LatchkeyContext, form: [String: String] = [:]) async throws -> HTTPResponse? {
        guard let session = context.console, !session.isFresh(at: clock()) else { return nil }
        var returnTo = Self.pathAndQuery(request)
        if request.method == .post, let slash = request.path.lastIndex(of: "/") {
            returnTo = PercentEncoding.encode(String(request.path[..<slash]) + "/confirm" + String(request.path[slash...]), keeping: "/")
            let kept = form.filter { ["kind", "factor", "session_id"].contains($0.key) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            if !kept.isEmpty { returnTo += "?" + FormEncoding.encode(kept) }
        }
        return try await Self.signIn(console, returnTo: returnTo, fresh: true)
    }

    static func pathAndQuery(_ request: HTTPRequest) -> String {
        PercentEncoding.encode(request.path, keeping: "/") + (request.query.isEmpty ? "" : "?" + PercentEncoding.encodeForm(request.query))
    }

    static func refusal(_ status: Int, _ title: String, _ message: String) -> HTTPResponse {
        var page = ErrorPage(title: title, message: message)
        page.retryLink = "/admin"
        return .page(page.render(), status: status)
    }

    // MARK: Handlers

    /// The frame of the console session's pages.
    func frame(_ context: LatchkeyContext) throws -> ConsoleFrame {
        guard let session = context.console, let role = context.adminRole else { throw AuthError(.forbidden, "the console needs a signed-in admin") }
        return ConsoleFrame(csrfToken: csrf.token(binding: session.id), role: role)
    }

    /// A console page: the handler gets the frame; a refusal is a page (``answer(_:)``).
    private func page(
        _ group: RouterGroup<LatchkeyContext>, _ path: String,
        _ handler: @escaping @Sendable (HTTPRequest, LatchkeyContext, ConsoleFrame) async throws -> HTTPResponse
    ) {
        let routes = self
        group.get(path) { request, context in
            do {
                return try await handler(request, context, try routes.frame(context))
            } catch let error as AuthError {
                return try Self.answer(error)
            }
        }
    }

    /// A console form's POST: refused with 403 and nothing done unless it carries the console
    /// session's CSRF token (S61); the handler gets the form, read once. A refusal is a page
    /// (``answer(_:)``).
    private func action(
        _ group: RouterGroup<LatchkeyContext>, _ path: String,
        _ handler: @escaping @Sendable (HTTPRequest, LatchkeyContext, [String: String]) async throws -> HTTPResponse
    ) {
        let csrf = csrf
        group.post(path) { request, context in
            do {
                guard let session = context.console, let form = try? request.formBody(),
                    csrf.verify(form[HostedForm.csrfFieldName] ?? "", binding: session.id)
                else {
                    return Self.refusal(403, "This form had expired", "Open the page again and repeat what you did.")
                }
                return try await handler(request, context, form)
            } catch let error as AuthError {
                return try Self.answer(error)
            }
        }
    }

    /// The page of a refused request: 403 for a role that does not cover the action, 404, 400
    /// or 409 with the reason; anything else (an unavailable database) answers as the API does.
    static func answer(_ error: AuthError) throws -> HTTPResponse {
        switch error.code {
        case .forbidden: refusal(403, "Not allowed", "Your role does not allow this. Ask an admin.")
        case .notFound: refusal(404, "Not found", error.message)
        case .invalidRequest: refusal(400, "That did not work", error.message)
        case .conflict: refusal(409, "That did not work", error.message)
        default: throw error
        }
    }
}
