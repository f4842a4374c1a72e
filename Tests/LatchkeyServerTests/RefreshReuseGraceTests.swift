import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Testing

/// The refresh-token reuse grace of S8: a token presented again within
/// `refresh_token_reuse_grace` of its rotation, while its successor is unused, gets that same
/// successor back; after the window, or once the successor is used, it is reuse as before.
@Suite("Refresh reuse grace (S8)")
struct RefreshReuseGraceTests {
    static func refresh(_ server: TestServer, _ token: String) async throws -> TestResponse {
        try await server.request(.post, "/v1/token", json: WireRefreshRequest(refreshToken: token).json)
    }

    static func tokens(_ response: TestResponse) throws -> WireTokenResponse {
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try WireTokenResponse(parsing: response.body)
    }

    static func refusal(_ response: TestResponse) throws -> WireErrorBody {
        #expect(response.status == 400)
        return try WireErrorBody(parsing: response.body)
    }

    /// The session's refresh-token rows: how many, and how many are live.
    static func chain(_ server: TestServer, _ sessionID: String) async throws -> (rows: Int, live: Int) {
        let rows = try await server.database.read { connection in
            try connection.query("SELECT retired_at FROM refresh_tokens WHERE session_id = ?", [.text(sessionID)])
        }
        return (rows.count, rows.filter { $0.optionalInt("retired_at") == nil }.count)
    }

    static func events(_ server: TestServer, _ userID: String) async throws -> [String] {
        try await AuditLog(database: server.database).entries(userID: userID, limit: 1000).map(\.event.rawValue)
    }

    @Test("S8: a lost answer, then a retry with the old token within the window: the same successor and a fresh access token; nothing rotates, and the session goes on")
    func s8LostResponseKeepsTheSession() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let lost = try Self.tokens(try await Self.refresh(server, first.refreshToken))
            server.clock.advance(by: 30)

            let retry = try Self.tokens(try await Self.refresh(server, first.refreshToken))
            #expect(retry.refreshToken == lost.refreshToken)
            #expect(retry.sessionID == first.session.id)
            let lostClaims = try Insecure.unverifiedContents(of: lost.accessToken).claims
            let retryClaims = try Insecure.unverifiedContents(of: retry.accessToken).claims
            #expect(retryClaims["jti"] != lostClaims["jti"], "a new access token")
            #expect(retryClaims["sid"]?.stringValue == first.session.id)
            #expect(try await Self.chain(server, first.session.id) == (2, 1), "the original and its one successor, which is live")
            #expect(try await Self.events(server, user.id).filter { $0 == "session.refresh_replayed" }.count == 1)
            #expect(!(try await Self.events(server, user.id)).contains("session.reuse_detected"))
            #expect(server.application.metrics.value(.refreshReplays) == 1)

            // The successor works as any live token: it rotates, and the session goes on.
            let next = try Self.tokens(try await Self.refresh(server, retry.refreshToken))
            #expect(next.sessionID == first.session.id)
            let me = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(next.accessToken)"])
            #expect(me.status == 200)
        }
    }

    @Test("S8: once the successor has been used, the old token is reuse: the family is revoked and audited")
    func s8UsedSuccessorEndsTheGrace() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let second = try Self.tokens(try await Self.refresh(server, first.refreshToken))
            let third = try Self.tokens(try await Self.refresh(server, second.refreshToken))

            let replay = try Self.refusal(try await Self.refresh(server, first.refreshToken))
            #expect(replay.error == .invalidGrant && replay.reason == "reused")
            let afterwards = try Self.refusal(try await Self.refresh(server, third.refreshToken))
            #expect(afterwards.error == .invalidGrant)
            let me = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(third.accessToken)"])
            #expect(me.status == 401)
            #expect(try await Self.events(server, user.id).contains("session.reuse_detected"))
            #expect(server.application.metrics.value(.refreshReuse) == 1)
            #expect(server.application.metrics.value(.refreshReplays) == 0)
        }
    }

    @Test("S8: after the window the old token is reuse, and the sealed successor it kept is gone")
    func s8WindowOver() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            _ = try Self.tokens(try await Self.refresh(server, first.refreshToken))
            server.clock.advance(by: 61)

            let replay = try Self.refusal(try await Self.refresh(server, first.refreshToken))
            #expect(replay.error == .invalidGrant && replay.reason == "reused")
            let kept = try await server.database.read { connection in
                try connection.query("SELECT successor_sealed FROM refresh_tokens WHERE successor_sealed IS NOT NULL", [])
            }
            #expect(kept.isEmpty)
        }
    }

    @Test("S8: with the grace on, 50 concurrent refreshes of one token rotate it once and every answer carries that one successor")
    func s8ConcurrentRefreshesShareOneSuccessor() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<50 { group.addTask { try await Self.refresh(server, first.refreshToken) } }
                var answers: [TestResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            #expect(answers.map(\.status) == Array(repeating: 200, count: 50))
            let successors = Set(try answers.map { try WireTokenResponse(parsing: $0.body).refreshToken })
            #expect(successors.count == 1)
            #expect(try await Self.chain(server, first.session.id) == (2, 1))
            let events = try await Self.events(server, user.id)
            #expect(events.filter { $0 == "session.refreshed" }.count == 1)
            #expect(events.filter { $0 == "session.refresh_replayed" }.count == 49)
        }
    }

    @Test("S8, S26: the successor is kept only sealed under the master key, and housekeeping clears it once the window is over")
    func s8SuccessorSealedAndCleared() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let second = try Self.tokens(try await Self.refresh(server, first.refreshToken))
            let sealed = try await server.database.read { connection in
                try connection.queryOne("SELECT successor_sealed FROM refresh_tokens WHERE token_hash = ?", [.blob(HashFunction.sha256.hash(Array(first.refreshToken.utf8)))])
            }
            let bytes = try #require(sealed?.optionalBlob("successor_sealed"))
            #expect(!String(decoding: bytes, as: UTF8.self).contains(second.refreshToken))
            #expect(bytes.count > second.refreshToken.utf8.count, "nonce and tag around the ciphertext")

            server.clock.advance(by: 61)
            try await server.application.runBackgroundJobs()
            let left = try await server.database.read { connection in
                try connection.query("SELECT token_hash FROM refresh_tokens WHERE successor_sealed IS NOT NULL OR successor_expires_at IS NOT NULL", [])
            }
            #expect(left.isEmpty)
        }
    }

    @Test("S8: logout ends the grace at once: a replay after it is refused and the sealed successor is gone")
    func s8LogoutClearsTheGrace() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let second = try Self.tokens(try await Self.refresh(server, first.refreshToken))
            let logout = try await server.request(.post, "/v1/logout", headers: ["Authorization": "Bearer \(second.accessToken)"])
            #expect(logout.status == 204)

            let replay = try Self.refusal(try await Self.refresh(server, first.refreshToken))
            #expect(replay.error == .invalidGrant)
            let kept = try await server.database.read { connection in
                try connection.query("SELECT token_hash FROM refresh_tokens WHERE successor_sealed IS NOT NULL", [])
            }
            #expect(kept.isEmpty)
        }
    }

    @Test("refresh_token_reuse_grace is read from the configuration: 0 turns the grace off, more than 300 is refused")
    func graceSetting() throws {
        var configuration = Configuration()
        #expect(configuration.refreshTokenReuseGrace == 60)
        configuration = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_REFRESH_TOKEN_REUSE_GRACE": "0"])
        #expect(configuration.refreshTokenReuseGrace == 0)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_REFRESH_TOKEN_REUSE_GRACE": "301"])
        }
    }
}
