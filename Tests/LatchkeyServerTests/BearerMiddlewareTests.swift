import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyWire
import Testing

@Suite("The bearer-auth middleware of route groups")
struct BearerMiddlewareTests {
    /// `token` with one character of its signature changed: a whole byte of it, never the last
    /// character, whose low bits are padding that a decoder may ignore (then "AA" in place of
    /// the last two characters left the signature intact once in 256 runs).
    static func tampered(_ token: String) -> String {
        var characters = Array(token)
        let index = characters.count - 10
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }

    /// A server whose router has, besides Latchkey's routes, a group behind the bearer
    /// middleware that answers with the principal it finds in the context.
    static func withProbe(_ body: (TestServer) async throws -> Void) async throws {
        let clock = TestClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let application = try await LatchkeyApplication.open(
            configuration: TestServer.configuration(in: directory), accessLog: false, clock: { clock.now })
        let probe = application.router.group("/probe", middleware: BearerAuthenticator(accessTokens: application.services.accessTokens, dpop: application.services.dpop, clock: application.services.dependencies.clock))
        probe.get("/whoami") { _, context in
            let principal = try context.requirePrincipal()
            return .json([
                "user_id": .string(principal.userID), "session_id": .string(principal.sessionID),
                "amr": .array(principal.amr.map(JSONValue.string)), "request_id": .string(context.requestID),
            ])
        }
        application.router.group("/unguarded", context: LatchkeyContext.self).get("") { _, context in
            .json(["user_id": .string(try context.requirePrincipal().userID)])
        }
        try application.start()
        do {
            try await body(TestServer.attached(application, clock: clock, directory: directory))
        } catch {
            await application.shutdown()
            throw error
        }
        await application.shutdown()
    }

    @Test("a grouped route reads the principal of a valid bearer token from its context")
    func principalInContext() async throws {
        try await Self.withProbe { server in
            let user = try await server.createUser()
            let session = try await server.startSession(for: user, amr: ["pwd", "otp"])
            let response = try await server.request(
                .get, "/probe/whoami", headers: ["Authorization": "Bearer \(session.accessToken)", "X-Request-Id": "probe-1"])
            #expect(response.status == 200)
            // Raw JSON: the probe route is this test's own, not a /v1 body LatchkeyWire models.
            #expect(try response.json == [
                "user_id": .string(user.id), "session_id": .string(session.session.id), "amr": ["pwd", "otp"],
                "request_id": "probe-1",
            ])
        }
    }

    @Test("S9 S24: the middleware refuses as authenticate(_:) does: the same 401 bodies and WWW-Authenticate as GET /v1/me")
    func refusalsMatchTheHandlerCheck() async throws {
        try await Self.withProbe { server in
            let user = try await server.createUser()
            let session = try await server.startSession(for: user)
            let cases: [[String: String]] = [
                [:],
                ["Authorization": "Basic YWRhOnB3"],
                ["Authorization": "Bearer not-a-jwt"],
                ["Authorization": "Bearer " + Self.tampered(session.accessToken)],
            ]
            for headers in cases {
                let grouped = try await server.request(.get, "/probe/whoami", headers: headers)
                let handler = try await server.request(.get, "/v1/me", headers: headers)
                #expect(grouped.status == 401)
                #expect(grouped.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#)
                // Raw JSON on purpose: the two refusals must be the same body member for member.
                #expect(try grouped.json == handler.json)
                #expect(try grouped.wireError.error == .invalidToken)
            }
            // An ended session is refused by both, with the same words.
            _ = try await server.application.services.sessions.revokeSessions(
                userID: user.id, sessionIDs: nil, reason: "test", context: RequestContext(ip: "127.0.0.1"))
            let ended = ["Authorization": "Bearer \(session.accessToken)"]
            let grouped = try await server.request(.get, "/probe/whoami", headers: ended)
            #expect(grouped.status == 401)
            // Raw JSON on purpose: these members and nothing else, and the same body as the handler's.
            #expect(try grouped.json == ["error": "invalid_token", "error_description": "the session has ended"])
            #expect(try grouped.json == (try await server.request(.get, "/v1/me", headers: ended)).json)
        }
    }

    @Test("a route in a group without the middleware finds no principal and refuses with 401")
    func noMiddlewareNoPrincipal() async throws {
        try await Self.withProbe { server in
            let user = try await server.createUser()
            let session = try await server.startSession(for: user)
            let response = try await server.request(.get, "/unguarded", headers: ["Authorization": "Bearer \(session.accessToken)"])
            #expect(response.status == 401)
            // Raw JSON on purpose: the body must hold these members and nothing else.
            #expect(try response.json == ["error": "invalid_token", "error_description": "a bearer token is required"])
        }
    }
}
