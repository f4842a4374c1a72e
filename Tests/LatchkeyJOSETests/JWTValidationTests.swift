import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import Testing

/// The validation policy against tokens that each fail exactly one check.
@Suite("JWT validation policy")
struct JWTValidationTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let ecKey = P256.Signing.PrivateKey()
    static let signer = JWSSigner.es256(ecKey, keyID: "ec-1")
    static let keys = try! JWSKeySet([try! signer.verificationKey])
    static let policy = JWTValidationPolicy(
        issuer: "https://id.example", audiences: ["app", "web"], algorithms: [.es256], type: .exactly("at+jwt"))
    static let verifier = JWTVerifier(keys: keys, policy: policy)

    static func claims(_ changes: (inout JWTClaims) -> Void = { _ in }) -> JWTClaims {
        var claims = JWTClaims()
        claims.issuer = "https://id.example"
        claims.subject = "user-1"
        claims.audience = ["app"]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(900)
        changes(&claims)
        return claims
    }

    static func token(_ changes: (inout JWTClaims) -> Void = { _ in }, type: String? = "at+jwt", signer: JWSSigner = signer) throws -> String {
        try signer.sign(claims(changes), type: type)
    }

    @Test("a good token verifies and its claims read back")
    func valid() throws {
        let verified = try Self.verifier.verify(try Self.token(), now: Self.now)
        #expect(verified.claims.subject == "user-1")
        #expect(verified.claims.audience == ["app"])
        #expect(verified.keyID == "ec-1")
    }

    @Test("S4: exp is enforced with a 60 s leeway against the injected clock")
    func s4Expiry() throws {
        let token = try Self.token()
        _ = try Self.verifier.verify(token, now: Self.now.addingTimeInterval(959))
        #expect(throws: JOSEError(.expired, "")) { try Self.verifier.verify(token, now: Self.now.addingTimeInterval(960)) }
    }

    @Test("S4: nbf and iat in the future are refused beyond the leeway")
    func s4NotBeforeAndIssuedAt() throws {
        let early = try Self.token { $0.notBefore = Self.now.addingTimeInterval(61) }
        #expect(throws: JOSEError(.notYetValid, "")) { try Self.verifier.verify(early, now: Self.now) }
        _ = try Self.verifier.verify(try Self.token { $0.notBefore = Self.now.addingTimeInterval(60) }, now: Self.now)
        let future = try Self.token { $0.issuedAt = Self.now.addingTimeInterval(120) }
        #expect(throws: JOSEError(.issuedInFuture, "")) { try Self.verifier.verify(future, now: Self.now) }
    }

    @Test("S4: iss must match")
    func s4Issuer() throws {
        #expect(throws: JOSEError(.wrongIssuer, "")) {
            try Self.verifier.verify(try Self.token { $0.issuer = "https://evil.example" }, now: Self.now)
        }
        #expect(throws: JOSEError(.wrongIssuer, "")) {
            try Self.verifier.verify(try Self.token { $0.issuer = nil }, now: Self.now)
        }
    }

    @Test("S4: aud as a string or an array must name an accepted audience")
    func s4Audience() throws {
        _ = try Self.verifier.verify(try Self.token { $0.audience = ["other", "web"] }, now: Self.now)
        _ = try Self.verifier.verify(try Self.token { $0["aud"] = "web" }, now: Self.now)
        #expect(throws: JOSEError(.wrongAudience, "")) {
            try Self.verifier.verify(try Self.token { $0.audience = ["other"] }, now: Self.now)
        }
        #expect(throws: JOSEError(.wrongAudience, "")) {
            try Self.verifier.verify(try Self.token { $0["aud"] = nil }, now: Self.now)
        }
        #expect(throws: JOSEError(.malformed, "")) {
            try Self.verifier.verify(try Self.token { $0["aud"] = 5 }, now: Self.now)
        }
    }

    @Test("required claims must be present; registered claims must have their types")
    func requiredClaims() throws {
        #expect(throws: JOSEError(.missingClaim, "")) {
            try Self.verifier.verify(try Self.token { $0.expiresAt = nil }, now: Self.now)
        }
        #expect(throws: JOSEError(.malformed, "")) {
            try Self.verifier.verify(try Self.token { $0["exp"] = "never" }, now: Self.now)
        }
    }

    @Test("S5: typ separates access tokens from ID tokens in both directions")
    func s5TokenKinds() throws {
        let accessToken = try Self.token()
        let idToken = try Self.token(type: nil)
        let jwtTyped = try Self.token(type: "JWT")
        #expect(throws: JOSEError(.wrongType, "")) { try Self.verifier.verify(idToken, now: Self.now) }
        #expect(throws: JOSEError(.wrongType, "")) { try Self.verifier.verify(jwtTyped, now: Self.now) }
        _ = try Self.verifier.verify(try Self.token(type: "application/AT+JWT"), now: Self.now)

        var idPolicy = Self.policy
        idPolicy.type = .absentOrJWT
        let idVerifier = JWTVerifier(keys: Self.keys, policy: idPolicy)
        _ = try idVerifier.verify(idToken, now: Self.now)
        _ = try idVerifier.verify(jwtTyped, now: Self.now)
        #expect(throws: JOSEError(.wrongType, "")) { try idVerifier.verify(accessToken, now: Self.now) }
    }

    @Test("S1: an algorithm off the allow-list is refused even with a matching key")
    func s1AllowList() throws {
        let rsaKey = try RSA.Signing.PrivateKey()
        let rsaSigner = JWSSigner.rs256(rsaKey, keyID: "rsa-1")
        let keys = try JWSKeySet([try rsaSigner.verificationKey])
        let verifier = JWTVerifier(keys: keys, policy: Self.policy)
        #expect(throws: JOSEError(.algorithmNotAllowed, "")) { try verifier.verify(try Self.token(signer: rsaSigner), now: Self.now) }
    }

    @Test("S1: each key verifies exactly one algorithm (an RS256 key never checks PS256)")
    func s1OneAlgorithmPerKey() throws {
        let rsaKey = try RSA.Signing.PrivateKey()
        let keys = try JWSKeySet([try JWSSigner.rs256(rsaKey, keyID: "rsa-1").verificationKey])
        var policy = Self.policy
        policy.algorithms = [.rs256, .ps256]
        let verifier = JWTVerifier(keys: keys, policy: policy)
        _ = try verifier.verify(try Self.token(signer: .rs256(rsaKey, keyID: "rsa-1")), now: Self.now)
        #expect(throws: JOSEError(.algorithmNotAllowed, "")) {
            try verifier.verify(try Self.token(signer: .ps256(rsaKey, keyID: "rsa-1")), now: Self.now)
        }
    }

    @Test("S1: HS256 keyed with the RSA public key's bytes is refused")
    func s1KeyConfusion() throws {
        let rsaKey = try RSA.Signing.PrivateKey()
        let keys = try JWSKeySet([.rs256(rsaKey.publicKey, keyID: "rsa-1")])
        var policy = Self.policy
        policy.algorithms = [.rs256, .hs256]
        let verifier = JWTVerifier(keys: keys, policy: policy)
        for secret in [Array(rsaKey.publicKey.pemRepresentation.utf8), rsaKey.publicKey.derRepresentation] {
            let forged = try Self.token(signer: try .hs256(secret: secret, keyID: "rsa-1"))
            #expect(throws: JOSEError(.algorithmNotAllowed, "")) { try verifier.verify(forged, now: Self.now) }
        }
        // A JWK Set never yields an HMAC key unless the caller opts in.
        let oct = JWK(keyType: "oct", symmetricKey: Array(repeating: 1, count: 32), keyID: "k", algorithm: .hs256)
        #expect(throws: JOSEError(.invalidKey, "")) { try JWSVerificationKey(jwk: oct) }
    }

    @Test("S2: only compact JWS; a failed step, bad UTF-8 or a duplicate header name rejects")
    func s2Structure() throws {
        let token = try Self.token()
        let parts = token.split(separator: ".").map(String.init)
        #expect(throws: JOSEError(.malformed, "")) { try Self.verifier.verify(parts.prefix(2).joined(separator: "."), now: Self.now) }
        #expect(throws: JOSEError(.malformed, "")) { try Self.verifier.verify(token + ".x.y", now: Self.now) }
        #expect(throws: JOSEError(.malformed, "")) {
            try Self.verifier.verify(#"{"protected":"\#(parts[0])","payload":"\#(parts[1])","signature":"\#(parts[2])"}"#, now: Self.now)
        }
        let duplicate = Base64URL.encode(Array(#"{"alg":"ES256","kid":"ec-1","typ":"at+jwt","alg":"ES256"}"#.utf8))
        #expect(throws: JOSEError(.malformed, "")) { try Self.verifier.verify("\(duplicate).\(parts[1]).\(parts[2])", now: Self.now) }
        let badUTF8 = Base64URL.encode(Array(#"{"alg":"ES256","kid":"ec-1","typ":"at+jwt","x":""#.utf8) + [0xFF] + Array(#""}"#.utf8))
        #expect(throws: JOSEError(.malformed, "")) { try Self.verifier.verify("\(badUTF8).\(parts[1]).\(parts[2])", now: Self.now) }
        // A signed payload with a duplicate claim is refused after the signature holds.
        let payload = Array(#"{"iss":"https://id.example","aud":"app","exp":1800000900,"sub":"a","sub":"b"}"#.utf8)
        let signed = try JWS.sign(payload: payload, header: ["typ": "at+jwt"], signer: Self.signer)
        #expect(throws: JOSEError(.malformed, "")) { try Self.verifier.verify(signed, now: Self.now) }
    }

    @Test("S3: keys are never taken from the token; kid is only a lookup key")
    func s3NoEmbeddedKeys() throws {
        let attacker = P256.Signing.PrivateKey()
        let embedded = JWK(attacker.publicKey, keyID: "ec-1").json
        for (name, value) in [("jwk", embedded), ("jku", "https://evil.example/jwks"), ("x5u", "https://evil.example/c"), ("x5c", ["MIIB"])] as [(String, JSONValue)] {
            let payload = Self.claims().serialized
            let forged = try JWS.sign(payload: payload, header: ["typ": "at+jwt", name: value], signer: .es256(attacker, keyID: "ec-1"))
            #expect(throws: JOSEError(.unsupportedHeader, "")) { try Self.verifier.verify(forged, now: Self.now) }
        }
        for kid in ["../../etc/passwd", "ec-1?x=1", "EC-1", ""] {
            let token = try Self.token(signer: .es256(Self.ecKey, keyID: kid))
            #expect(throws: JOSEError(.unknownKey, "")) { try Self.verifier.verify(token, now: Self.now) }
        }
    }

    @Test("crit headers are refused because no extension is understood")
    func critical() throws {
        let token = try JWS.sign(payload: Self.claims().serialized, header: ["typ": "at+jwt", "crit": ["b64"], "b64": false], signer: Self.signer)
        #expect(throws: JOSEError(.unsupportedHeader, "")) { try Self.verifier.verify(token, now: Self.now) }
    }

    @Test("a key set built in code refuses duplicate kids and mixed symmetric and asymmetric keys")
    func keySetAmbiguity() throws {
        let a = JWSVerificationKey.es256(P256.Signing.PrivateKey().publicKey, keyID: "same")
        let b = JWSVerificationKey.es256(P256.Signing.PrivateKey().publicKey, keyID: "same")
        #expect(throws: JOSEError(.invalidKey, "")) { try JWSKeySet([a, b]) }
        let hmac = try JWSVerificationKey.hs256(secret: Array(repeating: 7, count: 32), keyID: "h")
        #expect(throws: JOSEError(.invalidKey, "")) { try JWSKeySet([a, hmac]) }
    }

    @Test("JWK round-trips through JSON and a JWK Set skips unknown key types and malformed members (S30)")
    func jwkRoundTrip() throws {
        let jwk = JWK(Self.ecKey.publicKey, keyID: "ec-1")
        #expect(try JWK(json: jwk.json) == jwk)
        let set = try JWKSet(parsing: Array(#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},\#(jwk.json.serializedString)]}"#.utf8))
        #expect(set.keys == [jwk])
        #expect(set.skipped.map(\.reason) == [.unsupportedKeyType])
        let malformed = try JWKSet(parsing: Array(#"{"keys":[{"kty":"EC","x":5}]}"#.utf8))
        #expect(malformed.keys.isEmpty)
        #expect(malformed.skipped.map(\.reason) == [.malformed])
    }
}
