import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

private typealias PrivateKey = P256.Signing.PrivateKey
private typealias PublicKey = P256.Signing.PublicKey
private typealias Signature = P256.Signing.ECDSASignature

@Suite("P-256 keys and ECDSA")
struct P256Tests {
    @Test("generate, sign, verify; a changed message or signature fails")
    func signAndVerify() throws {
        let key = PrivateKey()
        let message = Array("the quick brown fox".utf8)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(key.publicKey.isValidSignature(signature, for: Data(message)))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("the quick brown fax".utf8)))
        var raw = signature.rawRepresentation
        raw[63] ^= 1
        #expect(!key.publicKey.isValidSignature(try Signature(rawRepresentation: raw), for: message))
        #expect(!PrivateKey().publicKey.isValidSignature(signature, for: message))
        // ECDSA nonces are random.
        #expect(try key.signature(for: message) != signature)
    }

    @Test("signatures verify from many threads at once")
    func concurrentUse() async throws {
        let key = PrivateKey()
        let publicKey = key.publicKey
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let message = Array("message \(index)".utf8)
                    guard let signature = try? key.signature(for: message) else { return false }
                    return publicKey.isValidSignature(signature, for: message)
                        && !publicKey.isValidSignature(signature, for: message + [0])
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0 })
    }

    @Test("public key representations round-trip")
    func publicRoundTrips() throws {
        let key = PrivateKey().publicKey
        #expect(key.x963Representation.count == 65)
        #expect(key.x963Representation.first == 0x04)
        #expect(key.rawRepresentation == Array(key.x963Representation.dropFirst()))
        #expect(key.x + key.y == key.rawRepresentation)
        #expect(key.derRepresentation.count == 91)
        #expect(try PublicKey(x963Representation: key.x963Representation) == key)
        #expect(try PublicKey(rawRepresentation: key.rawRepresentation) == key)
        #expect(try PublicKey(x: key.x, y: key.y) == key)
        #expect(try PublicKey(derRepresentation: key.derRepresentation) == key)
        #expect(try PublicKey(pemRepresentation: key.pemRepresentation) == key)
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(key.pemRepresentation.hasSuffix("\n-----END PUBLIC KEY-----\n"))
        #expect(Set([key, try PublicKey(x963Representation: key.x963Representation)]).count == 1)
    }

    @Test("private key representations round-trip")
    func privateRoundTrips() throws {
        let key = PrivateKey()
        let raw = key.rawRepresentation
        #expect(raw.count == 32)
        for copy in [
            try PrivateKey(rawRepresentation: raw),
            try PrivateKey(derRepresentation: key.derRepresentation),
            try PrivateKey(pemRepresentation: key.pemRepresentation),
        ] {
            #expect(copy.rawRepresentation == raw)
            #expect(copy.publicKey == key.publicKey)
            let signature = try copy.signature(for: [1, 2, 3] as [UInt8])
            #expect(key.publicKey.isValidSignature(signature, for: [1, 2, 3] as [UInt8]))
        }
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    }

    @Test("OpenSSL-made keys import: genpkey PKCS#8 .p8, SEC1, ecparam output, SPKI PEM")
    func opensslFixtures() throws {
        let p8 = try PrivateKey(pemRepresentation: fixtures.text("p256-genpkey.p8"))
        #expect(p8.rawRepresentation.hex == "f24518606de9cb9c41c082f72ed5ef40625132898ac8c7aa750ab1fede63977e")
        #expect(p8.publicKey.x963Representation.hex
            == "04d835ff4e5dddb0683af0d8dbdd16e87cc7d51460aa5f7bf9daf55736d38168b0d4058f9bf3155a496a3708cf00e021971c274a0c4f9b4bf6b5831a3f3bc9b2b6")
        // OpenSSL writes PKCS#8 exactly the way this module does.
        #expect(p8.pemRepresentation == (try fixtures.text("p256-genpkey.p8")))

        let sec1 = try PrivateKey(pemRepresentation: fixtures.text("p256-genpkey-sec1.pem"))
        #expect(sec1.rawRepresentation == p8.rawRepresentation)

        let publicKey = try PublicKey(pemRepresentation: fixtures.text("p256-genpkey-public.pem"))
        #expect(publicKey == p8.publicKey)
        #expect(publicKey.pemRepresentation == (try fixtures.text("p256-genpkey-public.pem")))

        let ecparam = try PrivateKey(pemRepresentation: fixtures.text("p256-ecparam.pem"))
        #expect(ecparam.rawRepresentation.hex == "2a99089dc93bce665f0a962a343234071c0d1840b0460de20dcd82ebc162a406")
        #expect(ecparam.publicKey.x963Representation.hex
            == "0428a0a8de9c189e4cbb577d87ee06087827424d936adc221603058bf5f5dcfa858371ffcaecc9a34b02a9c1ef7c35299f6b4a01e95c334bb56ead1070f100a6ce")
    }

    @Test("Apple-style .p8: ECPrivateKey with curve parameters and public key")
    func appleStyleP8() throws {
        // The layout of the .p8 files App Store Connect hands out ("MIGTAgEAMBMGByqGSM49AgEG
        // CCqGSM49AwEHBHkwdwIBAQQg…"), rebuilt around the fixture key.
        let key = try PrivateKey(pemRepresentation: fixtures.text("p256-genpkey.p8"))
        let point = key.publicKey.x963Representation
        let ecPrivateKey: [UInt8] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20] + key.rawRepresentation
            + [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
            + [0xa1, 0x44, 0x03, 0x42, 0x00] + point
        let algorithm: [UInt8] = [0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                                  0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        let p8: [UInt8] = [0x30, 0x81, 0x93, 0x02, 0x01, 0x00] + algorithm + [0x04, 0x79] + ecPrivateKey
        #expect(p8.count == 150)
        let pem = "-----BEGIN PRIVATE KEY-----\n\(Data(p8).base64EncodedString(options: .lineLength64Characters))\n-----END PRIVATE KEY-----"
        #expect(pem.contains("MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg"))
        let imported = try PrivateKey(pemRepresentation: pem)
        #expect(imported.rawRepresentation == key.rawRepresentation)

        // The same file with someone else's public key inside is refused.
        var mismatched = p8
        mismatched[mismatched.count - 1] ^= 1
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(derRepresentation: mismatched) }
    }

    @Test("private scalars outside 1…n−1 and wrong lengths are refused")
    func scalarRange() throws {
        let order = [UInt8](hex: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        var belowOrder = order
        belowOrder[31] -= 1
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(rawRepresentation: order) }
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(rawRepresentation: [UInt8](repeating: 0xff, count: 32)) }
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 33)) }
        let one = try PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 31) + [1])
        // d = 1 gives the generator G (SEC 2 §2.4.2).
        #expect(one.publicKey.x.hex == "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
        #expect(one.publicKey.y.hex == "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
        _ = try PrivateKey(rawRepresentation: belowOrder)
    }

    @Test("points off the curve, compressed, or with coordinates ≥ p are refused")
    func badPoints() throws {
        let good = PrivateKey().publicKey
        var offCurve = good.x963Representation
        offCurve[64] ^= 1
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(x963Representation: offCurve) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(rawRepresentation: Array(offCurve.dropFirst())) }
        var compressed = [UInt8](good.x963Representation.prefix(33))
        compressed[0] = 0x02 | (good.y[31] & 1)
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(x963Representation: compressed) }
        var hybrid = good.x963Representation
        hybrid[0] = 0x06
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(x963Representation: hybrid) }
        let p = [UInt8](hex: "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(x: p, y: good.y) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(x: good.x.dropLast(), y: good.y) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(x: [0] + good.x, y: good.y) }
        var der = good.derRepresentation
        der.append(0)
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(derRepresentation: der) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(pemRepresentation: "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----") }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(pemRepresentation: good.pemRepresentation.replacingOccurrences(of: "PUBLIC", with: "PRIVATE")) }
    }

    @Test("ECDSA DER: strict parsing, raw ↔ DER")
    func signatureEncodings() throws {
        let raw = [UInt8](repeating: 0, count: 31) + [1] + [0x80] + [UInt8](repeating: 0, count: 31)
        let signature = try Signature(rawRepresentation: raw)
        #expect(signature.derRepresentation.hex
            == "3026020101022100" + "80" + String(repeating: "00", count: 31))
        #expect(try Signature(derRepresentation: signature.derRepresentation) == signature)
        // BER long-form length where the short form fits.
        #expect(throws: CryptoError.malformedSignature()) {
            try Signature(derRepresentation: [UInt8](hex: "308126020101022100" + "80" + String(repeating: "00", count: 31)))
        }
        // A padded integer, a negative integer, trailing bytes, an integer too long.
        #expect(throws: CryptoError.malformedSignature()) { try Signature(derRepresentation: [UInt8](hex: "300702020001020101")) }
        #expect(throws: CryptoError.malformedSignature()) { try Signature(derRepresentation: [UInt8](hex: "30060201ff020101")) }
        #expect(throws: CryptoError.malformedSignature()) { try Signature(derRepresentation: [UInt8](hex: "3006020101020101" + "00")) }
        #expect(throws: CryptoError.malformedSignature()) {
            try Signature(derRepresentation: [UInt8](hex: "3026022101" + String(repeating: "00", count: 32) + "020101"))
        }
        #expect(throws: CryptoError.malformedSignature()) { try Signature(rawRepresentation: raw.dropLast()) }
        #expect(throws: CryptoError.malformedSignature()) { try Signature(derRepresentation: [UInt8]()) }
    }
}

@Suite("Wycheproof ECDSA P-256 SHA-256")
struct ECDSAWycheproofTests {
    struct PublicKeyFields: Decodable {
        var uncompressed: String
        var wx: String
        var wy: String
    }

    struct JWKFields: Decodable {
        var x: String
        var y: String
    }

    struct Group: Decodable {
        var publicKey: PublicKeyFields
        var publicKeyDer: String
        var publicKeyPem: String
        var publicKeyJwk: JWKFields?
        var sha: String
        var tests: [WycheproofSignatureCase]
    }

    /// Imports the group's key from SubjectPublicKeyInfo DER and checks that the other forms
    /// given (X9.63 point, PEM, JWK coordinates) make the same key.
    private func key(of group: Group) throws -> P256.Signing.PublicKey {
        #expect(group.sha == "SHA-256")
        let key = try P256.Signing.PublicKey(derRepresentation: [UInt8](hex: group.publicKeyDer))
        #expect(try P256.Signing.PublicKey(x963Representation: [UInt8](hex: group.publicKey.uncompressed)) == key)
        #expect(try P256.Signing.PublicKey(pemRepresentation: group.publicKeyPem) == key)
        #expect(key.derRepresentation.hex == group.publicKeyDer)
        if let jwk = group.publicKeyJwk {
            #expect(try P256.Signing.PublicKey(x: base64URL(jwk.x), y: base64URL(jwk.y)) == key)
        }
        return key
    }

    private func base64URL(_ text: String) -> [UInt8] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return [UInt8](Data(base64Encoded: base64) ?? Data())
    }

    // Neither file has `acceptable` cases; the default policy (reject) would apply.
    @Test("ecdsa_secp256r1_sha256_test.json (DER signatures)")
    func der() throws {
        var keys: [String: P256.Signing.PublicKey] = [:]
        let counts = try runWycheproof("ecdsa_secp256r1_sha256_test.json", group: Group.self, cases: \.tests) { group, test in
            let key = try keys[group.publicKeyDer] ?? self.key(of: group)
            keys[group.publicKeyDer] = key
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: [UInt8](hex: test.sig)) else {
                return .rejected
            }
            return key.isValidSignature(signature, for: [UInt8](hex: test.msg)) ? .accepted : .rejected
        }
        #expect(counts == (484, 0))
    }

    @Test("ecdsa_secp256r1_sha256_p1363_test.json (raw r‖s signatures)")
    func p1363() throws {
        var keys: [String: P256.Signing.PublicKey] = [:]
        let counts = try runWycheproof("ecdsa_secp256r1_sha256_p1363_test.json", group: Group.self, cases: \.tests) { group, test in
            let key = try keys[group.publicKeyDer] ?? self.key(of: group)
            keys[group.publicKeyDer] = key
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: [UInt8](hex: test.sig)) else {
                return .rejected
            }
            return key.isValidSignature(signature, for: [UInt8](hex: test.msg)) ? .accepted : .rejected
        }
        #expect(counts == (262, 0))
    }
}
