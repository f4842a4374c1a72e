import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWebAuthn
import LatchkeyWire
import Testing

/// App Attest over HTTP with the test double's PKI as the root (docs/security.md S47–S49):
/// challenges, attestation, assertions, app check tokens checked against the JWKS, and the
/// enforcement of `app_attest.enforce` in both modes.
@Suite("App Attest endpoints")
struct AppAttestEndpointTests {
    static let appID = "ABCDE12345.com.example.app"

    /// A server whose App Attest trusts `double`'s root, for `appID` in production.
    static func with(
        _ double: AppAttestDouble, _ configure: @escaping (inout Configuration) -> Void = { _ in }, _ body: (TestServer) async throws -> Void
    ) async throws {
        try await TestServer.with({ configuration in
            configuration.appAttest.appIDs = [appID]
            configuration.appAttest.rootCAFile = "test-app-attest-root.pem"
            configuration.appAttest.rootCertificates = [Configuration.TrustedRootCertificate(double.root, file: "test-app-attest-root.pem")]
            configure(&configuration)
        }, body)
    }

    static func challenge(_ server: TestServer) async throws -> [UInt8] {
        let response = try await server.request(.post, "/v1/app-attest/challenge")
        #expect(response.status == 200, "\(response.text)")
        let challenge = try response.decode(WireAppAttestChallenge.self)
        #expect(challenge.expiresIn == 300)
        return try #require(Base64URL.decode(challenge.challenge))
    }

    static func postKey(_ server: TestServer, keyID: [UInt8], object: [UInt8], challenge: [UInt8]) async throws -> TestResponse {
        try await server.request(
            .post, "/v1/app-attest/keys",
            json: WireAppAttestKeyRequest(keyID: Base64URL.encode(keyID), attestation: Base64URL.encode(object), challenge: Base64URL.encode(challenge)).json)
    }

    /// Attests a key (a new one by default) with a fresh challenge.
    static func attest(
        _ server: TestServer, _ double: AppAttestDouble, appID: String = appID, environment: AppAttestEnvironment = .production,
        key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), tampering: AppAttestDouble.Tampering = AppAttestDouble.Tampering()
    ) async throws -> (AppAttestDouble.Attestation, TestResponse) {
        let challenge = try await challenge(server)
        let attestation = double.attest(
            appID: appID, environment: environment, clientDataHash: HashFunction.sha256.hash(challenge), key: key, tampering: tampering)
        return (attestation, try await postKey(server, keyID: attestation.keyID, object: attestation.object, challenge: challenge))
    }

    static func postAssertion(_ server: TestServer, keyID: [UInt8], assertion: [UInt8], challenge: [UInt8]) async throws -> TestResponse {
        try await server.request(
            .post, "/v1/app-attest/assertions",
            json: WireAppAttestAssertionRequest(keyID: Base64URL.encode(keyID), assertion: Base64URL.encode(assertion), challenge: Base64URL.encode(challenge)).json)
    }

    /// An assertion by `attestation`'s key with `counter` over a fresh challenge.
    static func assert(_ server: TestServer, _ attestation: AppAttestDouble.Attestation, counter: UInt32) async throws -> TestResponse {
        let challenge = try await challenge(server)
        let assertion = AppAttestDouble.assertion(key: attestation.key, appID: appID, counter: counter, clientDataHash: HashFunction.sha256.hash(challenge))
        return try await postAssertion(server, keyID: attestation.keyID, assertion: assertion, challenge: challenge)
    }

    static func audit(_ server: TestServer, _ event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(event: event, limit: 1000)
    }

    static func count(_ server: TestServer, _ table: String) async throws -> Int64 {
        try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM \(table)", [])!.int("n") }
    }

    static func storedCounter(_ server: TestServer, _ keyID: [UInt8]) async throws -> UInt32? {
        try await server.database.read { try AppAttestRepository().findKey(id: keyID, on: $0)?.counter }
    }

    /// Verifies an app check token as an app's backend does: the signature against the JWKS
    /// fetched over HTTP, `typ: app-check+jwt`, `iss`, `exp`.
    static func verifyAppCheckToken(_ token: String, _ server: TestServer) async throws -> VerifiedJWT {
        let jwks = try JWKSet(parsing: try await server.request(.get, "/.well-known/jwks.json").body)
        let policy = JWTValidationPolicy(
            issuer: server.baseURL, audiences: nil, algorithms: [.es256], leeway: 0, requiredClaims: ["iss", "sub", "exp", "iat", "key_id"],
            type: .exactly("app-check+jwt"))
        return try JWTVerifier(keys: try JWSKeySet(jwks: jwks, defaultAlgorithm: nil), policy: policy).verify(token, now: server.clock.now)
    }

    @Test("S47, S48, S49: a challenge, an attestation and an assertion earn an app check token that verifies against the JWKS")
    func attestAssertAndVerify() async throws {
        let double = AppAttestDouble()
        try await Self.with(double) { server in
            let (attestation, response) = try await Self.attest(server, double)
            #expect(response.status == 201, "\(response.text)")
            #expect(try response.decode(WireAppAttestKey.self) == WireAppAttestKey(keyID: Base64URL.encode(attestation.keyID), appID: Self.appID, environment: "production"))
            #expect(try await Self.count(server, "app_attest_challenges") == 0, "the challenge is spent")
            let stored = try #require(try await server.database.read { try AppAttestRepository().findKey(id: attestation.keyID, on: $0) })
            #expect(stored.counter == 0 && stored.attested.publicKey == attestation.key.publicKey.x963Representation)
            #expect(stored.attested.receipt == Array("test receipt".utf8) && stored.attested.appID == Self.appID)
            let attested = try await Self.audit(server, "app_attest.key_attested")
            #expect(attested.map(\.details) == [["key_id": Base64URL.encode(attestation.keyID), "app_id": Self.appID, "environment": "production"]])

            let answer = try await Self.assert(server, attestation, counter: 1)
            #expect(answer.status == 200, "\(answer.text)")
            let token = try answer.decode(WireAppCheckToken.self)
            #expect(token.expiresIn == 3_600)
            let verified = try await Self.verifyAppCheckToken(token.appCheckToken, server)
            #expect(verified.header["typ"] == "app-check+jwt" && verified.header["alg"] == "ES256")
            #expect(verified.claims.subject == Self.appID)
            #expect(verified.claims["key_id"] == .string(Base64URL.encode(attestation.keyID)))
            #expect(verified.claims.expiresAt == verified.claims.issuedAt.map { $0.addingTimeInterval(3_600) })
            #expect(try await Self.storedCounter(server, attestation.keyID) == 1)
            #expect(server.application.metrics.value(.appAttest, ["operation": "assert", "outcome": "success"]) == 1)
            // An access token is not an app check token, nor the other way round.
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(token.appCheckToken)"]).status == 401)
        }
    }

    @Test("S47: each wrong piece of an attestation is refused with its reason, nothing stored, the challenge spent, audited")
    func refusedAttestations() async throws {
        let double = AppAttestDouble()
        try await Self.with(double) { server in
            var wrongNonce = AppAttestDouble.Tampering()
            wrongNonce.nonce = HashFunction.sha256.hash([1])
            var counterOne = AppAttestDouble.Tampering()
            counterOne.counter = 1
            var otherCredential = AppAttestDouble.Tampering()
            otherCredential.credentialID = HashFunction.sha256.hash([2])
            let cases: [(String, AppAttestDouble, String, AppAttestEnvironment, AppAttestDouble.Tampering)] = [
                ("nonce_mismatch", double, Self.appID, .production, wrongNonce),
                ("untrusted_attestation", AppAttestDouble(), Self.appID, .production, AppAttestDouble.Tampering()),
                ("rp_id_mismatch", double, "ABCDE12345.com.example.other", .production, AppAttestDouble.Tampering()),
                ("counter_mismatch", double, Self.appID, .production, counterOne),
                ("environment_mismatch", double, Self.appID, .development, AppAttestDouble.Tampering()),
                ("key_id_mismatch", double, Self.appID, .production, otherCredential),
            ]
            for (reason, issuer, appID, environment, tampering) in cases {
                let (_, response) = try await Self.attest(server, issuer, appID: appID, environment: environment, tampering: tampering)
                #expect(response.status == 400, "\(reason)")
                #expect(try response.json["error"] == "invalid_grant", "\(reason)")
                #expect(try response.json["reason"] == .string(reason), "\(reason): \(response.text)")
            }
            #expect(try await Self.count(server, "app_attest_keys") == 0)
            #expect(try await Self.count(server, "app_attest_challenges") == 0, "every challenge is spent")
            let refused = try await Self.audit(server, "app_attest.key_refused")
            #expect(Set(refused.compactMap { $0.details["reason"] }) == Set(cases.map(\.0)))
            #expect(refused.allSatisfy { $0.outcome == .failure })

            // A key id that is SHA-256 of the SubjectPublicKeyInfo rather than of the point.
            let challenge = try await Self.challenge(server)
            let attestation = double.attest(appID: Self.appID, clientDataHash: HashFunction.sha256.hash(challenge))
            let spkiHash = HashFunction.sha256.hash(attestation.key.publicKey.derRepresentation)
            let response = try await Self.postKey(server, keyID: spkiHash, object: attestation.object, challenge: challenge)
            #expect(try response.json["reason"] == "key_id_mismatch", "\(response.text)")
        }
    }

    @Test("S47: a reused or expired challenge, and a second attestation of the same key, are refused")
    func reusedChallengeAndSecondAttestation() async throws {
        let double = AppAttestDouble()
        try await Self.with(double) { server in
            let challenge = try await Self.challenge(server)
            let first = double.attest(appID: Self.appID, clientDataHash: HashFunction.sha256.hash(challenge))
            #expect(try await Self.postKey(server, keyID: first.keyID, object: first.object, challenge: challenge).status == 201)
            let second = double.attest(appID: Self.appID, clientDataHash: HashFunction.sha256.hash(challenge))
            let reused = try await Self.postKey(server, keyID: second.keyID, object: second.object, challenge: challenge)
            #expect(reused.status == 400, "\(reused.text)")
            #expect(try reused.json["reason"] == "unknown_challenge", "\(reused.text)")

            let (_, again) = try await Self.attest(server, double, key: first.key)
            #expect(again.status == 409, "\(again.text)")
            #expect(try again.json["error"] == "conflict", "\(again.text)")
            #expect(try await Self.audit(server, "app_attest.key_refused").compactMap { $0.details["reason"] }.sorted() == ["key_exists", "unknown_challenge"])

            let late = try await Self.challenge(server)
            server.clock.advance(by: 301)
            let expired = double.attest(appID: Self.appID, clientDataHash: HashFunction.sha256.hash(late))
            let answer = try await Self.postKey(server, keyID: expired.keyID, object: expired.object, challenge: late)
            #expect(try answer.json["reason"] == "unknown_challenge", "\(answer.text)")
            #expect(try await Self.count(server, "app_attest_keys") == 1)
        }
    }

    @Test("S48: a replayed, out-of-order, unknown-key or reused-challenge assertion is refused and the counter holds")
    func refusedAssertions() async throws {
        let double = AppAttestDouble()
        try await Self.with(double) { server in
            let (attestation, _) = try await Self.attest(server, double)
            #expect(try await Self.assert(server, attestation, counter: 5).status == 200)

            let challenge = try await Self.challenge(server)
            let five = AppAttestDouble.assertion(key: attestation.key, appID: Self.appID, counter: 5, clientDataHash: HashFunction.sha256.hash(challenge))
            let replayed = try await Self.postAssertion(server, keyID: attestation.keyID, assertion: five, challenge: challenge)
            #expect(replayed.status == 400, "\(replayed.text)")
            #expect(try replayed.json["reason"] == "counter_mismatch", "\(replayed.text)")
            let older = try await Self.assert(server, attestation, counter: 3)
            #expect(try older.json["reason"] == "counter_mismatch", "\(older.text)")

            let fresh = try await Self.challenge(server)
            let six = AppAttestDouble.assertion(key: attestation.key, appID: Self.appID, counter: 6, clientDataHash: HashFunction.sha256.hash(fresh))
            #expect(try await Self.postAssertion(server, keyID: attestation.keyID, assertion: six, challenge: fresh).status == 200)
            let reusedChallenge = try await Self.postAssertion(server, keyID: attestation.keyID, assertion: six, challenge: fresh)
            #expect(try reusedChallenge.json["reason"] == "unknown_challenge", "\(reusedChallenge.text)")

            let stranger = AppAttestDouble().attest(appID: Self.appID, clientDataHash: [UInt8](repeating: 0, count: 32))
            let unknown = try await Self.assert(server, stranger, counter: 1)
            #expect(try unknown.json["reason"] == "unknown_key", "\(unknown.text)")
            let otherKey = try await Self.challenge(server)
            let forged = AppAttestDouble.assertion(key: P256.Signing.PrivateKey(), appID: Self.appID, counter: 9, clientDataHash: HashFunction.sha256.hash(otherKey))
            let badSignature = try await Self.postAssertion(server, keyID: attestation.keyID, assertion: forged, challenge: otherKey)
            #expect(try badSignature.json["reason"] == "bad_signature", "\(badSignature.text)")

            #expect(try await Self.storedCounter(server, attestation.keyID) == 6)
            let refused = try await Self.audit(server, "app_attest.assertion_refused").compactMap { $0.details["reason"] }
            #expect(refused.sorted() == ["bad_signature", "counter_mismatch", "counter_mismatch", "unknown_challenge", "unknown_key"])
        }
    }

    @Test("S48: of concurrent assertions with one counter, exactly one earns a token (compare-and-set)")
    func concurrentAssertions() async throws {
        let double = AppAttestDouble()
        try await Self.with(double) { server in
            let (attestation, _) = try await Self.attest(server, double)
            var requests: [(challenge: [UInt8], assertion: [UInt8])] = []
            for _ in 0..<6 {
                let challenge = try await Self.challenge(server)
                requests.append((challenge, AppAttestDouble.assertion(key: attestation.key, appID: Self.appID, counter: 7, clientDataHash: HashFunction.sha256.hash(challenge))))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for request in requests {
                    group.addTask { try await Self.postAssertion(server, keyID: attestation.keyID, assertion: request.assertion, challenge: request.challenge).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 400 }.count == 5, "\(statuses)")
            #expect(try await Self.storedCounter(server, attestation.keyID) == 7)
        }
    }

    @Test("S49: enforced sign-up and sign-in need a valid app check token; a missing, forged or access token is refused with 401 app_check_failed")
    func enforcement() async throws {
        let double = AppAttestDouble()
        try await Self.with(double, { $0.appAttest.enforce = ["signup", "sign_in"] }) { server in
            let body: JSONValue = ["username": "ada@example.com", "password": "correct horse battery"]
            let missing = try await server.request(.post, "/v1/auth/password/signup", json: body)
            #expect(missing.status == 401, "\(missing.text)")
            #expect(try missing.json["error"] == "app_check_failed", "\(missing.text)")
            let forged = try await server.request(.post, "/v1/auth/password/signup", json: body, headers: ["X-Latchkey-App-Check": "e30.e30.AAAA"])
            #expect(forged.status == 401)
            #expect(try forged.json["error"] == "app_check_failed")
            let user = try await server.createUser(email: "grace@example.com")
            let accessToken = try await server.startSession(for: user).accessToken
            let wrongType = try await server.request(.post, "/v1/auth/password/signup", json: body, headers: ["X-Latchkey-App-Check": accessToken])
            #expect(wrongType.status == 401)
            #expect(try wrongType.json["error"] == "app_check_failed")
            #expect(try await Self.count(server, "users") == 1, "nobody signed up")

            let (attestation, _) = try await Self.attest(server, double)
            let token = try await Self.assert(server, attestation, counter: 1).decode(WireAppCheckToken.self).appCheckToken
            let signUp = try await server.request(.post, "/v1/auth/password/signup", json: body, headers: ["X-Latchkey-App-Check": token])
            #expect(signUp.status == 201, "\(signUp.text)")
            #expect(try await server.request(.post, "/v1/auth/password/login", json: body).json["error"] == "app_check_failed")
            let login = try await server.request(.post, "/v1/auth/password/login", json: body, headers: ["X-Latchkey-App-Check": token])
            #expect(login.status == 200, "\(login.text)")
            // `token` is not enforced here: a refresh needs no app check token.
            let refreshToken = try #require(try login.json["refresh_token"]?.stringValue)
            let refresh = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(refreshToken)])
            #expect(refresh.status == 200, "\(refresh.text)")

            server.clock.advance(by: 3_700)
            let expired = try await server.request(.post, "/v1/auth/password/login", json: body, headers: ["X-Latchkey-App-Check": token])
            #expect(expired.status == 401)
            #expect(try expired.json["error"] == "app_check_failed")
            let failures = try await Self.audit(server, "app_check.failed")
            #expect(failures.count == 5 && failures.allSatisfy { $0.outcome == .failure })
            #expect(failures.compactMap { $0.details["reason"] }.contains("missing"))
            #expect(server.application.metrics.value(.appChecks, ["endpoint": "signup", "outcome": "refused"]) == 3)
            #expect(server.application.metrics.value(.appChecks, ["endpoint": "sign_in", "outcome": "passed"]) == 1)
        }
    }

    @Test("S49: in log mode a request without a token goes through, counted and audited as logged")
    func logMode() async throws {
        try await Self.with(AppAttestDouble(), { $0.appAttest.enforce = ["signup", "token"]; $0.appAttest.enforceMode = "log" }) { server in
            let signUp = try await server.request(.post, "/v1/auth/password/signup", json: ["username": "ada@example.com", "password": "correct horse battery"])
            #expect(signUp.status == 201, "\(signUp.text)")
            let refreshToken = try #require(try signUp.json["refresh_token"]?.stringValue)
            let refresh = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(refreshToken)])
            #expect(refresh.status == 200, "\(refresh.text)")
            let logged = try await Self.audit(server, "app_check.failed")
            #expect(logged.map(\.outcome) == [.logged, .logged])
            #expect(Set(logged.compactMap { $0.details["endpoint"] }) == ["signup", "token"])
            #expect(server.application.metrics.value(.appChecks, ["endpoint": "signup", "outcome": "logged"]) == 1)
            #expect(server.application.metrics.value(.appChecks, ["endpoint": "token", "outcome": "logged"]) == 1)
        }
    }

    @Test("S47: malformed, truncated and oversized bodies are documented 4xx answers, never a 500")
    func malformedBodies() async throws {
        let double = AppAttestDouble()
        try await Self.with(double) { server in
            let challenge = try await Self.challenge(server)
            let attestation = double.attest(appID: Self.appID, clientDataHash: HashFunction.sha256.hash(challenge))
            let keyID = Base64URL.encode(attestation.keyID)
            let bodies: [(String, [UInt8])] = [
                ("/v1/app-attest/keys", Array("not json".utf8)),
                ("/v1/app-attest/keys", Array("{}".utf8)),
                ("/v1/app-attest/keys", Array("[1]".utf8)),
                ("/v1/app-attest/keys", (["key_id": .string(keyID), "attestation": "%%%", "challenge": "AAAA"] as JSONValue).serialized),
                ("/v1/app-attest/keys", (["key_id": "AAAA", "attestation": "AAAA", "challenge": "AAAA"] as JSONValue).serialized),
                ("/v1/app-attest/keys", (["key_id": .string(keyID), "attestation": 7, "challenge": "AAAA"] as JSONValue).serialized),
                ("/v1/app-attest/keys", (["key_id": .string(keyID), "attestation": .string(String(repeating: "A", count: 70_000)), "challenge": "AAAA"] as JSONValue).serialized),
                ("/v1/app-attest/assertions", Array("{\"key_id\":".utf8)),
                ("/v1/app-attest/assertions", (["key_id": .string(keyID), "assertion": "", "challenge": "AAAA"] as JSONValue).serialized),
            ]
            for (path, body) in bodies {
                let response = try await server.request(.post, path, body: body, headers: ["Content-Type": "application/json"])
                #expect((400..<500).contains(response.status), "\(path) \(String(decoding: body.prefix(60), as: UTF8.self)): \(response.status) \(response.text)")
                #expect(try response.json["error"]?.stringValue != nil, "\(response.text)")
            }
            for length in stride(from: 1, to: attestation.object.count, by: 211) {
                let fresh = try await Self.challenge(server)
                let response = try await Self.postKey(server, keyID: attestation.keyID, object: Array(attestation.object.prefix(length)), challenge: fresh)
                #expect(response.status == 400, "\(length): \(response.text)")
            #expect(try response.json["error"] == "invalid_grant", "\(length): \(response.text)")
            }
            #expect(try await Self.count(server, "app_attest_keys") == 0)
        }
    }

    @Test("app_attest settings: each bad entry stops the load with a line naming it; a root file is read at load")
    func settings() throws {
        let bad: [(String, String, String)] = [
            ("LATCHKEY_APP_ATTEST_APP_IDS", "com.example.app", "app_attest.app_ids"),
            ("LATCHKEY_APP_ATTEST_ENVIRONMENT", "staging", "app_attest.environment"),
            ("LATCHKEY_APP_ATTEST_ENFORCE", "signup,login", "app_attest.enforce"),
            ("LATCHKEY_APP_ATTEST_ENFORCE_MODE", "warn", "app_attest.enforce_mode"),
            ("LATCHKEY_APP_ATTEST_TOKEN_TTL", "10", "app_attest.token_ttl"),
            ("LATCHKEY_APP_ATTEST_ROOT_CA_FILE", "/nonexistent/root.pem", "app_attest.root_ca_file"),
        ]
        for (name, value, setting) in bad {
            var environment = ["LATCHKEY_APP_ATTEST_APP_IDS": Self.appID]
            environment[name] = value
            do {
                _ = try ConfigurationLoader.load(file: nil, environment: environment)
                Issue.record("\(name)=\(value) loaded")
            } catch {
                #expect(error.problems.count == 1 && (error.problems[0].hasPrefix(setting + ":") || error.problems[0].hasPrefix(name + ":")), "\(error.problems)")
            }
        }
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_APP_ATTEST_ENFORCE": "signup"]) }

        let double = AppAttestDouble()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("app-attest-root-\(UUID()).pem")
        try Data(double.rootPEM.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try ConfigurationLoader.load(
            file: nil,
            environment: [
                "LATCHKEY_APP_ATTEST_APP_IDS": Self.appID, "LATCHKEY_APP_ATTEST_ROOT_CA_FILE": file.path,
                "LATCHKEY_APP_ATTEST_ENFORCE": "signup,sign_in,token", "LATCHKEY_APP_ATTEST_ENFORCE_MODE": "log",
            ])
        #expect(configuration.appAttest.rootCertificates.map(\.certificate.derRepresentation) == [double.root.derRepresentation])
        #expect(configuration.appAttest.enforce == ["signup", "sign_in", "token"] && configuration.appAttest.enforceMode == "log")
    }

    @Test("S47: without app_attest.app_ids the endpoints answer 404")
    func off() async throws {
        try await TestServer.with { server in
            let response = try await server.request(.post, "/v1/app-attest/challenge")
            #expect(response.status == 404, "\(response.text)")
            #expect(try response.json["error"] == "not_found", "\(response.text)")
        }
    }
}
