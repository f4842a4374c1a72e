import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// JWK Sets that list keys we cannot use next to good ones (docs/security.md S30): the document stays
/// strict, its unusable members are skipped with a reason each, the rest verify.
@Suite("JWK Sets with unusable keys")
struct MixedKeySetTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let good = P256.Signing.PrivateKey()
    static let policy = JWTValidationPolicy(issuer: nil, audiences: nil, algorithms: [.es256, .rs256], type: .any)

    /// A token signed by a fresh key whose header names `keyID`: enough to reach the key lookup.
    static func token(kid keyID: String?, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) throws -> String {
        var claims = JWTClaims()
        claims.subject = "user-1"
        claims.expiresAt = now.addingTimeInterval(600)
        return try JWSSigner.es256(key, keyID: keyID).sign(claims)
    }

    /// Why `token` fails, or nil when it verifies.
    static func failure(_ verifier: JWTVerifier, _ token: String) -> JOSEError? {
        do {
            _ = try verifier.verify(token, now: now)
            return nil
        } catch {
            return error
        }
    }

    static func member(_ jwk: JWK) -> String { jwk.json.serializedString }

    /// Every kind of unusable member, each under its own kid, with the reason it must get.
    static func unusableMembers() throws -> [(json: String, keyID: String, reason: String)] {
        var offCurve = JWK(P256.Signing.PrivateKey().publicKey, keyID: "off-curve")
        offCurve.y![31] ^= 1
        let rsa = try RSA.Signing.PrivateKey(keySize: 2048).publicKey
        let hmac = JWK(keyType: "oct", symmetricKey: Array(repeating: 7, count: 32), keyID: "hmac", algorithm: .hs256)
        var verifyless = JWK(P256.Signing.PrivateKey().publicKey, keyID: "sign-only")
        verifyless.keyOperations = ["sign"]
        var encryption = JWK(P256.Signing.PrivateKey().publicKey, keyID: "enc")
        encryption.use = "enc"
        return UnusableJWKs.all + [
            (member(offCurve), "off-curve", "invalid_key"),
            (member(JWK(rsa, algorithm: JWSAlgorithm(rawValue: "RSA-OAEP"), keyID: "rsa-oaep")), "rsa-oaep", "unsupported_algorithm"),
            (member(JWK(rsa, algorithm: JWSAlgorithm(rawValue: "RS512"), keyID: "rs512")), "rs512", "unsupported_algorithm"),
            (member(hmac), "hmac", "symmetric_key"),
            (member(verifyless), "sign-only", "not_for_signing"),
            (member(encryption), "enc", "not_for_signing"),
            (#"{"kty":"OKP","kid":"ed25519","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#, "ed25519", "unsupported_key_type"),
            (#"{"kty":"EC","kid":"x-number","crv":"P-256","x":5,"y":"AA"}"#, "x-number", "malformed"),
            (#"{"kid":"no-kty"}"#, "no-kty", "malformed"),
        ]
    }

    @Test("S30: a set that also lists weak, foreign-curve, malformed and other unusable keys still verifies with its good key")
    func s30MixedSet() throws {
        let unusable = try Self.unusableMembers()
        let document = UnusableJWKs.document(unusable.prefix(2).map(\.json) + [Self.member(JWK(Self.good.publicKey, keyID: "good"))]
            + unusable.dropFirst(2).map(\.json) + ["17", #""text""#])
        let keys = try JWSKeySet(jwks: try JWKSet(parsing: Array(document.utf8)))

        #expect(keys.keys.map(\.keyID) == ["good"])
        let verifier = JWTVerifier(keys: keys, policy: Self.policy)
        #expect(try verifier.verify(try Self.token(kid: "good", key: Self.good), now: Self.now).keyID == "good")

        // Each skipped member is recorded under its kid with its reason, the non-objects without.
        for (_, keyID, reason) in unusable {
            let entries = keys.skipped.filter { $0.keyID == keyID }
            #expect(entries.map(\.reason.description) == [reason], "\(keyID)")
        }
        #expect(keys.skipped.count == unusable.count + 2)
        #expect(keys.skipped.filter { $0.keyID == nil }.map(\.reason) == [.malformed, .malformed], "17 and \"text\"")
        #expect(keys.skipped.first { $0.keyID == "kid-weak-rsa-1024" }?.detail.contains("1024 bits") == true)

        // A token naming a skipped key fails with invalid_key and says why; an unknown kid stays unknown_key.
        for (_, keyID, reason) in unusable {
            let error = try #require(Self.failure(verifier, try Self.token(kid: keyID)), "a token naming \(keyID) verified")
            #expect(error.code == .invalidKey, "\(keyID)")
            #expect(error.message.contains("skipped as unusable (\(reason):"), "\(keyID): \(error.message)")
        }
        #expect(throws: JOSEError(.unknownKey, "")) { try verifier.verify(try Self.token(kid: "nobody"), now: Self.now) }
        // Without a kid only usable keys are tried.
        #expect(try verifier.verify(try Self.token(kid: nil, key: Self.good), now: Self.now).claims.subject == "user-1")
    }

    @Test("S30: a kid listed twice is ambiguous: every key with it is skipped as duplicate_kid, the others serve")
    func s30DuplicateKeyID() throws {
        let twin = P256.Signing.PrivateKey()
        let solo = P256.Signing.PrivateKey()
        let document = UnusableJWKs.document([
            Self.member(JWK(Self.good.publicKey, keyID: "twin")), Self.member(JWK(twin.publicKey, keyID: "twin")),
            Self.member(JWK(solo.publicKey, keyID: "solo")),
            // A good key that shares its kid with an unreadable member is just as ambiguous.
            Self.member(JWK(P256.Signing.PrivateKey().publicKey, keyID: "shadowed")), #"{"kty":"EC","kid":"shadowed","x":1}"#,
        ])
        let keys = try JWSKeySet(jwks: try JWKSet(parsing: Array(document.utf8)))
        #expect(keys.keys.map(\.keyID) == ["solo"])
        #expect(keys.skipped.filter { $0.reason == .duplicateKeyID }.compactMap(\.keyID) == ["twin", "twin", "shadowed"])
        let verifier = JWTVerifier(keys: keys, policy: Self.policy)
        #expect(try verifier.verify(try Self.token(kid: "solo", key: solo), now: Self.now).keyID == "solo")
        for (keyID, key) in [("twin", Self.good), ("twin", twin), ("shadowed", P256.Signing.PrivateKey())] {
            let error = try #require(Self.failure(verifier, try Self.token(kid: keyID, key: key)), "the ambiguous kid \(keyID) verified")
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("duplicate_kid"), "\(error.message)")
        }
    }

    @Test("S30: a document that is not a JWK Set is still refused as a whole", arguments: [
        "", "not json", "[]", #"{"keys":{}}"#, #"{"key":[]}"#, #"{"keys":[],"keys":[]}"#, #"{"keys":"[]"}"#,
    ])
    func s30NotAKeySet(document: String) {
        #expect(throws: JOSEError(.malformed, "")) { try JWKSet(parsing: Array(document.utf8)) }
    }

    @Test("S30: an empty or wholly unusable set is a set with no keys, and every token fails with its reason")
    func s30NothingUsable() throws {
        let empty = try JWSKeySet(jwks: try JWKSet(parsing: Array(#"{"keys":[]}"#.utf8)))
        #expect(empty.keys.isEmpty && empty.skipped.isEmpty)
        let unusable = try JWSKeySet(jwks: try JWKSet(parsing: Array(UnusableJWKs.document([UnusableJWKs.weakRSA]).utf8)))
        #expect(unusable.keys.isEmpty)
        #expect(throws: JOSEError(.invalidKey, "")) {
            try JWTVerifier(keys: unusable, policy: Self.policy).verify(try Self.token(kid: "kid-weak-rsa-1024"), now: Self.now)
        }
    }

    @Test("S1: where symmetric keys are allowed, a short HMAC secret is skipped as weak_key and mixing key kinds still refuses the set")
    func symmetricRules() throws {
        let short = JWK(keyType: "oct", symmetricKey: Array(repeating: 1, count: 16), keyID: "short", algorithm: .hs256)
        let long = JWK(keyType: "oct", symmetricKey: Array(repeating: 1, count: 32), keyID: "long", algorithm: .hs256)
        let keys = try JWSKeySet(jwks: JWKSet(keys: [short, long]), allowSymmetric: true)
        #expect(keys.keys.map(\.keyID) == ["long"])
        #expect(keys.skipped.map(\.reason) == [.weakKey])
        #expect(throws: JOSEError(.invalidKey, "")) {
            try JWSKeySet(jwks: JWKSet(keys: [long, JWK(Self.good.publicKey, keyID: "ec")]), allowSymmetric: true)
        }
    }
}
