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

    init(source: HTTPRequestContextSource) {
        self.requestID = source.requestID
        self.caller = RequestContext(
            ip: source.remoteAddress, userAgent: source.userAgent.map { String($0.prefix(256)) }, requestID: source.requestID)
        self.principal = nil
    }

    /// The authenticated caller.
    ///
    /// - Throws: 401 `invalid_token`, as for a missing token, when the route's group does not
    ///   authenticate: a route wired without ``BearerAuthenticator`` refuses rather than serves.
    func requirePrincipal() throws(AuthError) -> Principal {
        guard let principal else { throw AuthError.invalidToken("a bearer token is required") }
        return principal
    }
}
