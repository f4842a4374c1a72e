import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
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
            let response = try #require(try exchange(port, get("/healthz")))
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
            let response = try #require(try exchange(port, get("/v1/sessions/abc%2Fdef%20x")))
            #expect(response.status == 200)
            #expect(response.json == ["id": "abc/def x", "loop": "task"])
            let literal = try #require(try exchange(port, get("/v1/sessions/current")))
            #expect(literal.json == ["current": true])
        }
    }
}
