import LatchkeyHTTP

/// The request context of Latchkey's route groups: the request id and, in a group behind
/// ``BearerAuthenticator``, the caller.
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
    /// The user and session of the bearer token, set by ``BearerAuthenticator`` before the
    /// handler runs; `nil` in a group without it.
    var principal: Principal?

    init(source: HTTPRequestContextSource) {
        self.requestID = source.requestID
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
