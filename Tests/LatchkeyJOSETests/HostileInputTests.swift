import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// Each JOSE decoder meets 100,000 mutated inputs (seeded, so a failure reproduces) and must
/// answer with a value or an error: never a crash, a hang or an acceptance of a forged token.
@Suite("Hostile input to the JOSE decoders")
struct HostileInputTests {
    static let iterations = 100_000

    @Test("base64url: mutated text never crashes; every accepted string is canonical")
    func base64url() {
        var mutator = Mutator(seed: 11)
        let seed = Array(Base64URL.encode((0..<48).map { UInt8($0 * 5) }).utf8)
        for _ in 0..<Self.iterations {
            let text = String(decoding: mutator.mutate(seed), as: UTF8.self)
            if let bytes = Base64URL.decode(text) {
                #expect(Base64URL.encode(bytes) == text)
            }
            _ = Base64URL.decodeLenient(text)
        }
    }

    @Test("JWK and JWK Set: mutated documents never crash and never yield an unusable key")
    func jwk() {
        var mutator = Mutator(seed: 12)
        let key = P256.Signing.PrivateKey()
        let seed = JWKSet(keys: [JWK(key.publicKey, keyID: "k1")]).json.serialized
        var usable = 0
        for _ in 0..<Self.iterations {
            let input = mutator.mutate(seed)
            guard let set = try? JWKSet(parsing: input) else { continue }
            // Unusable members are skipped (S30), so the set always loads; count the key surviving.
            if let keys = try? JWSKeySet(jwks: set), !keys.keys.isEmpty { usable += 1 }
        }
        #expect(usable > 0)
    }

    @Test("compact JWS: mutated tokens never crash and never verify")
    func jws() throws {
        var mutator = Mutator(seed: 13)
        let key = P256.Signing.PrivateKey()
        let signer = JWSSigner.es256(key, keyID: "k1")
        let keys = try JWSKeySet([try signer.verificationKey])
        let original = try signer.sign(JWTClaims(["sub": "user", "exp": 1_900_000_000]), type: "at+jwt")
        let seed = Array(original.utf8)
        for _ in 0..<Self.iterations {
            let input = mutator.mutate(seed)
            let text = String(decoding: input, as: UTF8.self)
            guard let jws = try? JWS(compact: text) else { continue }
            let verified = (try? jws.verify(with: keys, algorithms: [.es256])) != nil
            // A mutation may only verify if it decodes to exactly the signed content.
            if verified {
                #expect(jws.payload == Array(JWTClaims(["sub": "user", "exp": 1_900_000_000]).serialized))
            }
        }
    }

    @Test("oversized and deeply nested tokens are refused quickly")
    func oversized() {
        let huge = String(repeating: "A", count: 1 << 20)
        #expect(throws: JOSEError(.malformed, "")) { try JWS(compact: "\(huge).\(huge).\(huge)") }
        let nested = Base64URL.encode(Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8))
        #expect(throws: JOSEError(.malformed, "")) { try JWS(compact: "\(nested).e30.AA") }
    }
}
