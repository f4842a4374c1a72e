import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// ID tokens (OpenID Connect Core 1.0 §2, §3.1.3.6) and the RS256 key that signs them by default.
@Suite("ID tokens and the RS256 signing key")
struct IDTokenTests {
    static let clientID = "client_web"

    /// Claims for `user`'s session as the authorization code grant would fill them.
    static func claims(_ server: TestServer, session: TokenResponse, nonce: String? = "n-0S6_WzA2Mj", now: Date? = nil) -> IDTokenClaims {
        let now = now ?? server.clock.now
        return IDTokenClaims(
            issuer: server.application.services.accessTokens.issuer, subject: session.user.id, audience: clientID, authorizedParty: clientID,
            issuedAt: now, expiresAt: now.addingTimeInterval(300), authTime: now.addingTimeInterval(-30), nonce: nonce,
            amr: ["pwd", "otp"], sessionID: "bs_sid1", accessToken: session.accessToken)
    }

    static func kid(_ token: String) throws -> String? {
        try Insecure.unverifiedContents(of: token).header["kid"]?.stringValue
    }

    static func publishedKIDs(_ server: TestServer, algorithm: String) async throws -> Set<String> {
        // Raw JSON: the JWK Set is RFC 7517's format, not a /v1 body LatchkeyWire models.
        let keys = try await server.request(.get, "/.well-known/jwks.json").json["keys"]?.arrayValue ?? []
        return Set(keys.filter { $0["alg"]?.stringValue == algorithm }.compactMap { $0["kid"]?.stringValue })
    }

    @Test("at_hash is the left half of the access token's SHA-256, base64url (OpenID Connect Core A.3's vector)")
    func atHashKnownVector() {
        #expect(IDTokenClaims.accessTokenHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y") == "77QmUPtjPfzWtF2AnpK9RQ")
    }

    @Test("an ID token carries typ JWT, kid, alg and exactly the claims given", arguments: [IDTokenAlgorithm.rs256, .es256])
    func idTokenShape(algorithm: IDTokenAlgorithm) async throws {
        try await TestServer.with { server in
            let session = try await server.startSession(for: try await server.createUser())
            let claims = Self.claims(server, session: session)
            let token = try server.application.signingKeys.signIDToken(claims, algorithm: algorithm)
            let (header, payload) = try Insecure.unverifiedContents(of: token)
            #expect(header["typ"] == "JWT" && header["alg"]?.stringValue == algorithm.rawValue)
            let key = try #require(server.application.signingKeys.publishedKeys.first { $0.id == header["kid"]?.stringValue })
            #expect(key.algorithm.rawValue == algorithm.rawValue && key.state(at: server.clock.now) == "active")
            let second = { (date: Date) in JSONValue.number(date.timeIntervalSince1970.rounded(.down)) }
            #expect(payload == .object([
                "iss": .string(claims.issuer), "sub": .string(session.user.id), "aud": .string(Self.clientID), "azp": .string(Self.clientID),
                "iat": second(claims.issuedAt), "exp": second(claims.expiresAt), "auth_time": second(claims.authTime),
                "nonce": "n-0S6_WzA2Mj", "amr": ["pwd", "otp"], "sid": "bs_sid1", "at_hash": .string(IDTokenClaims.accessTokenHash(session.accessToken)),
            ]))
            var bare = claims
            (bare.nonce, bare.sessionID, bare.accessToken) = (nil, nil, nil)
            let minimal = try Insecure.unverifiedContents(of: try server.application.signingKeys.signIDToken(bare, algorithm: algorithm)).claims
            #expect(minimal["nonce"] == nil && minimal["sid"] == nil && minimal["at_hash"] == nil, "absent members are left out")
        }
    }

    @Test("an ID token may not outlive its key's publication after retirement")
    func idTokenLifetimeBounded() async throws {
        try await TestServer.with { server in
            let session = try await server.startSession(for: try await server.createUser())
            var claims = Self.claims(server, session: session)
            claims.expiresAt = claims.issuedAt.addingTimeInterval(server.application.signingKeys.longestTokenLifetime + 1)
            #expect(throws: IDTokenLifetimeTooLong.self) { try server.application.signingKeys.signIDToken(claims, algorithm: .rs256) }
        }
    }

    @Test("S10: a rotated RS256 key is published before it signs ID tokens, the retired one until its tokens expire; ES256 is untouched")
    func rs256RotationS10() async throws {
        try await TestServer.with { server in
            let keys = server.application.signingKeys
            let session = try await server.startSession(for: try await server.createUser())
            let oldKID = try #require(try Self.kid(try keys.signIDToken(Self.claims(server, session: session), algorithm: .rs256)))
            let es256Before = try await Self.publishedKIDs(server, algorithm: "ES256")
            let new = try await keys.rotate(.rs256, activationDelay: 600, now: server.clock.now)
            #expect(new.algorithm == .rs256 && new.publicJWK.keyType == "RSA")
            #expect(try await Self.publishedKIDs(server, algorithm: "RS256") == [oldKID, new.id], "published at once")
            #expect(try await Self.publishedKIDs(server, algorithm: "ES256") == es256Before, "the ES256 key does not rotate with it")
            #expect(try Self.kid(try keys.signIDToken(Self.claims(server, session: session), algorithm: .rs256)) == oldKID, "but not signing yet")
            server.clock.advance(by: 601)
            #expect(try Self.kid(try keys.signIDToken(Self.claims(server, session: session), algorithm: .rs256)) == new.id)
            let access = try await server.startSession(for: session.user)
            #expect(try Self.kid(access.accessToken).map { es256Before.contains($0) } == true, "access tokens still signed by the same ES256 key")
            #expect(try await Self.publishedKIDs(server, algorithm: "RS256") == [oldKID, new.id], "the retired key stays published")
            server.clock.advance(by: 900 + 61)
            try await keys.reload(now: server.clock.now)
            #expect(try await Self.publishedKIDs(server, algorithm: "RS256") == [new.id], "and leaves once its tokens have expired")
        }
    }

    @Test("S10: the RS256 private key is sealed under the master key at rest, and a restart signs with the same key")
    func rs256KeySealedAtRest() async throws {
        try await TestServer.with { server in
            let rows = try await server.database.read { try $0.query("SELECT * FROM signing_keys WHERE algorithm = 'RS256'") }
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            let id = try row.string("id")
            let sealed = try row.blob("private_key")
            #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"), "no PEM in the clear")
            let plain = try server.application.masterKey.unseal(sealed, context: "signing_keys/\(id)")
            let key = try RSA.Signing.PrivateKey(pemRepresentation: String(decoding: plain, as: UTF8.self))
            #expect(key.publicKey.modulus.count == 256, "RSA 2048")
            let published = try JWK(parsing: Array(try row.string("public_jwk").utf8))
            #expect(published.modulus == key.publicKey.modulus && published.d == nil && published.algorithm == .rs256)
            #expect(try await server.database.read { try $0.query("SELECT id FROM signing_keys WHERE algorithm = 'ES256'") }.count == 1)

            // Opening the ring again on the same table makes no new key.
            let again = try await SigningKeyRing.open(
                database: server.database, masterKey: server.application.masterKey, accessTokenTTL: 900, now: server.clock.now)
            #expect(again.publishedKeys.map(\.id) == server.application.signingKeys.publishedKeys.map(\.id))
            let session = try await server.startSession(for: try await server.createUser())
            #expect(try Self.kid(try again.signIDToken(Self.claims(server, session: session), algorithm: .rs256)) == id)
        }
    }

    @Test("an ID token presented as a bearer token is refused, RS256 and ES256 alike", arguments: [IDTokenAlgorithm.rs256, .es256])
    func idTokenIsNotABearerToken(algorithm: IDTokenAlgorithm) async throws {
        try await TestServer.with { server in
            let session = try await server.startSession(for: try await server.createUser())
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(session.accessToken)"]).status == 200)
            // Even with the access tokens' audience and the API session's id, so only alg and typ differ.
            var claims = Self.claims(server, session: session)
            claims.audience = server.application.services.accessTokens.audience
            claims.sessionID = session.session.id
            let idToken = try server.application.signingKeys.signIDToken(claims, algorithm: algorithm)
            let refused = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(idToken)"])
            #expect(refused.status == 401)
            #expect(refused.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#)
        }
    }

    @Test("latchkey keys list shows each key's algorithm; keys rotate --algorithm rotates only that one, and both by default")
    func keysCommandsByAlgorithm() async throws {
        try await CLIPapercutTests.withDirectory { directory in
            let dev = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
            dev.send(SIGTERM)
            #expect(await dev.waitForExit(timeout: 15) == 0)
            func rows() throws -> [[Substring]] {
                let list = try CLIPapercutTests.latchkey(["keys", "list"], in: directory)
                #expect(list.status == 0, "\(list.error)")
                return list.output.split(separator: "\n").map { $0.split(separator: " ") }
            }
            let before = try rows()
            #expect(before.first?.prefix(3) == ["KID", "ALG", "STATE"])
            #expect(before.dropFirst().map { $0[1] }.sorted() == ["ES256", "RS256"])

            let one = try CLIPapercutTests.latchkey(["keys", "rotate", "--algorithm", "RS256", "--activate-in", "330"], in: directory)
            #expect(one.status == 0, "\(one.error)")
            #expect(one.output.hasPrefix("published RS256 key ") && one.output.split(separator: "\n").count == 1, "\(one.output)")
            #expect(try rows().dropFirst().map { $0[1] }.sorted() == ["ES256", "RS256", "RS256"])

            let both = try CLIPapercutTests.latchkey(["keys", "rotate", "--activate-in", "330"], in: directory)
            #expect(both.status == 0, "\(both.error)")
            #expect(both.output.split(separator: "\n").map { $0.split(separator: " ")[1] } == ["ES256", "RS256"])
            #expect(try rows().dropFirst().map { $0[1] }.sorted() == ["ES256", "ES256", "RS256", "RS256", "RS256"])

            let wrong = try CLIPapercutTests.latchkey(["keys", "rotate", "--algorithm", "HS256"], in: directory)
            #expect(wrong.status != 0 && wrong.error.contains("--algorithm must be ES256 or RS256"), "\(wrong.error)")
        }
    }
}

/// A relying party verifying our ID tokens with PyJWT against the JWKS it fetches over HTTP.
@Suite("ID tokens in PyJWT", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct PyJWTIDTokenTests {
    @Test("PyJWT verifies RS256 and ES256 ID tokens: iss, aud, azp, nonce, auth_time, amr, sid and at_hash", arguments: [IDTokenAlgorithm.rs256, .es256])
    func pyjwtVerifiesIDToken(algorithm: IDTokenAlgorithm) async throws {
        try await TestServer.with { server in
            // PyJWT checks exp and iat against the real clock.
            let session = try await server.startSession(for: try await server.createUser())
            let claims = IDTokenTests.claims(server, session: session, now: Date())
            let token = try server.application.signingKeys.signIDToken(claims, algorithm: algorithm)
            func verify(_ token: String, clientID: String = IDTokenTests.clientID, nonce: String = "n-0S6_WzA2Mj", accessToken: String? = nil) throws -> Subprocess.Result {
                try Subprocess.run(
                    URL(fileURLWithPath: try #require(interopPython)),
                    [try PyJWTInteropTests.fixtures.url("verify_id_token.py").path, server.baseURL + "/.well-known/jwks.json", token,
                     claims.issuer, clientID, algorithm.rawValue, nonce, accessToken ?? session.accessToken])
            }
            let accepted = try verify(token)
            #expect(accepted.status == 0, "\(accepted.output)")
            let verified = try JSONValue(parsing: Array(accepted.output.utf8))
            #expect(verified["sub"]?.stringValue == session.user.id && verified["iss"]?.stringValue == claims.issuer)
            #expect(verified["auth_time"]?.numberValue == claims.authTime.timeIntervalSince1970.rounded(.down))
            #expect(verified["amr"] == ["pwd", "otp"] && verified["sid"] == "bs_sid1")

            let wrongClient = try verify(token, clientID: "client_other")
            #expect(wrongClient.status == 1 && wrongClient.output.contains("InvalidAudience"), "\(wrongClient.output)")
            let wrongNonce = try verify(token, nonce: "another")
            #expect(wrongNonce.status == 1 && wrongNonce.output.contains("nonce"), "\(wrongNonce.output)")
            let wrongAccessToken = try verify(token, accessToken: session.accessToken + "x")
            #expect(wrongAccessToken.status == 1 && wrongAccessToken.output.contains("at_hash"), "\(wrongAccessToken.output)")
        }
    }
}
