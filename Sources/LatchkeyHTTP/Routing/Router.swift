import Synchronization

/// Maps method and path to handlers, and runs them through the middleware.
///
/// Build it once (routes, then middleware, in any order) before the server starts; the first
/// request freezes it, and adding a route after that stops the process. Frozen, it is read
/// without locks from every event loop.
///
/// Paths are literal segments and `{name}` parameters: `/v1/sessions/{id}`. The request path is
/// split on `/` before percent-decoding, so `%2F` stays inside one parameter. An unknown path
/// gives 404 `not_found`, a known path with another method 405 with `Allow`. `HEAD` uses the
/// `GET` handler when there is no `HEAD` route (RFC 9110 §9.3.2); the server drops the body.
///
/// Handlers run in a task unless registered with the explicit `synchronous:` label; a trailing
/// closure always means a task, whether or not it awaits. Middleware sees errors thrown by the
/// handler (and the 404 and 405 answers) as thrown errors; the server maps them last.
package final class Router: HTTPResponder, Sendable {
    private struct Definition {
        var method: HTTPMethod
        var pattern: String
        var handler: Route.Handler
    }

    private struct Building {
        var definitions: [Definition] = []
        var middleware: [any HTTPMiddleware] = []
    }

    private let building = Mutex(Building())
    private let frozen = AtomicLazyReference<RouteTable>()

    /// Creates an empty router.
    package init() {}

    // MARK: Building

    /// Adds an asynchronous handler for `method` and `path`. Use it for anything that touches the
    /// database, hashes a password or calls out: it runs in a task, off the event loop.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: A pattern such as `/v1/sessions/{id}`.
    ///   - handler: Answers the request; may throw an ``HTTPResponseError``.
    package func on(
        _ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        add(Definition(method: method, pattern: path, handler: .asynchronous(handler)))
    }

    /// Adds a handler that runs in a task, off the event loop, although it does not `await`.
    ///
    /// This overload exists so that a trailing closure never lands on the event loop by accident:
    /// `router.get("/v1/me") { request in try store.user(...) }` may block (a database read), so
    /// it runs in a task like any asynchronous handler. Only the explicit `synchronous:` label
    /// puts a handler on the loop.
    package func on(
        _ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(Definition(method: method, pattern: path, handler: .asynchronous { try handler($0) }))
    }

    /// Adds a synchronous handler: cheap, never blocking work (health checks, documents held in
    /// memory) that the server may run directly on the event-loop thread, without a task.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: A pattern such as `/healthz`.
    ///   - handler: Answers the request within microseconds; may throw an ``HTTPResponseError``.
    @_disfavoredOverload
    package func on(
        _ method: HTTPMethod, _ path: String, synchronous handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(Definition(method: method, pattern: path, handler: .synchronous(handler)))
    }

    /// Adds an asynchronous `GET` handler; see ``on(_:_:_:)``.
    package func get(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        on(.get, path, handler)
    }

    /// Adds a `GET` handler that runs in a task although it does not `await`: a trailing closure never lands on the event loop.
    package func get(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.get, path, handler)
    }

    /// Adds a synchronous `GET` handler; see ``on(_:_:synchronous:)``.
    @_disfavoredOverload
    package func get(_ path: String, synchronous handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.get, path, synchronous: handler)
    }

    /// Adds an asynchronous `POST` handler; see ``on(_:_:_:)``.
    package func post(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        on(.post, path, handler)
    }

    /// Adds a `POST` handler that runs in a task although it does not `await`: a trailing closure never lands on the event loop.
    package func post(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.post, path, handler)
    }

    /// Adds a synchronous `POST` handler; see ``on(_:_:synchronous:)``.
    @_disfavoredOverload
    package func post(_ path: String, synchronous handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.post, path, synchronous: handler)
    }

    /// Adds an asynchronous `PUT` handler; see ``on(_:_:_:)``.
    package func put(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        on(.put, path, handler)
    }

    /// Adds a `PUT` handler that runs in a task although it does not `await`: a trailing closure never lands on the event loop.
    package func put(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.put, path, handler)
    }

    /// Adds an asynchronous `PATCH` handler; see ``on(_:_:_:)``.
    package func patch(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        on(.patch, path, handler)
    }

    /// Adds a `PATCH` handler that runs in a task although it does not `await`: a trailing closure never lands on the event loop.
    package func patch(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.patch, path, handler)
    }

    /// Adds an asynchronous `DELETE` handler; see ``on(_:_:_:)``.
    package func delete(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        on(.delete, path, handler)
    }

    /// Adds a `DELETE` handler that runs in a task although it does not `await`: a trailing closure never lands on the event loop.
    package func delete(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(.delete, path, handler)
    }

    /// Adds a middleware that runs around every route, and around the 404 and 405 answers.
    /// Middleware added first runs outermost.
    package func add(middleware: any HTTPMiddleware) {
        building.withLock { state in
            precondition(frozen.load() == nil, "Router: middleware added after the first request")
            state.middleware.append(middleware)
        }
    }

    /// A group of routes under `path` whose requests carry a `Context` and pass through
    /// `middleware` (outermost first) inside the router-wide middleware; see ``RouterGroup``.
    ///
    /// - Parameters:
    ///   - path: The prefix, such as `/v1`; empty or `/` for the root.
    ///   - context: The type of the context each request to the group's routes gets.
    ///   - middleware: Runs around the group's routes only.
    package func group<Context: HTTPRequestContext>(
        _ path: String, context: Context.Type, middleware: any RouterMiddleware<Context>...
    ) -> RouterGroup<Context> {
        RouterGroup(router: self, path: path, middleware: middleware)
    }

    /// A group of routes under `path` whose context type is that of its first middleware:
    /// `router.group("/v1/me", middleware: bearer)`; see ``RouterGroup``.
    ///
    /// - Parameters:
    ///   - path: The prefix, such as `/v1`; empty or `/` for the root.
    ///   - middleware: Runs around the group's routes only, outermost.
    ///   - more: Runs inside `middleware`, in order.
    package func group<First: RouterMiddleware>(
        _ path: String, middleware: First, _ more: any RouterMiddleware<First.Context>...
    ) -> RouterGroup<First.Context> {
        RouterGroup(router: self, path: path, middleware: [middleware] + more)
    }

    /// A group of routes under `path` with the ``BasicRequestContext``; see ``RouterGroup``.
    @_disfavoredOverload
    package func group(_ path: String, middleware: any RouterMiddleware<BasicRequestContext>...) -> RouterGroup<BasicRequestContext> {
        RouterGroup(router: self, path: path, middleware: middleware)
    }

    /// Adds a route built elsewhere in this module (a ``RouterGroup``'s).
    func add(_ method: HTTPMethod, _ pattern: String, handler: Route.Handler) {
        add(Definition(method: method, pattern: pattern, handler: handler))
    }

    private func add(_ definition: Definition) {
        precondition(definition.pattern.first == "/", "Router: a path pattern starts with /: \(definition.pattern)")
        building.withLock { state in
            precondition(frozen.load() == nil, "Router: route added after the first request")
            precondition(
                !state.definitions.contains { $0.method == definition.method && $0.pattern == definition.pattern },
                "Router: \(definition.method) \(definition.pattern) is registered twice")
            state.definitions.append(definition)
        }
    }

    /// Every registered method and path pattern, in the order they were added: for tests that
    /// hold the routes against the documented contract.
    package var routes: [(method: HTTPMethod, pattern: String)] {
        building.withLock { state in state.definitions.map { ($0.method, $0.pattern) } }
    }

    // MARK: Answering

    /// The frozen table; built on first use.
    package var table: RouteTable {
        if let table = frozen.load() { return table }
        let table = building.withLock { state in
            RouteTable(
                definitions: state.definitions.map { ($0.method, $0.pattern, $0.handler) },
                middleware: state.middleware)
        }
        return frozen.storeIfNil(table)
    }

    package func respond(to request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        let route = table.resolve(&request)
        return try await route.respond(to: request)
    }
}

/// One resolved route: its pattern and its handler wrapped in the middleware.
package final class Route: Sendable {
    enum Handler: Sendable {
        case synchronous(@Sendable (HTTPRequest) throws -> HTTPResponse)
        case asynchronous(@Sendable (HTTPRequest) async throws -> HTTPResponse)
    }

    /// The pattern for the access log; `nil` for the 404 and 405 answers.
    package let pattern: String?
    let handler: Handler
    /// The handler inside every middleware, for the task path.
    let chain: any HTTPResponder
    /// The synchronous middleware, when the whole route can run on the loop.
    let synchronousMiddleware: [any HTTPSynchronousMiddleware]?

    init(pattern: String?, handler: Handler, middleware: [any HTTPMiddleware]) {
        self.pattern = pattern
        self.handler = handler
        var chain: any HTTPResponder = HandlerResponder(handler: handler)
        for middleware in middleware.reversed() { chain = MiddlewareResponder(middleware: middleware, next: chain) }
        self.chain = chain
        let synchronous = middleware.compactMap { $0 as? any HTTPSynchronousMiddleware }
        if case .synchronous = handler, synchronous.count == middleware.count {
            self.synchronousMiddleware = synchronous
        } else {
            self.synchronousMiddleware = nil
        }
    }

    /// Whether ``respondSynchronously(to:)`` may be used.
    package var isSynchronous: Bool { synchronousMiddleware != nil }

    package func respond(to request: HTTPRequest) async throws -> HTTPResponse {
        try await chain.respond(to: request)
    }

    /// Runs the route without suspending; only when ``isSynchronous``.
    package func respondSynchronously(to request: HTTPRequest) throws -> HTTPResponse {
        guard case .synchronous(let handler) = handler, let middleware = synchronousMiddleware else {
            preconditionFailure("Route: not synchronous")
        }
        return try Self.run(middleware[...], handler, request)
    }

    private static func run(
        _ middleware: ArraySlice<any HTTPSynchronousMiddleware>, _ handler: (HTTPRequest) throws -> HTTPResponse,
        _ request: HTTPRequest
    ) throws -> HTTPResponse {
        guard let first = middleware.first else { return try handler(request) }
        return try first.respond(to: request) { try run(middleware.dropFirst(), handler, $0) }
    }
}

extension Route: HTTPResponder {}

private struct HandlerResponder: HTTPResponder {
    let handler: Route.Handler

    func respond(to request: HTTPRequest) async throws -> HTTPResponse {
        switch handler {
        case .synchronous(let handler): try handler(request)
        case .asynchronous(let handler): try await handler(request)
        }
    }
}

private struct MiddlewareResponder: HTTPResponder {
    let middleware: any HTTPMiddleware
    let next: any HTTPResponder

    func respond(to request: HTTPRequest) async throws -> HTTPResponse {
        try await middleware.respond(to: request, next: next)
    }
}

/// The frozen routes: a dictionary for literal paths, a list of segment patterns for the rest.
package final class RouteTable: Sendable {
    private enum Segment: Sendable {
        case literal(String)
        case parameter(String)
    }

    private struct Pattern: Sendable {
        let segments: [Segment]
        let routes: [HTTPMethod: Route]

        var parameterCount: Int { segments.count { if case .parameter = $0 { true } else { false } } }
    }

    private let literalPaths: [String: [HTTPMethod: Route]]
    private let patterns: [Pattern]
    private let notFound: Route
    private let allowedByMethodSet: [String: Route]
    private let middleware: [any HTTPMiddleware]

    init(definitions: [(HTTPMethod, String, Route.Handler)], middleware: [any HTTPMiddleware]) {
        var byPattern: [String: [HTTPMethod: Route]] = [:]
        var order: [String] = []
        for (method, pattern, handler) in definitions {
            if byPattern[pattern] == nil { order.append(pattern) }
            byPattern[pattern, default: [:]][method] = Route(pattern: pattern, handler: handler, middleware: middleware)
        }
        var literalPaths: [String: [HTTPMethod: Route]] = [:]
        var patterns: [Pattern] = []
        for pattern in order {
            let segments: [Segment] = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
                $0.hasPrefix("{") && $0.hasSuffix("}") && $0.count > 2
                    ? .parameter(String($0.dropFirst().dropLast())) : .literal(String($0))
            }
            if !segments.contains(where: { if case .parameter = $0 { true } else { false } }) {
                literalPaths[pattern] = byPattern[pattern]
            }
            patterns.append(Pattern(segments: segments, routes: byPattern[pattern]!))
        }
        self.literalPaths = literalPaths
        self.patterns = patterns.enumerated().sorted { lhs, rhs in
            let left = lhs.element.parameterCount
            let right = rhs.element.parameterCount
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
        self.middleware = middleware
        self.notFound = Route(
            pattern: nil, handler: .synchronous { _ in throw HTTPError.notFound() }, middleware: middleware)
        // One 405 route per distinct set of methods, built here so that answering 405 allocates
        // nothing more than the response.
        var allowed: [String: Route] = [:]
        for routes in byPattern.values {
            let methods = Self.allowedMethods(routes)
            let key = methods.map(\.rawValue).joined(separator: ", ")
            if allowed[key] == nil {
                allowed[key] = Route(
                    pattern: nil, handler: .synchronous { _ in throw HTTPError.methodNotAllowed(allowed: methods) },
                    middleware: middleware)
            }
        }
        self.allowedByMethodSet = allowed
    }

    private static func allowedMethods(_ routes: [HTTPMethod: Route]) -> [HTTPMethod] {
        var methods = Array(routes.keys)
        if routes[.get] != nil && routes[.head] == nil { methods.append(.head) }
        return methods.sorted { $0.rawValue < $1.rawValue }
    }

    /// The route for `request`, with `pathParameters` filled in; the 404 or 405 route when none.
    ///
    /// A literal path wins over a pattern with parameters; among patterns, fewer parameters win.
    /// 405 lists the methods of every pattern that matched the path.
    package func resolve(_ request: inout HTTPRequest) -> Route {
        let encoded = request.encodedPath
        if encoded == nil || !encoded!.utf8.contains(UInt8(ascii: "%")), let routes = literalPaths[request.path],
            let route = Self.route(in: routes, for: request.method)
        {
            return route
        }
        let segments: [Substring]
        if let encoded {
            var decoded: [Substring] = []
            for segment in encoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
                guard let text = PercentEncoding.decode(segment, plusIsSpace: false) else { return notFound }
                decoded.append(Substring(text))
            }
            segments = decoded
        } else {
            segments = Array(request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
        }
        var matched: [[HTTPMethod: Route]] = []
        for pattern in patterns where pattern.segments.count == segments.count {
            var parameters: [String: String] = [:]
            var matches = true
            for (segment, value) in zip(pattern.segments, segments) {
                switch segment {
                case .literal(let literal): matches = literal == value
                case .parameter(let name):
                    matches = !value.isEmpty
                    parameters[name] = String(value)
                }
                if !matches { break }
            }
            guard matches else { continue }
            if let route = Self.route(in: pattern.routes, for: request.method) {
                request.pathParameters = parameters
                return route
            }
            matched.append(pattern.routes)
        }
        guard !matched.isEmpty else { return notFound }
        let union = matched.reduce(into: [HTTPMethod: Route]()) { $0.merge($1) { first, _ in first } }
        let methods = Self.allowedMethods(union)
        if let route = allowedByMethodSet[methods.map(\.rawValue).joined(separator: ", ")] { return route }
        return Route(
            pattern: nil, handler: .synchronous { _ in throw HTTPError.methodNotAllowed(allowed: methods) },
            middleware: middleware)
    }

    private static func route(in routes: [HTTPMethod: Route], for method: HTTPMethod) -> Route? {
        if let route = routes[method] { return route }
        if method == .head { return routes[.get] }
        return nil
    }
}
