import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

@Suite("Sessions and tokens")
struct SessionTests {
    static func bearer(_ token: TokenResponse) -> [String: String] {
        ["Authorization": "Bearer \(token.accessToken)"]
    }

    static func refresh(_ server: TestServer, _ token: String) async throws -> TestResponse {
        try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(token)])
    }

    static func auditEvents(_ server: TestServer, userID: String) async throws -> [String] {
        try await AuditLog(database: server.database).entries(userID: userID, limit: 1000).map(\.event.rawValue)
    }

    @Test("S10: the JWKS publishes the ES256 key that signs access tokens and the RS256 ID-token key, with Cache-Control")
    func s10JWKS() async throws {
        try await TestServer.with { server in
            let response = try await server.request(.get, "/.well-known/jwks.json")
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "public, max-age=300")
            // Raw JSON: the JWK Set is RFC 7517's format, not a /v1 body LatchkeyWire models.
            let keys = try #require(try response.json["keys"]?.arrayValue)
            #expect(keys.count == 2)
            let key = try #require(keys.first { $0["alg"] == "ES256" })
            #expect(key["kty"] == "EC" && key["crv"] == "P-256" && key["use"] == "sig")
            #expect(key["d"] == nil, "no private part")
            let rsa = try #require(keys.first { $0["alg"] == "RS256" })
            #expect(rsa["kty"] == "RSA" && rsa["use"] == "sig" && rsa["n"] != nil && rsa["e"] != nil && rsa["kid"] != nil)
            #expect(rsa["d"] == nil && rsa["p"] == nil, "no private part")
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let header = try Insecure.unverifiedContents(of: token.accessToken).header
            #expect(header["kid"] == key["kid"])
        }
    }

    @Test("access tokens carry exactly docs/reference.md's header and claims")
    func accessTokenShape() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user, amr: ["pwd"])
            let (header, claims) = try Insecure.unverifiedContents(of: token.accessToken)
            #expect(header["typ"] == "at+jwt")
            #expect(header["alg"] == "ES256")
            #expect(claims["iss"]?.stringValue == server.baseURL)
            #expect(claims["aud"]?.stringValue == server.baseURL)
            #expect(claims["sub"]?.stringValue == user.id)
            #expect(claims["sid"]?.stringValue == token.session.id)
            #expect(claims["amr"] == ["pwd"])
            #expect(claims["jti"]?.stringValue != nil)
            let issuedAt = try #require(claims["iat"]?.numberValue)
            #expect(claims["exp"]?.numberValue == issuedAt + 900)
            #expect(token.refreshToken.count == 43, "256 random bits, base64url")
        }
    }

    @Test("a process that signs tokens without serving (the bench's seeders) names the issuer its server will, so the server accepts them")
    func adoptedPublicURL() async throws {
        let directory = try TemporaryDirectory("adopt")
        defer { directory.remove() }
        var configuration = TestServer.configuration(in: directory.url)
        let port = try DevLANTests.freePort()
        configuration.listen = "127.0.0.1:\(port)"

        let seeder = try await LatchkeyApplication.open(configuration: configuration, accessLog: false)
        seeder.adoptPublicURL()
        let user = try await seeder.database.write { try UserRepository(database: seeder.database).create(email: "seed@example.com", now: Date(), on: $0) }
        let token = try await seeder.services.signIns.startSession(userID: user.id, amr: ["pwd"], context: RequestContext(ip: "127.0.0.1"))
        await seeder.shutdown()
        #expect(try Insecure.unverifiedContents(of: token.accessToken).claims["iss"]?.stringValue == "http://127.0.0.1:\(port)")

        let application = try await LatchkeyApplication.open(configuration: configuration, accessLog: false)
        try application.start()
        let server = TestServer.attached(application, clock: TestClock(), directory: directory.url)
        let me = try await server.request(.get, "/v1/me", headers: Self.bearer(token))
        await application.shutdown()
        #expect(me.status == 200, "\(me.text)")
    }

    @Test("S7, S8: a refresh rotates the token; the new one works and is stored only as a hash")
    func s8Rotation() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let response = try await Self.refresh(server, first.refreshToken)
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "no-store")
            let body = try response.tokens
            let second = body.refreshToken
            #expect(second != first.refreshToken)
            #expect(body.sessionID == first.session.id)
            #expect(body.tokenType == "Bearer" && body.expiresIn == 900 && body.created == false)
            #expect(body.user.id == user.id)
            #expect(try await Self.refresh(server, second).status == 200)
            let stored = try await server.database.read { try $0.query("SELECT token_hash FROM refresh_tokens") }
            #expect(stored.count == 3)
            for row in stored {
                let hash = try row.blob("token_hash")
                #expect(hash.count == 32)
                #expect(hash != Array(second.utf8))
            }
        }
    }

    @Test("S8: replaying a rotated refresh token answers reused, revokes the session and is audited")
    func s8Reuse() async throws {
        // Reuse itself, without the grace window (RefreshReuseGraceTests covers the window).
        try await TestServer.with({ $0.refreshTokenReuseGrace = 0 }) { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let rotated = try await Self.refresh(server, first.refreshToken).tokens
            let second = rotated.refreshToken
            let access = rotated.accessToken

            let replay = try await Self.refresh(server, first.refreshToken)
            #expect(replay.status == 400)
            #expect(try replay.wireError.error == .invalidGrant)
            #expect(try replay.wireError.grantFailure == .reused)

            let afterwards = try await Self.refresh(server, second)
            #expect(afterwards.status == 400)
            #expect(try afterwards.wireError.error == .invalidGrant)
            let me = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(access)"])
            #expect(me.status == 401)
            #expect(try await Self.auditEvents(server, userID: user.id).contains("session.reuse_detected"))
            #expect(server.application.metrics.value(.refreshReuse) == 1)
        }
    }

    @Test("S8: 50 concurrent refreshes of one token give exactly one 200 and a consistent chain")
    func s8ConcurrentRefresh() async throws {
        // Reuse itself, without the grace window (RefreshReuseGraceTests covers the window).
        try await TestServer.with({ $0.refreshTokenReuseGrace = 0 }) { server in
            let user = try await server.createUser()
            let first = try await server.startSession(for: user)
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await Self.refresh(server, first.refreshToken)
                        return (response.status, try? response.tokens.refreshToken)
                    }
                }
                var results = [(Int, String?)]()
                for try await result in group { results.append(result) }
                return results
            }
            let winners = statuses.filter { $0.0 == 200 }
            #expect(winners.count == 1)
            #expect(statuses.filter { $0.0 == 400 }.count == 49)
            let winner = try #require(winners.first?.1)
            let rows = try await server.database.read { connection in
                try connection.query("SELECT token_hash, retired_at, replaced_by FROM refresh_tokens WHERE session_id = ?", [.text(first.session.id)])
            }
            #expect(rows.count == 2, "the original and the one replacement, nothing else")
            let original = try #require(rows.first { (try? $0.blob("token_hash")) == HashFunction.sha256.hash(Array(first.refreshToken.utf8)) })
            #expect(original.optionalBlob("replaced_by") == HashFunction.sha256.hash(Array(winner.utf8)))
            #expect(rows.filter { $0.optionalInt("retired_at") == nil }.count == 1)
        }
    }

    @Test("S9: an idle session expires and the refresh answers expired")
    func s9IdleExpiry() async throws {
        try await TestServer.with({ $0.refreshTokenIdleTTL = 3600 }) { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            server.clock.advance(by: 3601)
            let response = try await Self.refresh(server, token.refreshToken)
            #expect(response.status == 400)
            #expect(try response.wireError.grantFailure == .expired)
            #expect(try await Self.auditEvents(server, userID: user.id).contains("session.expired"))
        }
    }

    @Test("S9: the absolute lifetime holds even for a session refreshed all along")
    func s9AbsoluteExpiry() async throws {
        try await TestServer.with({ $0.refreshTokenIdleTTL = 3600; $0.refreshTokenAbsoluteTTL = 7200 }) { server in
            let user = try await server.createUser()
            var token = try await server.startSession(for: user).refreshToken
            for _ in 0..<3 {
                server.clock.advance(by: 1800)
                let response = try await Self.refresh(server, token)
                guard response.status == 200 else {
                    Issue.record("refresh failed before the absolute limit")
                    return
                }
                token = try response.tokens.refreshToken
            }
            server.clock.advance(by: 1801)
            #expect(try await Self.refresh(server, token).wireError.grantFailure == .expired)
        }
    }

    @Test("S9: logout ends the session at once: bearer 401 with WWW-Authenticate, refresh revoked, audited")
    func s9Logout() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let other = try await server.startSession(for: user)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(token)).status == 200)
            #expect(try await server.request(.post, "/v1/logout", json: ["all": false], headers: Self.bearer(token)).status == 204)
            let me = try await server.request(.get, "/v1/me", headers: Self.bearer(token))
            #expect(me.status == 401)
            #expect(me.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#)
            #expect(try me.wireError.error == .invalidToken)
            #expect(try await Self.refresh(server, token.refreshToken).wireError.grantFailure == .revoked)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(other)).status == 200, "the other session lives")
            #expect(try await server.request(.post, "/v1/logout", json: ["all": true], headers: Self.bearer(other)).status == 204)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(other)).status == 401)
            #expect(try await Self.auditEvents(server, userID: user.id).filter { $0 == "session.revoked" }.count == 2)
        }
    }

    @Test("sessions list marks the current one; a user can end their own sessions only")
    func sessionsList() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let mine = try await server.startSession(for: user)
            let other = try await server.startSession(for: user)
            let stranger = try await server.startSession(for: try await server.createUser(email: "eve@example.com"))
            let sessions = try await server.request(.get, "/v1/sessions", headers: Self.bearer(mine)).decode(WireSessionList.self).sessions
            #expect(sessions.count == 2)
            #expect(sessions.first { $0.id == mine.session.id }?.current == true)
            #expect(sessions.first { $0.id == other.session.id }?.current == false)
            #expect(sessions[0].ip == "127.0.0.1" && sessions[0].amr == ["pwd"])
            #expect(try await server.request(.delete, "/v1/sessions/\(stranger.session.id)", headers: Self.bearer(mine)).status == 404)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(stranger)).status == 200)
            #expect(try await server.request(.delete, "/v1/sessions/\(other.session.id)", headers: Self.bearer(mine)).status == 204)
            #expect(try await Self.refresh(server, other.refreshToken).status == 400)
        }
    }

    @Test("RFC 7009 revoke answers 200 for anything and ends the session of a real token")
    func revoke() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let garbage = try await server.request(.post, "/v1/revoke", body: Array("token=nonsense".utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(garbage.status == 200)
            let real = try await server.request(.post, "/v1/revoke", body: Array("token=\(token.refreshToken)".utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(real.status == 200)
            #expect(try await Self.refresh(server, token.refreshToken).wireError.grantFailure == .revoked)
        }
    }

    @Test("/v1/me shows the user; a missing, malformed, tampered or expired bearer token is 401 invalid_token")
    func me() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser(email: "ada@example.com", givenName: "Ada")
            let token = try await server.startSession(for: user)
            let me = try await server.request(.get, "/v1/me", headers: Self.bearer(token)).decode(WireAccount.self)
            #expect(me.user.email == "ada@example.com")
            #expect(me.user.givenName == "Ada")
            #expect(me.identities.isEmpty)
            #expect(me.factors.isEmpty)
            for header in ["", "Bearer", "Bearer ", "Basic abc", "Bearer not.a.jwt", "Bearer \(token.accessToken)x"] {
                let response = try await server.request(.get, "/v1/me", headers: header.isEmpty ? [:] : ["Authorization": header])
                #expect(response.status == 401, "\(header)")
                #expect(response.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#)
            }
            server.clock.advance(by: 900 + 61)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(token)).status == 401, "expired beyond the leeway")
        }
    }

    @Test("S24: malformed token requests get the documented 400s and change nothing")
    func s24BadTokenRequests() async throws {
        try await TestServer.with { server in
            let invalidJSON = try await server.request(.post, "/v1/token", body: Array("{".utf8), headers: ["Content-Type": "application/json"])
            #expect(invalidJSON.status == 400)
            #expect(try invalidJSON.wireError.error == .invalidRequest)
            let noGrant = try await server.request(.post, "/v1/token", json: ["refresh_token": "x"])
            #expect(try noGrant.wireError.error == .invalidRequest)
            let wrongGrant = try await server.request(.post, "/v1/token", json: ["grant_type": "password"])
            #expect(try wrongGrant.wireError.error == .unsupportedGrantType)
            let unknown = try await Self.refresh(server, "x")
            #expect(try unknown.wireError.error == .invalidGrant)
            let wrongType = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": 5])
            #expect(try wrongType.wireError.error == .invalidRequest)
            let rows = try await server.database.read { try $0.query("SELECT * FROM sessions") }
            #expect(rows.isEmpty)
        }
    }

    @Test("S10: a rotated key is published before it signs, and the retired one until its tokens expire")
    func s10Rotation() async throws {
        try await TestServer.with { server in
            let keys = server.application.signingKeys
            let user = try await server.createUser()
            let oldKID = try Insecure.unverifiedContents(of: try await server.startSession(for: user).accessToken).header["kid"]?.stringValue
            let new = try await keys.rotate(activationDelay: 600, now: server.clock.now)
            // Raw JSON: the JWK Set is RFC 7517's format, not a /v1 body LatchkeyWire models.
            let published = try await server.request(.get, "/.well-known/jwks.json").json["keys"]?.arrayValue?
                .filter { $0["alg"] == "ES256" }.compactMap { $0["kid"]?.stringValue }
            #expect(Set(published ?? []) == [oldKID, new.id])
            #expect(try Insecure.unverifiedContents(of: try await server.startSession(for: user).accessToken).header["kid"]?.stringValue == oldKID)
            server.clock.advance(by: 601)
            let newToken = try await server.startSession(for: user)
            #expect(try Insecure.unverifiedContents(of: newToken.accessToken).header["kid"]?.stringValue == new.id)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(newToken)).status == 200)
            let es256 = { keys.publishedKeys.filter { $0.algorithm == .es256 }.map(\.id) }
            #expect(Set(es256()) == [oldKID, new.id], "the retired key stays published")
            server.clock.advance(by: 900 + 61)
            _ = try await server.startSession(for: user)
            #expect(es256() == [new.id], "and leaves once its tokens have expired")
        }
    }

    @Test("S10: a key taken out of the key table takes its tokens with it, although the server accepted them a moment before")
    func s10RemovedKeyRefusesAcceptedTokens() async throws {
        try await TestServer.with { server in
            let keys = server.application.signingKeys
            let user = try await server.createUser()
            let old = try await server.startSession(for: user)
            // Twice: the second answer comes from the tokens the key set already verified.
            for _ in 0..<2 { #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(old)).status == 200) }
            let oldKID = try #require(try Insecure.unverifiedContents(of: old.accessToken).header["kid"]?.stringValue)
            _ = try await keys.rotate(activationDelay: 0, now: server.clock.now)
            // An operator removing a key they believe exposed, before its tokens expire.
            try await server.database.write { try $0.execute("DELETE FROM signing_keys WHERE id = ?", [.text(oldKID)]) }
            try await keys.reload(now: server.clock.now)
            let refused = try await server.request(.get, "/v1/me", headers: Self.bearer(old))
            #expect(refused.status == 401)
            #expect(try refused.wireError.error == .invalidToken)
            #expect(try await server.request(.get, "/v1/me", headers: Self.bearer(try await server.startSession(for: user))).status == 200)
        }
    }

    @Test("20 concurrent revocations of one session: exactly one call revokes it, and it is audited once")
    func concurrentRevocationAuditedOnce() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let sessions = server.application.services.sessions
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await sessions.revokeSessions(userID: user.id, sessionIDs: [token.session.id], reason: "revoked", context: RequestContext())
                    }
                }
                var results = [[String]]()
                for try await result in group { results.append(result) }
                return results
            }
            #expect(results.filter { !$0.isEmpty } == [[token.session.id]])
            #expect(try await Self.auditEvents(server, userID: user.id).filter { $0 == "session.revoked" }.count == 1)
        }
    }

    @Test("concurrent logouts of every session return and audit each session once across all calls")
    func concurrentRevokeAllAuditedOnce() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            var ids = Set<String>()
            for _ in 0..<3 { ids.insert(try await server.startSession(for: user).session.id) }
            let sessions = server.application.services.sessions
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<10 {
                    group.addTask { try await sessions.revokeSessions(userID: user.id, sessionIDs: nil, reason: "logout", context: RequestContext()) }
                }
                var results = [String]()
                for try await result in group { results += result }
                return results
            }
            #expect(results.count == 3 && Set(results) == ids)
            #expect(try await Self.auditEvents(server, userID: user.id).filter { $0 == "session.revoked" }.count == 3)
        }
    }

    @Test("S8: rotating a session whose live token a concurrent request already retired is refused and issues nothing")
    func s8StepUpRotationLosesToConcurrentRotation() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let refreshTokens = server.application.services.refreshTokens
            let now = server.clock.now
            await #expect(throws: AuthError.conflict()) {
                try await server.database.write { connection in
                    // Another request's rotation retired the live token first.
                    #expect(try SessionRepository().retire(tokenHash: token.refreshToken.sha256, replacedBy: [0], at: now, on: connection))
                    var session = token.session
                    _ = try refreshTokens.rotate(of: &session, now: now, on: connection)
                }
            }
            let live = try await server.database.read {
                try $0.query("SELECT token_hash FROM refresh_tokens WHERE session_id = ? AND retired_at IS NULL", [.text(token.session.id)])
            }
            #expect(live.count == 1, "the rolled-back transaction left the original token live")
        }
    }

    @Test("S10: the JWKS answer is rebuilt only when the published keys change, not on every reload")
    func s10JWKSRebuiltOnKeyChange() async throws {
        try await TestServer.with { server in
            let keys = server.application.signingKeys
            let responder = JWKSResponder(keys: keys)
            let before = keys.publishedKeySet.revision
            try await keys.reload(now: server.clock.now)
            #expect(keys.publishedKeySet.revision == before, "same keys, same revision")
            #expect(keys.publishedKeySet(ifChangedSince: before) == nil)
            let first = responder.response.body
            let new = try await keys.rotate(activationDelay: 600, now: server.clock.now)
            #expect(keys.publishedKeySet.revision != before)
            let second = responder.response
            #expect(second.body != first)
            #expect(second.headers["Cache-Control"] == "public, max-age=300")
            // Raw JSON: the JWK Set is RFC 7517's format, not a /v1 body LatchkeyWire models.
            let kids = try JSONValue(parsing: second.body)["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue }
            #expect(kids?.contains(new.id) == true)
        }
    }
}
