import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Synchronization
import Testing

/// DPoP (RFC 9449) over HTTP against a running server, with proofs made by jwcrypto
/// (Fixtures/dpop_proofs.py), a JOSE library no one here wrote: binding at issue (S41), the
/// checks of a proof (S40), enforcement on `/v1` and userinfo (S42), server nonces (S43).
@Suite("DPoP", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct DPoPTests {
    /// Every server here has this public name, so that proofs name it in `htu` whatever port
    /// the server bound (and two instances share it, as behind a load balancer).
    static let publicURL = "https://auth.example.test"

    static func withServer<T>(_ configure: (inout Configuration) -> Void = { _ in }, _ body: (TestServer) async throws -> T) async throws -> T {
        try await TestServer.with({
            $0.publicURL = publicURL
            configure(&$0)
        }, body)
    }

    // MARK: Requests

    /// A proof by `key` (made on first use, of type `kty`) for `method` and `path` at the public
    /// URL, issued at the server's time; `extra` adds or overrides request members of the fixture
    /// (`access_token`, `ath`, `nonce`, `jti`, `typ`, `attack`, `omit`, `htu`, `iat`).
    static func proof(
        _ server: TestServer, _ method: HTTPMethod, _ path: String, key: String, kty: String = "EC", _ extra: [String: JSONValue] = [:]
    ) throws -> (proof: String, jkt: String) {
        var request: [String: JSONValue] = [
            "key": .string(key), "kty": .string(kty), "htm": .string(method.rawValue), "htu": .string(publicURL + path),
            "iat": .number(server.clock.now.timeIntervalSince1970.rounded(.down)),
        ]
        request.merge(extra) { $1 }
        return try JWCryptoProofs.shared.get().make(.object(request))
    }

    static func signUp(_ server: TestServer, username: String = "ada@example.com", proof: String?) async throws -> TestResponse {
        try await server.request(
            .post, "/v1/auth/password/signup", json: ["username": .string(username), "password": "correct horse battery"],
            headers: proof.map { ["DPoP": $0] } ?? [:])
    }

    static func refresh(_ server: TestServer, _ refreshToken: String, proof: String?) async throws -> TestResponse {
        try await server.request(
            .post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(refreshToken)],
            headers: proof.map { ["DPoP": $0] } ?? [:])
    }

    static func me(_ server: TestServer, _ authorization: String, proof: String?, path: String = "/v1/me") async throws -> TestResponse {
        var headers = ["Authorization": authorization]
        if let proof { headers["DPoP"] = proof }
        return try await server.request(.get, path, headers: headers)
    }

    /// A bound session: signed up with a proof by `key`.
    static func boundSession(_ server: TestServer, key: String, kty: String = "EC") async throws -> (tokens: JSONValue, jkt: String) {
        let (proof, jkt) = try Self.proof(server, .post, "/v1/auth/password/signup", key: key, kty: kty)
        let response = try await signUp(server, proof: proof)
        try #require(response.status == 201, "\(response.text)")
        return (try response.json, jkt)
    }

    static func claims(_ accessToken: String) throws -> JWTClaims {
        let jws = try JWS(compact: accessToken)
        return try JWTClaims(json: try JSONValue(parsing: jws.payload))
    }

    static func audit(_ server: TestServer, _ event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(event: event)
    }

    // MARK: Binding at issue (S41) and use (S42)

    @Test("S41, S42: a sign-up with a jwcrypto proof (ES256, EdDSA, RS256) gets token_type DPoP, cnf.jkt, a bound session and its audit entry; GET /v1/me with DPoP and a proof by the key passes", arguments: ["EC", "OKP", "RSA"])
    func boundSignUp(kty: String) async throws {
        try await Self.withServer { server in
            let (tokens, jkt) = try await Self.boundSession(server, key: "app-\(kty)", kty: kty)
            #expect(tokens["token_type"] == "DPoP")
            let access = try #require(tokens["access_token"]?.stringValue)
            #expect(try Self.claims(access)["cnf"] == ["jkt": .string(jkt)], "cnf.jkt is jwcrypto's RFC 7638 thumbprint of the key")
            let sessionID = try #require(tokens["session_id"]?.stringValue)
            let stored = try await server.database.read { try $0.queryOne("SELECT dpop_jkt FROM sessions WHERE id = ?", [.text(sessionID)]) }
            #expect(stored?.optionalString("dpop_jkt") == jkt)
            let created = try await Self.audit(server, "session.created")
            #expect(created.contains { $0.details["session_id"] == sessionID && $0.details["dpop_jkt"] == jkt })

            let (proof, _) = try Self.proof(server, .get, "/v1/me", key: "app-\(kty)", kty: kty, ["access_token": .string(access)])
            let me = try await Self.me(server, "DPoP " + access, proof: proof)
            #expect(me.status == 200, "\(me.text)")
            #expect(try me.json["user"]?["id"] == tokens["user"]?["id"])
        }
    }

    @Test("S41: a sign-up without a proof gets an unbound Bearer token, as before, and no dpop_jkt")
    func unboundSignUp() async throws {
        try await Self.withServer { server in
            let response = try await Self.signUp(server, proof: nil)
            #expect(response.status == 201)
            let tokens = try response.json
            #expect(tokens["token_type"] == "Bearer")
            let access = try #require(tokens["access_token"]?.stringValue)
            #expect(try Self.claims(access)["cnf"] == nil)
            #expect(try await Self.me(server, "Bearer " + access, proof: nil).status == 200)
            let bound = try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM sessions WHERE dpop_jkt IS NOT NULL", [])!.int("n") }
            #expect(bound == 0)
        }
    }

    /// One refusal of a resource request with a bound token, each on its own server.
    struct ResourceRefusal: Sendable, CustomTestStringConvertible {
        var testDescription: String
        /// The error and the scheme of the challenge.
        var error: String
        /// The `Authorization` scheme sent.
        var scheme = "DPoP"
        /// Whether a proof is sent at all.
        var sendsProof = true
        /// The proof's key (the session's is `app`).
        var key = "app"
        var method = HTTPMethod.get
        /// Fixture members of the proof, given the access token.
        var extra: @Sendable (_ accessToken: String, _ now: Date) -> [String: JSONValue] = { token, _ in ["access_token": .string(token)] }
    }

    static let resourceRefusals: [ResourceRefusal] = [
        ResourceRefusal(testDescription: "S42: a bound token sent as Bearer", error: "invalid_token", scheme: "Bearer", sendsProof: false),
        ResourceRefusal(testDescription: "S42: a bound token as DPoP without a proof", error: "invalid_dpop_proof", sendsProof: false),
        ResourceRefusal(testDescription: "S42: a proof by another key", error: "invalid_dpop_proof", key: "thief"),
        ResourceRefusal(testDescription: "S40: a wrong htm", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "htm": "POST"] }),
        ResourceRefusal(testDescription: "S40: a wrong htu", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "htu": .string(publicURL + "/v1/sessions")] }),
        ResourceRefusal(testDescription: "S40: an htu at another host", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "htu": "https://evil.example/v1/me"] }),
        ResourceRefusal(testDescription: "S40: a missing ath", error: "invalid_dpop_proof", extra: { _, _ in [:] }),
        ResourceRefusal(testDescription: "S40: a wrong ath", error: "invalid_dpop_proof", extra: { _, _ in ["access_token": "another token"] }),
        ResourceRefusal(testDescription: "S40: an iat 61 s old", error: "invalid_dpop_proof", extra: { token, now in
            ["access_token": .string(token), "iat": .number(now.timeIntervalSince1970.rounded(.down) - 61)]
        }),
        ResourceRefusal(testDescription: "S40: an iat 61 s ahead", error: "invalid_dpop_proof", extra: { token, now in
            ["access_token": .string(token), "iat": .number(now.timeIntervalSince1970.rounded(.down) + 61)]
        }),
        ResourceRefusal(testDescription: "S40: a jwk with private members", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "attack": "private_jwk"] }),
        ResourceRefusal(testDescription: "S40: alg none", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "attack": "alg_none"] }),
        ResourceRefusal(testDescription: "S40: alg HS256", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "attack": "hs256"] }),
        ResourceRefusal(testDescription: "S40: typ JWT instead of dpop+jwt", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "typ": "JWT"] }),
        ResourceRefusal(testDescription: "S40: no jti", error: "invalid_dpop_proof", extra: { token, _ in ["access_token": .string(token), "omit": ["jti"]] }),
    ]

    @Test("Each refusal of a resource request with a bound token: 401, WWW-Authenticate DPoP with its error, the body's error, and /v1/me not served", arguments: resourceRefusals)
    func resourceRefused(_ refusal: ResourceRefusal) async throws {
        try await Self.withServer { server in
            let (tokens, _) = try await Self.boundSession(server, key: "app")
            let access = try #require(tokens["access_token"]?.stringValue)
            let proof = refusal.sendsProof
                ? try Self.proof(server, .get, "/v1/me", key: refusal.key, refusal.extra(access, server.clock.now)).proof : nil
            let response = try await Self.me(server, "\(refusal.scheme) \(access)", proof: proof)
            #expect(response.status == 401, "\(response.text)")
            #expect(try response.json["error"]?.stringValue == refusal.error)
            #expect(try response.json["user"] == nil)
            let challenge = try #require(response.headers["WWW-Authenticate"])
            #expect(challenge.hasPrefix(#"DPoP error="\#(refusal.error)""#), "\(challenge)")
            #expect(challenge.contains(#"algs="ES256 EdDSA RS256""#))
        }
    }

    @Test("S41: a replayed jti is refused, and audited as dpop.proof_replayed; the table holds the spent proof until housekeeping")
    func replayedProof() async throws {
        try await Self.withServer { server in
            let (tokens, jkt) = try await Self.boundSession(server, key: "app")
            let access = try #require(tokens["access_token"]?.stringValue)
            let (proof, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access)])
            #expect(try await Self.me(server, "DPoP " + access, proof: proof).status == 200)
            let replayed = try await Self.me(server, "DPoP " + access, proof: proof)
            #expect(replayed.status == 401)
            #expect(try replayed.json["error"] == "invalid_dpop_proof")
            #expect(replayed.text.contains("already used"))
            let entries = try await Self.audit(server, "dpop.proof_replayed")
            #expect(entries.count == 1 && entries.first?.details["jkt"] == jkt && entries.first?.outcome.rawValue == "failure")
            let rows = try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM dpop_proofs", [])!.int("n") }
            #expect(rows == 2, "the sign-up's proof and the first GET's")
            server.clock.advance(by: 62)
            let deleted = try await server.database.write { try RetentionRepository().deleteExpired(now: server.clock.now, on: $0) }
            #expect(deleted >= 2)
        }
    }

    @Test("S40: an upper-case host, an upper-case scheme, an explicit default port, a query and a fragment in htu are accepted")
    func normalizedHTU() async throws {
        try await Self.withServer { server in
            let (tokens, _) = try await Self.boundSession(server, key: "app")
            let access = try #require(tokens["access_token"]?.stringValue)
            for htu in ["https://AUTH.Example.TEST/v1/me", "HTTPS://auth.example.test:443/v1/me", "https://auth.example.test/v1/me?x=1#frag"] {
                let (proof, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access), "htu": .string(htu)])
                let response = try await Self.me(server, "DPoP " + access, proof: proof)
                #expect(response.status == 200, "\(htu): \(response.text)")
            }
            #expect(DPoPProof.normalizedURL("https://auth.example.test:8443/v1/me") == "https://auth.example.test:8443/v1/me")
            #expect(DPoPProof.normalizedURL("http://Auth.Example.Test:80") == "http://auth.example.test/")
            #expect(DPoPProof.normalizedURL("https://user@auth.example.test/") == nil)
            #expect(DPoPProof.normalizedURL("ftp://auth.example.test/") == nil)
            #expect(DPoPProof.normalizedURL("https://[::1]:443/x") == "https://[::1]/x")
        }
    }

    @Test("S42: userinfo takes a bound token only as DPoP with a proof: as Bearer 401 DPoP invalid_token; with the proof the bearer check passes (a /v1 token then lacks openid: 403)")
    func userinfo() async throws {
        try await Self.withServer { server in
            let (tokens, _) = try await Self.boundSession(server, key: "app")
            let access = try #require(tokens["access_token"]?.stringValue)
            let bearer = try await Self.me(server, "Bearer " + access, proof: nil, path: "/oauth/userinfo")
            #expect(bearer.status == 401 && bearer.headers["WWW-Authenticate"]?.hasPrefix(#"DPoP error="invalid_token""#) == true)
            let (proof, _) = try Self.proof(server, .get, "/oauth/userinfo", key: "app", ["access_token": .string(access)])
            let dpop = try await Self.me(server, "DPoP " + access, proof: proof, path: "/oauth/userinfo")
            #expect(dpop.status == 403, "\(dpop.text)")
            #expect(try dpop.json["error"] == "insufficient_scope")
        }
    }

    // MARK: Refresh (S41)

    @Test("S41: a bound family refreshes only with a proof by its key: without one or with another key 400 invalid_dpop_proof, nothing rotates, session.dpop_refused audited; with the key it rotates and stays bound")
    func boundRefresh() async throws {
        try await Self.withServer { server in
            let (tokens, jkt) = try await Self.boundSession(server, key: "app")
            let refreshToken = try #require(tokens["refresh_token"]?.stringValue)
            let sessionID = try #require(tokens["session_id"]?.stringValue)

            let without = try await Self.refresh(server, refreshToken, proof: nil)
            #expect(without.status == 400)
            #expect(try without.json["error"] == "invalid_dpop_proof")
            let (otherProof, _) = try Self.proof(server, .post, "/v1/token", key: "thief")
            let other = try await Self.refresh(server, refreshToken, proof: otherProof)
            #expect(other.status == 400)
            #expect(try other.json["error"] == "invalid_dpop_proof")
            #expect(other.text.contains("another key"))
            let retired = try await server.database.read {
                try $0.queryOne("SELECT count(*) AS n FROM refresh_tokens WHERE session_id = ? AND retired_at IS NOT NULL", [.text(sessionID)])!.int("n")
            }
            #expect(retired == 0, "nothing rotated")
            let refused = try await Self.audit(server, "session.dpop_refused")
            #expect(refused.compactMap { $0.details["reason"] }.sorted() == ["missing", "other_key"])
            #expect(refused.allSatisfy { $0.details["session_id"] == sessionID })

            let (proof, _) = try Self.proof(server, .post, "/v1/token", key: "app")
            let rotated = try await Self.refresh(server, refreshToken, proof: proof)
            #expect(rotated.status == 200, "\(rotated.text)")
            let answer = try rotated.json
            #expect(answer["token_type"] == "DPoP")
            #expect(try Self.claims(try #require(answer["access_token"]?.stringValue))["cnf"] == ["jkt": .string(jkt)])
            #expect(try await Self.audit(server, "session.refreshed").contains { $0.details["session_id"] == sessionID })
        }
    }

    @Test("S41: an unbound session refreshed with a proof becomes bound to its key; its next refresh needs that key")
    func bindAtRefresh() async throws {
        try await Self.withServer { server in
            let signUp = try await Self.signUp(server, proof: nil)
            let first = try #require(try signUp.json["refresh_token"]?.stringValue)
            let (proof, jkt) = try Self.proof(server, .post, "/v1/token", key: "app")
            let bound = try await Self.refresh(server, first, proof: proof)
            #expect(bound.status == 200)
            #expect(try bound.json["token_type"] == "DPoP")
            let second = try #require(try bound.json["refresh_token"]?.stringValue)
            let sessionID = try #require(try signUp.json["session_id"]?.stringValue)
            let stored = try await server.database.read { try $0.queryOne("SELECT dpop_jkt FROM sessions WHERE id = ?", [.text(sessionID)]) }
            #expect(stored?.optionalString("dpop_jkt") == jkt)
            #expect(try await Self.refresh(server, second, proof: nil).status == 400)
        }
    }

    @Test("S41: a public OAuth client's code exchanged with a proof gets a bound grant (token_type DPoP, cnf.jkt, the session's dpop_jkt); its refresh at /oauth/token needs the same key")
    func oauthCodeExchange() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient()
            _ = try await server.passwordUser()
            let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
            let callback = try await OAuthBrowser(server).authorize(attempt)
            func token(_ fields: [String: String], key: String?) async throws -> TestResponse {
                let (fields, headers) = client.authenticate(fields)
                var all = headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { $1 }
                if let key { all["DPoP"] = try Self.proof(server, .post, "/oauth/token", key: key, ["htu": .string(server.baseURL + "/oauth/token")]).proof }
                return try await server.request(.post, "/oauth/token", body: Array(PercentEncoding.encodeForm(fields).utf8), headers: all)
            }
            let exchanged = try await token(
                ["grant_type": "authorization_code", "code": callback.code ?? "", "code_verifier": attempt.verifier, "redirect_uri": client.redirectURI],
                key: "notes")
            #expect(exchanged.status == 200, "\(exchanged.text)")
            let tokens = try exchanged.json
            #expect(tokens["token_type"] == "DPoP")
            let access = try #require(tokens["access_token"]?.stringValue)
            let jkt = try #require(try Self.claims(access)["cnf"]?["jkt"]?.stringValue)
            let sessionID = try #require(try Self.claims(access)["sid"]?.stringValue)
            let stored = try await server.database.read { try $0.queryOne("SELECT dpop_jkt FROM sessions WHERE id = ?", [.text(sessionID)]) }
            #expect(stored?.optionalString("dpop_jkt") == jkt)

            let refreshToken = try #require(tokens["refresh_token"]?.stringValue)
            let without = try await token(["grant_type": "refresh_token", "refresh_token": refreshToken], key: nil)
            #expect(without.status == 400)
            #expect(try without.json["error"] == "invalid_dpop_proof")
            let other = try await token(["grant_type": "refresh_token", "refresh_token": refreshToken], key: "thief")
            #expect(try other.json["error"] == "invalid_dpop_proof")
            let refreshed = try await token(["grant_type": "refresh_token", "refresh_token": refreshToken], key: "notes")
            #expect(refreshed.status == 200, "\(refreshed.text)")
            #expect(try refreshed.json["token_type"] == "DPoP")
        }
    }

    // MARK: Required (S41)

    @Test("S41: with dpop.required a sign-in without a proof is refused 400 invalid_dpop_proof and makes no session; with one it is bound")
    func required() async throws {
        try await Self.withServer({ $0.dpop.required = true }) { server in
            let refused = try await Self.signUp(server, proof: nil)
            #expect(refused.status == 400)
            #expect(try refused.json["error"] == "invalid_dpop_proof")
            let sessions = try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM sessions", [])!.int("n") }
            #expect(sessions == 0)
            let (tokens, _) = try await Self.boundSession(server, key: "app")
            #expect(tokens["token_type"] == "DPoP")
        }
    }

    @Test("S41: a client registered to require DPoP gets no token without a proof at /oauth/token; with one its token is bound, and introspection returns cnf")
    func clientRequiresDPoP() async throws {
        try await Self.withServer { server in
            var registration = ClientRegistration(
                name: "Reports", redirectURIs: ["https://backend.example/cb"], confidential: true, grantTypes: [.clientCredentials], scopes: ["reports"])
            registration.requiresDPoP = true
            let (client, secret) = try await server.application.services.clients.register(registration)
            let secretValue = try #require(secret)
            #expect(try await server.application.services.clients.client(id: client.id)?.requiresDPoP == true)
            let form = ["grant_type": "client_credentials", "client_id": client.id, "client_secret": secretValue]
            let body = Array(PercentEncoding.encodeForm(form).utf8)
            let contentType = ["Content-Type": "application/x-www-form-urlencoded"]

            let refused = try await server.request(.post, "/oauth/token", body: body, headers: contentType)
            #expect(refused.status == 400)
            #expect(try refused.json["error"] == "invalid_dpop_proof")
            #expect(refused.headers["Cache-Control"] == "no-store")

            let (proof, jkt) = try Self.proof(server, .post, "/oauth/token", key: "backend")
            let issued = try await server.request(.post, "/oauth/token", body: body, headers: contentType.merging(["DPoP": proof]) { $1 })
            #expect(issued.status == 200, "\(issued.text)")
            #expect(try issued.json["token_type"] == "DPoP")
            let access = try #require(try issued.json["access_token"]?.stringValue)
            #expect(try Self.claims(access)["cnf"] == ["jkt": .string(jkt)])

            let introspection = try await server.request(
                .post, "/oauth/introspect",
                body: Array(PercentEncoding.encodeForm(["token": access, "client_id": client.id, "client_secret": secretValue]).utf8),
                headers: contentType)
            #expect(introspection.status == 200)
            #expect(try introspection.json["cnf"] == ["jkt": .string(jkt)])
            #expect(try introspection.json["token_type"] == "DPoP")
        }
    }

    // MARK: Nonces (S43)

    @Test("S43: with dpop.nonce on, a proof without the nonce gets use_dpop_nonce and a DPoP-Nonce; a proof with it passes, on this instance and on a second one with the same master key; a success hands out the current nonce")
    func nonces() async throws {
        try await Self.withServer({ $0.dpop.nonce = "on" }) { server in
            let (first, _) = try Self.proof(server, .post, "/v1/auth/password/signup", key: "app")
            let asked = try await Self.signUp(server, proof: first)
            #expect(asked.status == 400)
            #expect(try asked.json["error"] == "use_dpop_nonce")
            let nonce = try #require(asked.headers["DPoP-Nonce"])
            let (second, _) = try Self.proof(server, .post, "/v1/auth/password/signup", key: "app", ["nonce": .string(nonce)])
            let signedUp = try await Self.signUp(server, proof: second)
            #expect(signedUp.status == 201, "\(signedUp.text)")
            let access = try #require(try signedUp.json["access_token"]?.stringValue)

            let (stale, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access), "nonce": "not-a-nonce"])
            let refused = try await Self.me(server, "DPoP " + access, proof: stale)
            #expect(refused.status == 401 && refused.headers["WWW-Authenticate"]?.hasPrefix(#"DPoP error="use_dpop_nonce""#) == true)
            #expect(refused.headers["DPoP-Nonce"] == nonce)

            try await Self.withSecondInstance(of: server) { other in
                let (proof, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access), "nonce": .string(nonce)])
                let response = try await Self.me(other, "DPoP " + access, proof: proof)
                #expect(response.status == 200, "the other instance takes this one's nonce: \(response.text)")
                #expect(response.headers["DPoP-Nonce"] == nonce, "a success carries the nonce of the window")
            }
            // A window later the old nonce still passes, and the answer hands out the new one (RFC 9449 §8.2).
            server.clock.advance(by: DPoPNonces.window)
            let (previous, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access), "nonce": .string(nonce)])
            let passed = try await Self.me(server, "DPoP " + access, proof: previous)
            let fresh = try #require(passed.headers["DPoP-Nonce"])
            #expect(passed.status == 200 && fresh != nonce)
            let (renewed, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access), "nonce": .string(fresh)])
            #expect(try await Self.me(server, "DPoP " + access, proof: renewed).status == 200)
            server.clock.advance(by: DPoPNonces.window)
            let (late, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access), "nonce": .string(nonce)])
            let expired = try await Self.me(server, "DPoP " + access, proof: late)
            #expect(expired.status == 401 && expired.headers["DPoP-Nonce"] != nonce, "two windows later the nonce is gone")
        }
    }

    // MARK: Across instances (S41)

    /// A second application on the server's database, master key and public URL, as a second
    /// instance behind the same name would be; stopped when `body` ends.
    static func withSecondInstance<T>(of server: TestServer, _ body: (TestServer) async throws -> T) async throws -> T {
        let application = try await LatchkeyApplication.open(
            configuration: server.application.configuration, accessLog: false, clock: { server.clock.now },
            rsaKeys: SharedRSAKeys.signing.source())
        try application.start()
        do {
            let result = try await body(TestServer.attached(application, clock: server.clock, directory: server.directory))
            await application.shutdown()
            return result
        } catch {
            await application.shutdown()
            throw error
        }
    }

    @Test("S41: a proof spent on one instance is refused on a second instance on the same database (PostgreSQL under LATCHKEY_TEST_ENGINE=postgres)")
    func replayAcrossInstances() async throws {
        try await Self.withServer { server in
            let (tokens, _) = try await Self.boundSession(server, key: "app")
            let access = try #require(tokens["access_token"]?.stringValue)
            let (proof, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access)])
            #expect(try await Self.me(server, "DPoP " + access, proof: proof).status == 200)
            try await Self.withSecondInstance(of: server) { other in
                let replayed = try await Self.me(other, "DPoP " + access, proof: proof)
                #expect(replayed.status == 401)
                #expect(try replayed.json["error"] == "invalid_dpop_proof")
                let (fresh, _) = try Self.proof(server, .get, "/v1/me", key: "app", ["access_token": .string(access)])
                #expect(try await Self.me(other, "DPoP " + access, proof: fresh).status == 200, "a new proof passes there")
            }
        }
    }

    @Test("S41: a refresh spends its proof's jti in the transaction that rotates: the same proof again, on a second instance and with the new token or the old one, is 400 invalid_dpop_proof with nothing rotated, no reuse counted and the replay audited")
    func replayedRefreshProof() async throws {
        try await Self.withServer { server in
            let (tokens, jkt) = try await Self.boundSession(server, key: "app")
            let first = try #require(tokens["refresh_token"]?.stringValue)
            let sessionID = try #require(tokens["session_id"]?.stringValue)
            let (proof, _) = try Self.proof(server, .post, "/v1/token", key: "app")
            let rotated = try await Self.refresh(server, first, proof: proof)
            #expect(rotated.status == 200, "\(rotated.text)")
            let second = try #require(try rotated.json["refresh_token"]?.stringValue)
            func counts() async throws -> (tokens: Int64, retired: Int64, proofs: Int64) {
                try await server.database.read { connection in
                    let tokens = try connection.queryOne("SELECT count(*) AS n FROM refresh_tokens WHERE session_id = ?", [.text(sessionID)])!.int("n")
                    let retired = try connection.queryOne(
                        "SELECT count(*) AS n FROM refresh_tokens WHERE session_id = ? AND retired_at IS NOT NULL", [.text(sessionID)])!.int("n")
                    let proofs = try connection.queryOne("SELECT count(*) AS n FROM dpop_proofs", [])!.int("n")
                    return (tokens, retired, proofs)
                }
            }
            let before = try await counts()
            try await Self.withSecondInstance(of: server) { other in
                for token in [second, first] {
                    let replayed = try await Self.refresh(other, token, proof: proof)
                    #expect(replayed.status == 400)
                    #expect(try replayed.json["error"] == "invalid_dpop_proof")
                    #expect(replayed.text.contains("already used"))
                }
            }
            let after = try await counts()
            #expect(after.tokens == before.tokens && after.retired == before.retired && after.proofs == before.proofs, "nothing written")
            #expect(try await Self.audit(server, "session.refreshed").filter { $0.details["session_id"] == sessionID }.count == 1)
            #expect(try await Self.audit(server, "session.reuse_detected").isEmpty, "the old token's replay is not reuse")
            let replays = try await Self.audit(server, "dpop.proof_replayed")
            #expect(replays.count == 2 && replays.allSatisfy { $0.details["jkt"] == jkt && $0.details["htm"] == "POST" })
            let (fresh, _) = try Self.proof(server, .post, "/v1/token", key: "app")
            #expect(try await Self.refresh(server, second, proof: fresh).status == 200, "the session lives on: a new proof rotates")
        }
    }

    // MARK: Hostile input and vectors

    @Test("S40: hostile DPoP headers get 4xx, never 500, at a token endpoint (400) and on /v1/me (401): two headers, garbage, oversized, a JWE, a JSON array header, an oct jwk")
    func hostileHeaders() async throws {
        try await Self.withServer { server in
            let (good, _) = try Self.proof(server, .post, "/v1/auth/password/signup", key: "app")
            let (tokens, _) = try await Self.boundSession(server, key: "app")
            let access = try #require(tokens["access_token"]?.stringValue)
            let header = Base64URL.encode(Array(#"{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"oct","k":"AAAA"}}"#.utf8))
            for (name, proof) in [
                ("garbage", "not a jwt"), ("oversized", String(repeating: "a", count: 9_000) + ".b.c"), ("jwe", "a.b.c.d.e"),
                ("array header", Base64URL.encode(Array("[]".utf8)) + ".e30.AAAA"), ("oct jwk", header + ".e30.AAAA"), ("empty", ""),
            ] {
                let response = try await Self.signUp(server, username: "\(name.replacingOccurrences(of: " ", with: "-"))@example.com", proof: proof)
                #expect(response.status == 400, "\(name): \(response.text)")
                #expect(try response.json["error"] == "invalid_dpop_proof", "\(name)")
                let resource = try await Self.me(server, "DPoP " + access, proof: proof)
                #expect(resource.status == 401, "\(name): \(resource.text)")
                #expect(try resource.json["error"] == "invalid_dpop_proof", "\(name)")
            }
            let twice = try await server.request(
                .post, "/v1/auth/password/signup", json: ["username": "twice@example.com", "password": "correct horse battery"],
                headers: ["DPoP": good, "dpop": good])
            #expect(twice.status == 400)
            #expect(try twice.json["error"] == "invalid_dpop_proof")
        }
    }

    @Test("S40: RFC 7638 §3.1's RSA key and RFC 8037 A.3's Ed25519 key have the RFCs' thumbprints")
    func thumbprintVectors() throws {
        let rsa = try JWK(parsing: Array(#"""
            {"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}
            """#.utf8))
        #expect(try rsa.thumbprint() == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        let ed25519 = try JWK(parsing: Array(#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#.utf8))
        #expect(try ed25519.thumbprint() == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
    }

    @Test("Discovery advertises dpop_signing_alg_values_supported")
    func discovery() async throws {
        try await Self.withServer { server in
            let document = try await server.request(.get, "/.well-known/openid-configuration")
            #expect(try document.json["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "RS256"])
        }
    }
}

/// jwcrypto behind Fixtures/dpop_proofs.py: one Python process for the whole run, asked one
/// JSON line at a time. `@unchecked Sendable`: the process and its pipes are only touched with
/// ``lock`` held.
final class JWCryptoProofs: @unchecked Sendable {
    static let shared = Result { try JWCryptoProofs() }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = Mutex<[UInt8]>([])

    init() throws {
        process.executableURL = URL(fileURLWithPath: try #require(interopPython))
        process.arguments = [try Fixtures(bundle: .module).url("dpop_proofs.py").path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// A proof for the request (see the fixture's docstring).
    func make(_ request: JSONValue) throws -> (proof: String, jkt: String) {
        let line = try lock.withLock { buffer in
            input.fileHandleForWriting.write(Data(request.serialized + [UInt8(ascii: "\n")]))
            while !buffer.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw Failure(message: "the proof fixture exited") }
                buffer += chunk
            }
            let end = buffer.firstIndex(of: UInt8(ascii: "\n"))!
            defer { buffer.removeSubrange(...end) }
            return Array(buffer[..<end])
        }
        let answer = try JSONValue(parsing: line)
        guard let proof = answer["proof"]?.stringValue, let jkt = answer["jkt"]?.stringValue else {
            throw Failure(message: answer["error"]?.stringValue ?? "no proof")
        }
        return (proof, jkt)
    }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { "dpop_proofs.py: \(message)" }
    }
}
