import Foundation
import LatchkeyHTTP
import LatchkeyJSON
import Testing

@Suite("Routing and handlers")
struct RoutingTests {
    static func router() -> Router {
        let router = Router()
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        router.get("/v1/sessions/{id}") { request in
            try await Task.sleep(for: .milliseconds(5))
            return .json(["id": .string(request.pathParameters["id"] ?? "?"), "loop": "task"])
        }
        router.delete("/v1/sessions/{id}") { _ in .empty() }
        router.get("/v1/sessions/current", synchronous: { _ in .json(["current": true]) })
        router.post("/echo") { request in .json(try request.jsonBody()) }
        router.post("/form") { request in .json(.object(try request.formBody().mapValues { .string($0) })) }
        router.get("/query", synchronous: { request in .json(.object(request.query.mapValues { .string($0) })) })
        return router
    }

    @Test("a synchronous route answers on the loop")
    func synchronousRoute() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, get("/healthz")))
            #expect(response.status == 200)
            #expect(response.json == ["status": "ok"])
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            #expect(response.header("X-Request-Id")?.count == 32)
            #expect(response.header("Date") != nil)
        }
    }

    @Test("an asynchronous route gets its path parameter, percent-decoded after splitting")
    func asynchronousRouteWithParameters() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, get("/v1/sessions/abc%2Fdef%20x")))
            #expect(response.status == 200)
            #expect(response.json == ["id": "abc/def x", "loop": "task"])
            let literal = try #require(try await exchange(port, get("/v1/sessions/current")))
            #expect(literal.json == ["current": true])
        }
    }
}

extension RoutingTests {
    @Test("S24: an unknown path is 404 with the JSON error body of docs/reference.md")
    func notFound() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, get("/nope")))
            #expect(response.status == 404)
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            let body = try #require(response.json?.objectValue)
            #expect(Set(body.keys) == ["error", "error_description"])
            #expect(body["error"] == "not_found")
            #expect(response.header("X-Request-Id") != nil)
        }
    }

    @Test("S24: a known path with another method is 405 with Allow and a JSON body")
    func methodNotAllowed() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, post("/v1/sessions/abc", body: "{}")))
            #expect(response.status == 405)
            #expect(response.header("Allow") == "DELETE, GET, HEAD")
            #expect(response.json?["error"] == "method_not_allowed")
            let literal = try #require(try await exchange(port, post("/healthz", body: "{}")))
            #expect(literal.status == 405)
            #expect(literal.header("Allow") == "GET, HEAD")
        }
    }

    @Test("HEAD runs the GET route and sends no body")
    func head() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "15")
            #expect(response.body.isEmpty)
        }
    }

    @Test("query parameters are form-decoded; a repeated one is refused with 400")
    func query() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, get("/query?a=1+2&b=%C3%A9&c")))
            #expect(response.json == ["a": "1 2", "b": "é", "c": ""])
            let repeated = try #require(try await exchange(port, get("/query?a=1&a=2")))
            #expect(repeated.status == 400)
            #expect(repeated.json?["error"] == "invalid_request")
        }
    }

    @Test("pipelined requests are answered in order on one connection")
    func pipelining() async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(get("/v1/sessions/one") + get("/healthz") + get("/v1/sessions/two"))
            #expect(await connection.readResponse()?.json?["id"] == "one")
            #expect(await connection.readResponse()?.json == ["status": "ok"])
            #expect(await connection.readResponse()?.json?["id"] == "two")
        }
    }

    @Test("a safe incoming X-Request-Id is kept; an unsafe one is replaced")
    func requestID() async throws {
        try await withServer(Self.router()) { _, port in
            let kept = try #require(try await exchange(port, get("/healthz", headers: "X-Request-Id: abc-123.DEF_4\r\n")))
            #expect(kept.header("X-Request-Id") == "abc-123.DEF_4")
            let replaced = try #require(try await exchange(port, get("/healthz", headers: "X-Request-Id: a b<script>\r\n")))
            #expect(replaced.header("X-Request-Id")?.count == 32)
            #expect(replaced.header("X-Request-Id")?.allSatisfy(\.isHexDigit) == true)
        }
    }

    @Test("the router alone resolves patterns, literal before parameter, without a server")
    func routerWithoutServer() async throws {
        let router = Self.router()
        let literal = try await router.respond(to: HTTPRequest(method: .get, path: "/v1/sessions/current"))
        #expect(try JSONValue(parsing: literal.body) == ["current": true])
        let deleted = try await router.respond(to: HTTPRequest(method: .delete, path: "/v1/sessions/current"))
        #expect(deleted.status == 204)
        await #expect(throws: HTTPError.notFound()) {
            try await router.respond(to: HTTPRequest(method: .get, path: "/v1/sessions/"))
        }
    }
}
