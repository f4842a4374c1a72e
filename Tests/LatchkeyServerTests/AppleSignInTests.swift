import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeySandbox
import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Testing

/// What an app does with Sign in with Apple, against a test server and the sandbox Apple.
enum AppleFlow {
    /// A raw nonce and the SHA-256 hex the app puts in its Apple request.
    static func nonce() -> (raw: String, hashed: String) {
        let raw = Base64URL.encode(SecureRandom.bytes(count: 16))
        return (raw, HashFunction.sha256.hexDigest(Array(raw.utf8)))
    }

    /// Authorizes at `sandbox` with a fresh nonce and posts the result to `/v1/auth/apple`.
    static func signIn(
        _ server: TestServer, sandbox: AppleSandbox, subject: String? = nil, email: String? = "ada@privaterelay.appleid.com",
        exchange: Bool = true, names: (String, String)? = nil, transferSubject: String? = nil
    ) async throws -> (response: TestResponse, credential: AppleSandbox.Credential) {
        let nonce = nonce()
        let credential = try sandbox.authorize(
            .init(subject: subject, email: email, isPrivateEmail: true, nonce: nonce.hashed, transferSubject: transferSubject))
        let body = WireAppleSignInRequest(
            identityToken: credential.identityToken, authorizationCode: exchange ? credential.authorizationCode : nil, nonce: nonce.raw,
            givenName: names?.0, familyName: names?.1)
        return (try await server.request(.post, "/v1/auth/apple", json: body.json), credential)
    }

    static func count(_ server: TestServer, _ sql: String, _ bindings: [SQLValue] = []) async throws -> Int64 {
        try await server.database.read { try $0.queryOne(sql, bindings)!.int("n") }
    }
}

@Suite("Sign in with Apple: sign-in")
struct AppleSignInTests {
    @Test("the seed flow: first sign-in creates the account with the name, the second keeps it (created: false)")
    func firstAndSecondSignIn() async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            let (first, credential) = try await AppleFlow.signIn(server, sandbox: sandbox, names: ("Ada", "Lovelace"))
            #expect(first.status == 200)
            let body = try first.tokens
            #expect(body.created)
            #expect(body.tokenType == "Bearer")
            #expect(body.user.givenName == "Ada")
            #expect(body.user.familyName == "Lovelace")
            #expect(body.user.email == "ada@privaterelay.appleid.com")
            #expect(body.user.isPrivateEmail, "sent by the sandbox as the string \"true\"")
            #expect(body.user.emailVerified)
            let access = try Insecure.unverifiedContents(of: body.accessToken).claims
            #expect(access["amr"] == ["apple"])

            // The identity row: keyed on (issuer, sub), Apple's refresh token sealed, not plain.
            let identity = try await server.database.read {
                try $0.queryOne("SELECT * FROM identities WHERE subject = ?", [.text(credential.subject)])
            }
            let row = try #require(identity)
            #expect(try row.string("issuer") == "https://appleid.apple.com")
            #expect(try row.string("apple_client_id") == "com.example.app")
            #expect(row.optionalInt("real_user_status") == 2)
            let sealed = try #require(row.optionalBlob("apple_refresh_token"))
            let plain = try server.application.masterKey.unseal(sealed, context: "identities.apple_refresh_token:" + (try row.string("id")))
            #expect(String(decoding: plain, as: UTF8.self).hasPrefix("r"), "Apple's refresh token, sealed under the master key")
            #expect(!String(decoding: sealed, as: UTF8.self).contains(String(decoding: plain, as: UTF8.self)))
            let userID = body.user.id
            #expect(try await SessionTests.auditEvents(server, userID: userID).contains("sign_in"))

            // Apple sends the name only once; a later sign-in without it (or with another) keeps it.
            let (second, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: credential.subject, names: ("Eve", "Mallory"))
            #expect(second.status == 200)
            let again = try second.tokens
            #expect(!again.created)
            #expect(again.user.id == userID)
            #expect(again.user.givenName == "Ada")
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 1)
        }
    }

    @Test("a sign-in without an authorization code works and stores no Apple token")
    func withoutCode() async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            let (response, credential) = try await AppleFlow.signIn(server, sandbox: sandbox, email: nil, exchange: false)
            #expect(response.status == 200)
            #expect(try response.tokens.user.email == nil, "managed Apple Accounts have no email")
            let stored = try await server.database.read {
                try $0.queryOne("SELECT apple_refresh_token FROM identities WHERE subject = ?", [.text(credential.subject)])!.optionalBlob("apple_refresh_token")
            }
            #expect(stored == nil)
        }
    }

    @Test("an identity token is accepted once; a replay is refused and writes nothing")
    func replay() async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            let nonce = AppleFlow.nonce()
            let credential = try sandbox.authorize(.init(nonce: nonce.hashed))
            let body: JSONValue = ["identity_token": .string(credential.identityToken), "nonce": .string(nonce.raw)]
            #expect(try await server.request(.post, "/v1/auth/apple", json: body).status == 200)
            let again = try await server.request(.post, "/v1/auth/apple", json: body)
            #expect(again.status == 401)
            #expect(try again.wireError.error == .invalidIdentityToken)
            #expect(try again.wireError.errorDescription.hasPrefix("replay:"))
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM sessions") == 1)
        }
    }

    @Test("S24: malformed bodies get invalid_request and create nothing")
    func s24BadBodies() async throws {
        try await TestServer.with { server in
            for body: JSONValue in [[:], ["identity_token": 1], ["identity_token": ""], ["identity_token": "a.b.c", "nonce": 5], [1, 2]] {
                let response = try await server.request(.post, "/v1/auth/apple", json: body)
                #expect(response.status == 400, "\(body)")
                #expect(try response.wireError.error == .invalidRequest)
            }
            let huge = try await server.request(.post, "/v1/auth/apple", json: ["identity_token": .string(String(repeating: "a", count: 20_000))])
            #expect(huge.status == 400)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
        }
    }

    @Test("S24: an authorization code with control characters or spaces is invalid_request, not a 503 from Apple's answer")
    func s24AuthorizationCodeCharacters() async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            for code in ["\u{0}", "a\nb", "\u{7F}", "a b", "é"] {
                let nonce = AppleFlow.nonce()
                let credential = try sandbox.authorize(.init(nonce: nonce.hashed))
                let body: JSONValue = [
                    "identity_token": .string(credential.identityToken), "nonce": .string(nonce.raw), "authorization_code": .string(code),
                ]
                let response = try await server.request(.post, "/v1/auth/apple", json: body)
                #expect(response.status == 400, "\(Array(code.utf8))")
                #expect(try response.wireError.error == .invalidRequest)
            }
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
        }
    }
}

/// One test per identity-token check: each token fails exactly that check (docs/reference.md, S1–S5).
@Suite("Sign in with Apple: every identity-token check")
struct AppleIdentityTokenCheckTests {
    enum Case: String, CaseIterable, CustomTestStringConvertible {
        case expired, futureIssuedAt, wrongAudience, wrongIssuer, algNone, hs256WithRSAPublicKey, unknownKeyID, missingNonce, wrongNonce,
            badSignature, malformed, accessTokenType
        var testDescription: String { rawValue }

        /// The check the error description must name first.
        var check: String {
            switch self {
            case .expired: "exp"
            case .futureIssuedAt: "iat"
            case .wrongAudience: "aud"
            case .wrongIssuer: "iss"
            case .algNone, .hs256WithRSAPublicKey: "alg"
            case .unknownKeyID: "kid"
            case .missingNonce, .wrongNonce: "nonce"
            case .badSignature: "signature"
            case .malformed: "malformed"
            case .accessTokenType: "typ"
            }
        }
    }

    static func claims(now: Date, nonce: String) -> JWTClaims {
        var claims = JWTClaims()
        claims.issuer = "https://appleid.apple.com"
        claims.audience = ["com.example.app"]
        claims.subject = "000111.checks.2222"
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(600)
        claims["nonce"] = .string(nonce)
        claims["nonce_supported"] = true
        return claims
    }

    static func token(for testCase: Case, sandbox: AppleSandbox, now: Date, nonce: String) throws -> String {
        var claims = claims(now: now, nonce: nonce)
        switch testCase {
        case .expired: claims.expiresAt = now.addingTimeInterval(-120)
        case .futureIssuedAt: claims.issuedAt = now.addingTimeInterval(600)
        case .wrongAudience: claims.audience = ["com.example.other"]
        case .wrongIssuer: claims.issuer = "https://appleid.example.com"
        case .missingNonce:
            claims["nonce"] = nil
            claims["nonce_supported"] = nil
        case .wrongNonce: claims["nonce"] = .string(String(repeating: "0", count: 64))
        case .algNone:
            return Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(claims.serialized) + "."
        case .hs256WithRSAPublicKey:
            // The classic confusion: HMAC keyed with the bytes of the RSA public key.
            let jwk = try #require(sandbox.jwks["keys"]?.arrayValue?.first)
            let secret = Array(jwk.serializedString.utf8)
            return try JWSSigner.hs256(secret: secret, keyID: jwk["kid"]?.stringValue).sign(claims, type: nil)
        case .unknownKeyID:
            return try JWSSigner.rs256(try RSA.Signing.PrivateKey(keySize: 2048), keyID: "not-a-key").sign(claims, type: nil)
        case .badSignature:
            var parts = try sandbox.sign(claims).split(separator: ".").map(String.init)
            var signature = try #require(Base64URL.decode(parts[2]))
            signature[10] ^= 0x01
            parts[2] = Base64URL.encode(signature)
            return parts.joined(separator: ".")
        case .malformed:
            return "eyJhbGciOiJSUzI1NiJ9.not base64!.x"
        case .accessTokenType:
            return try sandbox.sign(claims, type: "at+jwt")
        }
        return try sandbox.sign(claims)
    }

    @Test("each failing check answers 401 invalid_identity_token naming it, and writes no user, session or success", arguments: Case.allCases)
    func check(_ testCase: Case) async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            let nonce = AppleFlow.nonce()
            let token = try Self.token(for: testCase, sandbox: sandbox, now: server.clock.now, nonce: nonce.hashed)
            let response = try await server.request(.post, "/v1/auth/apple", json: ["identity_token": .string(token), "nonce": .string(nonce.raw)])
            #expect(response.status == 401)
            #expect(try response.wireError.error == .invalidIdentityToken)
            let description = try response.wireError.errorDescription
            #expect(description.hasPrefix(testCase.check + ":"), "\(description)")
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM identities") == 0)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM sessions") == 0)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'sign_in' AND outcome = 'success'") == 0)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'sign_in' AND outcome = 'failure'") == 1)
        }
    }

    @Test("S1: the same builder with nothing wrong passes, so each failure above is that check alone")
    func s1Control() async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            let nonce = AppleFlow.nonce()
            let token = try sandbox.sign(Self.claims(now: server.clock.now, nonce: nonce.hashed))
            let response = try await server.request(.post, "/v1/auth/apple", json: ["identity_token": .string(token), "nonce": .string(nonce.raw)])
            #expect(response.status == 200)
        }
    }
}
