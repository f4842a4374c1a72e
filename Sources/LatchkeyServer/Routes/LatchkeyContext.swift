import LatchkeyHTTP

/// The request context of Latchkey's routes: the request id, who sent the request (for the audit
/// entries the services write) and, in a group behind ``BearerAuthenticator``, the signed-in user.
///
/// ```swift
/// let me = router.group("/v1/me", middleware: bearer)   // a RouterGroup<LatchkeyContext>
/// me.get("") { request, context in
///     let principal = try context.requirePrincipal()
///     …
/// }
/// ```
struct LatchkeyContext: HTTPRequestContext {
    let requestID: String
    /// Who sent the request: its peer address, its `User-Agent` (at most 256 characters) and its
    /// request id, made once here for every service the handler calls; ``DPoPBinding`` adds the
    /// key of the request's DPoP proof.
    var caller: RequestContext
    /// The user and session of the bearer token, set by ``BearerAuthenticator`` before the
    /// handler runs; `nil` in a group without it.
    var principal: Principal?
    /// The role of the admin API the principal holds, set by ``AdminAuthorizer`` when the token
    /// carries the `admin` scope and the account a role; `nil` elsewhere.
    var adminRole: AdminRole?
    /// The admin console's session, set by ``ConsoleAuthenticator`` in the `/admin` group (with
    /// ``adminRole`` read afresh); `nil` elsewhere.
    var console: ConsoleSession?

    init(source: HTTPRequestContextSource) {
        self.requestID = source.requestID
        self.caller = RequestContext(
            ip: source.remoteAddress, userAgent: source.userAgent.map { String($0.prefix(256)) }, requestID: source.requestID)
        self.principal = nil
        self.adminRole = nil
        self.console = nil
    }

    /// The authenticated caller.
    ///
    /// - Throws: 401 `invalid_token`, as for a missing token, when the route's group does not
    ///   authenticate: a route wired without ``BearerAuthenticator`` refuses rather than serves.
    func requirePrincipal() throws(AuthError) -> Principal {
        guard let principal else { throw AuthError.invalidToken("a bearer token is required") }
        return principal
    }

    /// The principal of an admin API request whose role covers `role`; what each admin handler
    /// states first.
    ///
    /// - Throws: 403 `forbidden` without the `admin` scope or a role, or for `support` on an
    ///   admin-only action; 401 `invalid_token` outside an authenticated group.
    @discardableResult
    func requireRole(_ role: AdminRole) throws(AuthError) -> Principal {
        let principal = try requirePrincipal()
        guard let held = adminRole else {
            throw AuthError(.forbidden, "the admin API needs an access token with the scope admin of an account holding a role")
        }
        guard held.covers(role) else { throw AuthError(.forbidden, "this needs the role \(role.rawValue)") }
        return principal
    }

    /// The console session of a console request whose role covers `role`: what each console
    /// action states first, whatever buttons its page showed (S64).
    ///
    /// - Throws: 403 `forbidden` for `support` on an admin-only action, and outside the console.
    @discardableResult
    func requireConsoleRole(_ role: AdminRole) throws(AuthError) -> ConsoleSession {
        guard let console, let held = adminRole else { throw AuthError(.forbidden, "the console needs a signed-in admin") }
        guard held.covers(role) else { throw AuthError(.forbidden, "this needs the role \(role.rawValue)") }
        return console
    }
}
