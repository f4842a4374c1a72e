/// Routes under one path prefix that share middleware and a typed request context.
///
/// ```swift
/// let me = router.group("/v1/me", context: LatchkeyContext.self, middleware: bearer)
/// me.get("") { request, context in … context.principal … }
/// me.get("/sessions") { request, context in … }
/// ```
///
/// The group's routes go into its ``Router``'s table like any other route, so matching, 404,
/// 405 with `Allow` and `HEAD` on a `GET` route behave exactly as for ``Router/get(_:_:)``. For
/// each request to one of them the group makes a fresh `Context` (``HTTPRequestContext``), runs its
/// middleware, outermost first, inside the router-wide middleware, and then the handler with
/// the request and the context. The 404 and 405 answers do not run group middleware.
///
/// Paths join literally: the group `/v1` with the route `/me` is `/v1/me`; the route `""` is the
/// group's own path. Middleware is given when the group is made, so every route of a group has
/// the same middleware whatever the order of the calls. Modelled on hummingbird 2's `RouterGroup`.
package struct RouterGroup<Context: HTTPRequestContext>: Sendable {
    /// A handler of a group route.
    package typealias Handler = @Sendable (HTTPRequest, Context) async throws -> HTTPResponse
    /// A handler of a group route that does not suspend.
    package typealias SynchronousHandler = @Sendable (HTTPRequest, Context) throws -> HTTPResponse

    private let router: Router
    /// The path prefix of the group's routes, without a trailing `/` (empty at the root).
    package let path: String
    private let middleware: [any RouterMiddleware<Context>]

    init(router: Router, path: String, middleware: [any RouterMiddleware<Context>]) {
        precondition(path.isEmpty || path.first == "/", "RouterGroup: a group path starts with /: \(path)")
        self.router = router
        self.path = path.last == "/" ? String(path.dropLast()) : path
        self.middleware = middleware
    }

    /// A group inside this one: its path is appended to this group's, its middleware runs
    /// inside this group's.
    package func group(_ path: String, middleware: any RouterMiddleware<Context>...) -> RouterGroup<Context> {
        RouterGroup(router: router, path: self.path + path, middleware: self.middleware + middleware)
    }

    // MARK: Routes

    /// Adds an asynchronous handler for `method` and the group's path followed by `path`; it
    /// runs in a task, off the event loop (see ``Router/on(_:_:_:)``).
    package func on(_ method: HTTPMethod, _ path: String, _ handler: @escaping Handler) {
        let chain = Self.chain(middleware, handler)
        router.add(method, route(path), handler: .asynchronous { request in
            try await chain(request, Context(source: HTTPRequestContextSource(request)))
        })
    }

    /// Adds a handler that runs in a task although it does not `await`: a trailing closure
    /// never lands on the event loop.
    package func on(_ method: HTTPMethod, _ path: String, _ handler: @escaping SynchronousHandler) {
        on(method, path) { request, context async throws in try handler(request, context) }
    }

    /// Adds a synchronous handler: cheap, never blocking work that may run on the event-loop
    /// thread. It does so only when all of the group's middleware is
    /// ``SynchronousRouterMiddleware`` (and the router's ``HTTPSynchronousMiddleware``);
    /// otherwise it runs in a task.
    @_disfavoredOverload
    package func on(_ method: HTTPMethod, _ path: String, synchronous handler: @escaping SynchronousHandler) {
        let synchronous = middleware.compactMap { $0 as? any SynchronousRouterMiddleware<Context> }
        guard synchronous.count == middleware.count else {
            on(method, path) { request, context async throws in try handler(request, context) }
            return
        }
        var chain = handler
        for middleware in synchronous.reversed() {
            let next = chain
            chain = { request, context in try middleware.handle(request, context: context, next: next) }
        }
        router.add(method, route(path), handler: .synchronous { [chain] request in
            try chain(request, Context(source: HTTPRequestContextSource(request)))
        })
    }

    /// Adds an asynchronous `GET` handler; `HEAD` uses it too.
    package func get(_ path: String, _ handler: @escaping Handler) { on(.get, path, handler) }
    /// Adds a `GET` handler that runs in a task although it does not `await`.
    package func get(_ path: String, _ handler: @escaping SynchronousHandler) { on(.get, path, handler) }
    /// Adds a synchronous `GET` handler; see ``on(_:_:synchronous:)``.
    @_disfavoredOverload
    package func get(_ path: String, synchronous handler: @escaping SynchronousHandler) {
        on(.get, path, synchronous: handler)
    }

    /// Adds an asynchronous `POST` handler.
    package func post(_ path: String, _ handler: @escaping Handler) { on(.post, path, handler) }
    /// Adds a `POST` handler that runs in a task although it does not `await`.
    package func post(_ path: String, _ handler: @escaping SynchronousHandler) { on(.post, path, handler) }

    /// Adds an asynchronous `PUT` handler.
    package func put(_ path: String, _ handler: @escaping Handler) { on(.put, path, handler) }
    /// Adds a `PUT` handler that runs in a task although it does not `await`.
    package func put(_ path: String, _ handler: @escaping SynchronousHandler) { on(.put, path, handler) }

    /// Adds an asynchronous `PATCH` handler.
    package func patch(_ path: String, _ handler: @escaping Handler) { on(.patch, path, handler) }
    /// Adds a `PATCH` handler that runs in a task although it does not `await`.
    package func patch(_ path: String, _ handler: @escaping SynchronousHandler) { on(.patch, path, handler) }

    /// Adds an asynchronous `DELETE` handler.
    package func delete(_ path: String, _ handler: @escaping Handler) { on(.delete, path, handler) }
    /// Adds a `DELETE` handler that runs in a task although it does not `await`.
    package func delete(_ path: String, _ handler: @escaping SynchronousHandler) { on(.delete, path, handler) }

    // MARK: Building

    /// The full pattern of the route `path` in this group.
    private func route(_ path: String) -> String {
        precondition(path.isEmpty || path.first == "/", "RouterGroup: a route path starts with / or is empty: \(path)")
        let pattern = self.path + path
        return pattern.isEmpty ? "/" : pattern
    }

    /// `handler` inside `middleware`, the first outermost; built once, when the route is added.
    private static func chain(_ middleware: [any RouterMiddleware<Context>], _ handler: @escaping Handler) -> Handler {
        var chain = handler
        for middleware in middleware.reversed() {
            let next = chain
            chain = { request, context in try await middleware.handle(request, context: context, next: next) }
        }
        return chain
    }
}
