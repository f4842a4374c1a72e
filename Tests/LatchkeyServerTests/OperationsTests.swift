import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

@Suite("Operations endpoints")
struct OperationsTests {
    @Test("/healthz answers ok as JSON with a request id")
    func healthz() async throws {
        try await TestServer.with { server in
            let response = try await server.request(.get, "/healthz")
            #expect(response.status == 200)
            // Raw JSON: the probe's body is exactly this object, and LatchkeyWire models only /v1 bodies.
            #expect(try response.json == ["status": "ok"])
            #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
            #expect((response.headers["X-Request-Id"] ?? "").count >= 16)
        }
    }

    @Test("/readyz is 200 while the database answers and 503 not_ready once it does not")
    func readyz() async throws {
        try await TestServer.with { server in
            let ready = try await server.request(.get, "/readyz")
            #expect(ready.status == 200)
            // Raw JSON: the probe's body is exactly this object, and LatchkeyWire models only /v1 bodies.
            #expect(try ready.json == ["status": "ready"])
            await server.database.close()
            let broken = try await server.request(.get, "/readyz")
            #expect(broken.status == 503)
            #expect(try broken.wireError.error == .notReady)
            // Liveness does not depend on the database.
            #expect(try await server.request(.get, "/healthz").status == 200)
        }
    }

    @Test("/metrics counts requests by method, route and status in Prometheus text")
    func metrics() async throws {
        try await TestServer.with { server in
            // Over the socket: the request counters are fed by the access log, which only the
            // wire writes.
            for _ in 0..<3 { _ = try await server.requestOverSocket(.get, "/healthz") }
            _ = try await server.requestOverSocket(.get, "/no/such/path")
            let response = try await server.requestOverSocket(.get, "/metrics")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = response.text
            #expect(text.contains(#"latchkey_http_requests_total{method="GET",route="/healthz",status="200"} 3"#))
            #expect(text.contains(#"status="404""#))
            #expect(!text.contains("/no/such/path"), "unmatched paths never become label values")
            #expect(text.contains("# TYPE latchkey_http_request_duration_seconds histogram"))
            #expect(text.contains("latchkey_http_connections "))
        }
    }

    @Test("apple-app-site-association lists the configured apps as JSON, without a redirect")
    func appSiteAssociation() async throws {
        try await TestServer.with({ configuration in
            configuration.associatedDomains.webcredentials = ["ABCDE12345.com.example.app"]
            configuration.associatedDomains.applinks = ["ABCDE12345.com.example.app"]
        }) { server in
            let response = try await server.request(.get, "/.well-known/apple-app-site-association")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
            // Raw JSON: apple-app-site-association is Apple's format, not a /v1 body LatchkeyWire models.
            let json = try response.json
            #expect(json["webcredentials"]?["apps"] == ["ABCDE12345.com.example.app"])
            let details = try #require(json["applinks"]?["details"]?.arrayValue)
            #expect(details.count == 1)
            #expect(details.first?["appIDs"] == ["ABCDE12345.com.example.app"])
            // The mailed links only (the SDK's universal-link handler); the hosted pages and
            // /oauth/authorize stay in the browser.
            #expect(details.first?["components"] == [["/": "/email/*", "comment": "Latchkey's mailed links: verify, reset, sign-in, change"]])
        }
    }

    @Test("S24: an unknown path is a JSON 404 and a wrong method a JSON 405")
    func notFound() async throws {
        try await TestServer.with { server in
            let missing = try await server.request(.get, "/v1/nothing")
            #expect(missing.status == 404)
            #expect(try missing.wireError.error == .notFound)
            let wrongMethod = try await server.request(.post, "/healthz", json: [:])
            #expect(wrongMethod.status == 405)
            #expect(try !wrongMethod.wireError.error.rawValue.isEmpty)
        }
    }

    @Test("start-up applies every migration and records it in the database")
    func migrations() async throws {
        try await TestServer.with { server in
            let versions = try await Migrator.appliedVersions(server.database)
            #expect(versions == LatchkeySchema.migrations.map(\.version))
            #expect(server.application.appliedMigrations.count == LatchkeySchema.migrations.count)
        }
    }
}

@Suite("Store errors on every route")
struct StoreErrorMappingTests {
    @Test("S24: a busy database is 503 overloaded, failing storage 503 unavailable, both with Retry-After, a clash 409 conflict, anything else a bare 500")
    func s24StoreErrors() async throws {
        let router = Router()
        router.add(middleware: StoreErrorMiddleware())
        router.get("/busy") { _ in throw StoreError.busy("the writer queue is full") }
        router.get("/clash", synchronous: { _ in throw StoreError.constraint("UNIQUE constraint failed: users.secret_column") })
        router.get("/full") { _ in throw StoreError.io("database or disk is full at /var/lib/secret") }
        router.get("/broken") { _ in throw StoreError.corrupt("database disk image is malformed at /var/lib/secret") }
        let errors = ErrorMiddleware()
        func answer(_ path: String) async -> HTTPResponse {
            let request = HTTPRequest(method: .get, path: path, requestID: "r1")
            return await errors.respond(to: request, next: router)
        }
        let busy = await answer("/busy")
        #expect(busy.status == 503 && busy.headers["Retry-After"] == "1")
        #expect(try WireErrorBody(parsing: busy.body).error == .overloaded)
        let clash = await answer("/clash")
        #expect(clash.status == 409)
        #expect(try WireErrorBody(parsing: clash.body).error == .conflict)
        #expect(!String(decoding: clash.body, as: UTF8.self).contains("secret_column"), "S26: no internals in the body")
        let full = await answer("/full")
        #expect(full.status == 503 && full.headers["Retry-After"] == "5")
        #expect(try WireErrorBody(parsing: full.body).error == .unavailable)
        #expect(!String(decoding: full.body, as: UTF8.self).contains("secret"))
        let broken = await answer("/broken")
        #expect(broken.status == 500)
        #expect(!String(decoding: broken.body, as: UTF8.self).contains("secret"))
    }
}
