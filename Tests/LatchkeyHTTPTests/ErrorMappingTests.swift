import Foundation
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Synchronization
import Testing

private struct GrantError: HTTPResponseError {
    var status: Int { 400 }
    var errorCode: String { "invalid_grant" }
    var errorDescription: String { "the refresh token was already used" }
    var extraFields: [String: JSONValue] { ["reason": "reused"] }
    var extraHeaders: HTTPHeaders { ["Cache-Control": "no-store"] }
}

private struct DatabaseExploded: Error, CustomStringConvertible {
    var description: String { "sqlite: disk I/O error at /var/lib/secret-path; token=sk_live_SECRET" }
}

/// Adds a header on the way out; usable on the loop.
private struct StampMiddleware: HTTPSynchronousMiddleware {
    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        var response = try await next.respond(to: request)
        response.headers.add("X-Stamp", "async")
        return response
    }

    func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse {
        var response = try next(request)
        response.headers.add("X-Stamp", "sync")
        return response
    }
}

/// Refuses requests without a token; async only.
private struct AuthMiddleware: HTTPMiddleware {
    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        guard request.headers["Authorization"] != nil else {
            throw HTTPError(
                status: 401, code: "invalid_token", description: "a bearer token is required",
                headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        }
        return try await next.respond(to: request)
    }
}

@Suite("Error mapping")
struct ErrorMappingTests {
    static func router() -> Router {
        let router = Router()
        router.get("/grant") { _ in throw GrantError() }
        router.get("/boom") { _ in throw DatabaseExploded() }
        router.get("/boom-sync", synchronous: { _ in throw DatabaseExploded() })
        router.get("/busy", synchronous: { _ in throw HTTPError.overloaded(retryAfter: 3) })
        router.get("/limited") { _ in throw HTTPError.rateLimited(retryAfter: 30) }
        return router
    }

    @Test("S24: an HTTPResponseError becomes its status, JSON body and headers")
    func responseError() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try #require(try await exchange(port, get("/grant")))
            #expect(response.status == 400)
            #expect(
                response.json == [
                    "error": "invalid_grant", "error_description": "the refresh token was already used", "reason": "reused",
                ])
            #expect(response.header("Cache-Control") == "no-store")
            let busy = try #require(try await exchange(port, get("/busy")))
            #expect(busy.status == 503)
            #expect(busy.header("Retry-After") == "3")
            #expect(busy.json?["error"] == "overloaded")
            let limited = try #require(try await exchange(port, get("/limited")))
            #expect(limited.status == 429)
            #expect(limited.header("Retry-After") == "30")
            #expect(limited.json?["retry_after"] == 30)
        }
    }

    @Test("S24 S26: any other error is a 500 that carries only the request id", arguments: ["/boom", "/boom-sync"])
    func unexpectedError(path: String) async throws {
        let seen = Mutex<[String]>([])
        let router = Self.router()
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, eventLoops: 1)
        configuration.limits = testLimits()
        let server = HTTPServer(configuration: configuration, responder: router) { error, _, _ in
            seen.withLock { $0.append("\(error)") }
        }
        try server.start()
        let response = try #require(try await exchange(server.boundPort, get(path)))
        await server.shutdown()
        let requestID = try #require(response.header("X-Request-Id"))
        #expect(response.status == 500)
        #expect(
            response.json == ["error": "server_error", "error_description": "internal error", "request_id": .string(requestID)])
        #expect(!response.text.contains("SECRET") && !response.text.contains("sqlite"))
        #expect(seen.withLock { $0 }.first?.contains("disk I/O") == true, "the error hook sees the cause")
    }

    @Test("middleware runs around every route; a trailing closure without await still runs in a task")
    func middleware() async throws {
        let router = Self.router()
        router.get("/sync", synchronous: { _ in .text("s") })
        router.get("/async") { _ in .text("a") }
        router.add(middleware: StampMiddleware())
        try await withServer(router) { _, port in
            let sync = try await exchange(port, get("/sync"))
            let async = try await exchange(port, get("/async"))
            let missing = try await exchange(port, get("/nope"))
            #expect(sync?.header("X-Stamp") == "sync")
            #expect(async?.header("X-Stamp") == "async")
            // A 404 reaches the middleware as a thrown error, so it is not stamped.
            #expect(missing?.status == 404 && missing?.header("X-Stamp") == nil)
        }
    }

    @Test("an error thrown by middleware is mapped like one from a handler")
    func middlewareError() async throws {
        let router = Router()
        router.get("/me", synchronous: { _ in .json(["id": "u1"]) })
        router.add(middleware: AuthMiddleware())
        try await withServer(router) { _, port in
            let refused = try #require(try await exchange(port, get("/me")))
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate") == #"Bearer error="invalid_token""#)
            #expect(refused.json?["error"] == "invalid_token")
            let allowed = try #require(try await exchange(port, get("/me", headers: "Authorization: Bearer t\r\n")))
            #expect(allowed.json == ["id": "u1"])
        }
    }

    @Test("S24: a response header value with CR LF is dropped rather than splitting the response")
    func headerInjection() async throws {
        let router = Router()
        router.get("/inject", synchronous: { _ in
            var response = HTTPResponse.text("ok")
            response.headers.add("X-Echo", "a\r\nSet-Cookie: x=1")
            response.headers.add("Bad Name", "1")
            response.headers.add("X-Fine", "yes")
            return response
        })
        try await withServer(router) { _, port in
            let response = try #require(try await exchange(port, get("/inject")))
            #expect(response.status == 200)
            #expect(response.header("Set-Cookie") == nil)
            #expect(response.header("X-Echo") == nil)
            #expect(response.header("X-Fine") == "yes")
        }
    }
}
