import Foundation
import LatchkeyHTTP
import LatchkeyJSON
import Synchronization
import Testing

/// A context that records which group middleware a request passed, outermost first.
struct TraceContext: HTTPRequestContext {
    let requestID: String
    var trace: [String] = []

    init(source: HTTPRequestContextSource) {
        requestID = source.requestID
    }
}

/// Appends its name to the context's trace; synchronous, so a synchronous route stays on the loop.
struct Mark: SynchronousRouterMiddleware {
    let name: String

    func handle(
        _ request: HTTPRequest, context: TraceContext, next: (HTTPRequest, TraceContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var context = context
        context.trace.append(name)
        return try await next(request, context)
    }

    func handle(
        _ request: HTTPRequest, context: TraceContext, next: (HTTPRequest, TraceContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        var context = context
        context.trace.append(name)
        return try next(request, context)
    }
}

/// Appends its name after a suspension point: only asynchronous.
struct SuspendingMark: RouterMiddleware {
    let name: String

    func handle(
        _ request: HTTPRequest, context: TraceContext, next: (HTTPRequest, TraceContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        await Task.yield()
        var context = context
        context.trace.append(name)
        return try await next(request, context)
    }
}

/// Counts the requests it sees and refuses each with 401.
struct Refuse: RouterMiddleware {
    let seen: Counter

    func handle(
        _ request: HTTPRequest, context: TraceContext, next: (HTTPRequest, TraceContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        seen.increment()
        throw HTTPError(status: 401, code: "invalid_token", description: "refused by the group")
    }
}

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// A router-wide middleware that stamps the request, so the handler can tell it ran first.
struct Stamp: HTTPSynchronousMiddleware {
    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        var request = request
        request.headers.add("X-Trace", "router")
        return try await next.respond(to: request)
    }

    func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse {
        var request = request
        request.headers.add("X-Trace", "router")
        return try next(request)
    }
}

/// What a traced handler answers: the router's stamp, the group trace and the context's request id.
@Sendable func traced(_ request: HTTPRequest, _ context: TraceContext) -> HTTPResponse {
    .json([
        "trace": .array(request.headers.values("X-Trace").map(JSONValue.string) + context.trace.map(JSONValue.string)),
        "request_id": .string(context.requestID), "path": .string(request.path),
    ])
}

@Suite("Route groups, their middleware and the typed request context")
struct RouterGroupTests {
    @Test("a group prefixes its routes; nested groups join their paths; the route \"\" is the group's own path")
    func prefixing() async throws {
        let router = Router()
        let v1 = router.group("/v1", context: TraceContext.self)
        v1.get("/me", synchronous: traced)
        v1.group("/admin/").post("/users") { request, context in traced(request, context) }
        router.group("/v1/sessions", context: TraceContext.self).delete("") { request, context in traced(request, context) }
        router.group("/", context: TraceContext.self).get("/healthz", synchronous: traced)
        #expect(router.routes.map(\.pattern) == ["/v1/me", "/v1/admin/users", "/v1/sessions", "/healthz"])
        #expect(router.routes.map(\.method) == [.get, .post, .delete, .get])

        let me = try await router.respond(to: HTTPRequest(method: .get, path: "/v1/me", requestID: "r1"))
        #expect(try JSONValue(parsing: me.body)["path"] == "/v1/me")
        await #expect(throws: HTTPError.notFound()) { try await router.respond(to: HTTPRequest(method: .get, path: "/me")) }
        await #expect(throws: HTTPError.notFound()) { try await router.respond(to: HTTPRequest(method: .post, path: "/v1/users")) }
        let users = try await router.respond(to: HTTPRequest(method: .post, path: "/v1/admin/users"))
        #expect(users.status == 200)
    }

    @Test("group middleware runs only for the group's routes, inside the router's, the outer group's first")
    func middlewareOrder() async throws {
        let router = Router()
        router.add(middleware: Stamp())
        let outer = router.group("/v1", context: TraceContext.self, middleware: Mark(name: "outer-1"), Mark(name: "outer-2"))
        let inner = outer.group("/me", middleware: SuspendingMark(name: "inner"))
        inner.get("/sessions") { request, context in traced(request, context) }
        outer.get("/keys", synchronous: traced)
        router.group("/other", context: TraceContext.self).get("", synchronous: traced)
        router.get("/plain", synchronous: { request in .json(["trace": .array(request.headers.values("X-Trace").map(JSONValue.string))]) })

        try await withServer(router) { _, port in
            let grouped = try #require(try await exchange(port, get("/v1/me/sessions", headers: "X-Request-Id: abc123\r\n")))
            #expect(grouped.status == 200)
            #expect(grouped.json?["trace"] == ["router", "outer-1", "outer-2", "inner"])
            #expect(grouped.json?["request_id"] == "abc123")
            #expect(grouped.header("X-Request-Id") == "abc123")
            let keys = try #require(try await exchange(port, get("/v1/keys")))
            #expect(keys.json?["trace"] == ["router", "outer-1", "outer-2"])
            let other = try #require(try await exchange(port, get("/other")))
            #expect(other.json?["trace"] == ["router"])
            let plain = try #require(try await exchange(port, get("/plain")))
            #expect(plain.json?["trace"] == ["router"])
        }
    }

    @Test("S24: 404 and 405 on a group's paths are the router's answers and run no group middleware")
    func notFoundAndMethodNotAllowed() async throws {
        let seen = Counter()
        let router = Router()
        let group = router.group("/v1/me", context: TraceContext.self, middleware: Refuse(seen: seen))
        group.get("") { request, context in traced(request, context) }
        group.delete("/sessions/{id}") { request, context in traced(request, context) }
        try await withServer(router) { _, port in
            let wrongMethod = try #require(try await exchange(port, post("/v1/me", body: "{}")))
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "GET, HEAD")
            #expect(wrongMethod.json?["error"] == "method_not_allowed")
            let parameter = try #require(try await exchange(port, get("/v1/me/sessions/abc")))
            #expect(parameter.status == 405)
            #expect(parameter.header("Allow") == "DELETE")
            let unknown = try #require(try await exchange(port, get("/v1/me/nothing")))
            #expect(unknown.status == 404)
            #expect(unknown.json == ["error": "not_found", "error_description": "no such resource"])
            #expect(seen.value == 0)
            // The group's own routes do reach its middleware, which refuses them.
            let refused = try #require(try await exchange(port, get("/v1/me")))
            #expect(refused.status == 401)
            #expect(refused.json == ["error": "invalid_token", "error_description": "refused by the group"])
            #expect(seen.value == 1)
        }
    }

    @Test("HEAD on a group's GET route runs its middleware and handler and sends no body")
    func head() async throws {
        let router = Router()
        router.group("/v1", middleware: Mark(name: "group")).get("/me", synchronous: traced)
        try await withServer(router) { _, port in
            let full = try #require(try await exchange(port, get("/v1/me", headers: "X-Request-Id: same\r\n")))
            let head = try #require(try await exchange(port, "HEAD /v1/me HTTP/1.1\r\nHost: x\r\nX-Request-Id: same\r\n\r\n"))
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(full.body.count))
            #expect(full.json?["trace"] == ["group"])
        }
    }

    @Test("a synchronous group route stays on the loop when all its middleware is synchronous, and moves to a task otherwise")
    func synchronousFastPath() throws {
        let router = Router()
        let synchronous = router.group("/sync", context: TraceContext.self, middleware: Mark(name: "a"))
        synchronous.get("/route", synchronous: traced)
        synchronous.get("/task") { request, context in traced(request, context) }
        synchronous.group("/suspending", middleware: SuspendingMark(name: "b")).get("/route", synchronous: traced)
        let withAsynchronousRouterMiddleware = Router()
        withAsynchronousRouterMiddleware.add(middleware: Suspending())
        withAsynchronousRouterMiddleware.group("/sync", context: TraceContext.self).get("/route", synchronous: traced)

        func resolve(_ router: Router, _ path: String) -> Route {
            var request = HTTPRequest(method: .get, path: path)
            return router.table.resolve(&request)
        }
        #expect(resolve(router, "/sync/route").isSynchronous)
        #expect(!resolve(router, "/sync/task").isSynchronous)
        #expect(!resolve(router, "/sync/suspending/route").isSynchronous)
        #expect(!resolve(withAsynchronousRouterMiddleware, "/sync/route").isSynchronous)
        let response = try resolve(router, "/sync/route").respondSynchronously(to: HTTPRequest(method: .get, path: "/sync/route", requestID: "x"))
        #expect(try JSONValue(parsing: response.body) == ["trace": ["a"], "request_id": "x", "path": "/sync/route"])
    }

    @Test("each request gets a fresh context: a middleware's change never leaks into the next request")
    func freshContext() async throws {
        let router = Router()
        router.group("/v1", context: TraceContext.self, middleware: Mark(name: "once")).get("/me") { request, context in
            traced(request, context)
        }
        for index in 0..<3 {
            let response = try await router.respond(to: HTTPRequest(method: .get, path: "/v1/me", requestID: "r\(index)"))
            #expect(try JSONValue(parsing: response.body) == ["trace": ["once"], "request_id": .string("r\(index)"), "path": "/v1/me"])
        }
    }
}

/// A router-wide middleware that is not synchronous.
struct Suspending: HTTPMiddleware {
    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        try await next.respond(to: request)
    }
}
