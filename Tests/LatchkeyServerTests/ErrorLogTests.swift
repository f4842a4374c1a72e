import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJSON
import LatchkeySandbox
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Synchronization
import Testing

/// Routes that fail the way a bug does: by throwing what no layer maps to a status.
private struct FailingRoutes: RouteMount {
    /// An error whose description holds what must never be logged: `String(describing:)` of it
    /// would put the secret in the line.
    struct LeakyFailure: Error, CustomStringConvertible {
        var description: String { "LEAKED-ERROR-SECRET" }
    }

    func register(on router: Router) {
        router.post("/test/failures/{id}") { _ in throw LeakyFailure() }
        router.get("/test/store-failure") { _ in throw StoreError.corrupt("database disk image is malformed") }
    }
}

/// Collects every ServerLog line written while `body` runs; raw JSON, as a log line is no wire body.
private func loggedLines<T>(_ body: () async throws -> T) async throws -> (T, [JSONValue]) {
    let lines = Mutex<[JSONValue]>([])
    let result = try await ServerLog.observing({ line in lines.withLock { $0.append(line) } }, body)
    return (result, lines.withLock { $0 })
}

@Suite("Error log")
struct ErrorLogTests {
    @Test("S24, S26: an unexpected error is a 500 carrying only the request id, and exactly one unexpected_error line with the route pattern and the error's type, none of the request or the error's text")
    func unexpectedErrorLine() async throws {
        try await TestServer.with(mounts: [FailingRoutes()]) { server in
            let (response, lines) = try await loggedLines {
                try await server.request(
                    .post, "/test/failures/PATH-SECRET", json: ["password": "BODY-SECRET"], headers: ["Authorization": "Bearer HEADER-SECRET"])
            }
            let requestID = try #require(response.headers["X-Request-Id"])
            #expect(response.status == 500)
            // Raw JSON on purpose: the body must hold these members and nothing else.
            #expect(try response.json == ["error": "server_error", "error_description": "internal error", "request_id": .string(requestID)])

            let mine = lines.filter { $0["request_id"]?.stringValue == requestID }
            #expect(mine.count == 1, "one line per 500")
            let line = try #require(mine.first)
            #expect(line["event"] == "unexpected_error")
            #expect(line["level"] == "error")
            #expect(line["method"] == "POST")
            #expect(line["route"] == "/test/failures/{id}", "the pattern, not the raw path")
            #expect(line["error_type"] == "LeakyFailure")
            #expect(line["error"] == nil, "an error type not known to be safe is logged by type alone")
            let text = line.serializedString
            for secret in ["PATH-SECRET", "BODY-SECRET", "HEADER-SECRET", "LEAKED-ERROR-SECRET"] {
                #expect(!text.contains(secret), "\(secret)")
            }
        }
    }

    @Test("an unexpected store error is described: its code and SQLite's message, which never hold a bound value")
    func storeErrorDescribed() async throws {
        try await TestServer.with(mounts: [FailingRoutes()]) { server in
            let (response, lines) = try await loggedLines { try await server.request(.get, "/test/store-failure") }
            let requestID = try #require(response.headers["X-Request-Id"])
            #expect(response.status == 500)
            let mine = lines.filter { $0["request_id"]?.stringValue == requestID }
            #expect(mine.count == 1)
            #expect(mine.first?["route"] == "/test/store-failure")
            #expect(mine.first?["error_type"] == "StoreError")
            #expect(mine.first?["error"] == "corrupt: database disk image is malformed")
        }
    }

    @Test("a request the router answers itself (404) or a mapped refusal writes no error line")
    func expectedFailuresAreNotLogged() async throws {
        try await TestServer.with { server in
            let (responses, lines) = try await loggedLines {
                [try await server.request(.get, "/no/such/route"), try await server.request(.get, "/v1/me")]
            }
            #expect(responses.map(\.status) == [404, 401])
            let ids = Set(responses.compactMap { $0.headers["X-Request-Id"] })
            #expect(!lines.contains { $0["request_id"]?.stringValue.map(ids.contains) == true })
        }
    }

    @Test("sandbox notify: bad input is a 400, not a 500 (a sub too long for the server's body limit used to reset the sandbox's own send)")
    func sandboxNotifyBadInput() async throws {
        try await TestServer.with { server in
            let (responses, lines) = try await loggedLines {
                [
                    try await server.request(.post, "/sandbox/apple/notify", json: ["sub": .string(String(repeating: "a", count: 60_000)), "type": "consent-revoked"]),
                    try await server.request(.post, "/sandbox/apple/notify", json: ["sub": "000123.abc.1234", "type": "consent-revoked", "email": 5]),
                    try await server.request(.post, "/sandbox/apple/notify", json: ["sub": "", "type": "consent-revoked"]),
                    try await server.request(.post, "/sandbox/apple/notify", json: ["type": "consent-revoked"]),
                ]
            }
            #expect(responses.map(\.status) == [400, 400, 400, 400])
            #expect(try responses.map { try $0.wireError.error } == Array(repeating: .invalidRequest, count: 4))
            let ids = Set(responses.compactMap { $0.headers["X-Request-Id"] })
            #expect(!lines.contains { $0["event"] == "unexpected_error" && $0["request_id"]?.stringValue.map(ids.contains) == true })

            let fine = try await server.request(.post, "/sandbox/apple/notify", json: ["sub": "000123.abc.1234", "type": "email-enabled"])
            #expect(fine.status == 200)
            // Raw JSON: the sandbox's own answer (Apple's status code), not a /v1 body LatchkeyWire models.
            #expect(try fine.json["status"]?.numberValue != nil)
        }
    }

    @Test("sandbox notify without a notification URL (not mounted on a started server) is a 400 naming the cause")
    func sandboxNotifyWithoutEndpoint() async throws {
        let key = P256.Signing.PrivateKey()
        let sandbox = try AppleSandbox(
            developer: .init(teamID: "TEAM123456", keyID: "KEY1234567", publicKey: key.publicKey, clientIDs: ["com.example.app"]),
            client: EventHTTPClient())
        let router = Router()
        sandbox.register(on: router)
        let request = HTTPRequest(
            method: .post, path: "/sandbox/apple/notify", headers: ["Content-Type": "application/json"],
            body: Array(#"{"sub":"000123.abc.1234","type":"consent-revoked"}"#.utf8))
        let response = await ErrorMiddleware().respond(to: request, next: router)
        #expect(response.status == 400)
        // Raw JSON on purpose: the body must hold these members and nothing else.
        #expect(try JSONValue(parsing: response.body) == ["error": "invalid_request", "error_description": "no notification endpoint is set"])
    }
}
