import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

fileprivate typealias PrivateKey = RSA.Signing.PrivateKey
fileprivate typealias PublicKey = RSA.Signing.PublicKey

@Suite("RSA signatures")
struct RSATests {
    /// One generated key shared by the tests here: RSA key generation costs about 100 ms.
    fileprivate static let generated = Result { try PrivateKey(keySize: 2048) }

    @Test("PKCS#1 v1.5 and PSS sign and verify with SHA-256/384/512", arguments: [
        RSA.Signing.Padding.pkcs1v1_5, .pss,
    ], [HashFunction.sha256, .sha384, .sha512])
    func signAndVerify(padding: RSA.Signing.Padding, hash: HashFunction) throws {
        let key = try Self.generated.get()
        let message = Array("identity token".utf8)
        let signature = try key.signature(for: message, padding: padding, hash: hash)
        #expect(signature.count == 256)
        #expect(key.publicKey.isValidSignature(signature, for: message, padding: padding, hash: hash))
        #expect(key.publicKey.isValidSignature(signature, for: Data(message), padding: padding, hash: hash))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0], padding: padding, hash: hash))
        let otherPadding: RSA.Signing.Padding = padding == .pss ? .pkcs1v1_5 : .pss
        #expect(!key.publicKey.isValidSignature(signature, for: message, padding: otherPadding, hash: hash))
        let otherHash: HashFunction = hash == .sha256 ? .sha512 : .sha256
        #expect(!key.publicKey.isValidSignature(signature, for: message, padding: padding, hash: otherHash))
        var flipped = signature
        flipped[100] ^= 0x10
        #expect(!key.publicKey.isValidSignature(flipped, for: message, padding: padding, hash: hash))
        #expect(!key.publicKey.isValidSignature(signature.dropFirst(), for: message, padding: padding, hash: hash))
        #expect(!key.publicKey.isValidSignature([0] + signature, for: message, padding: padding, hash: hash))
        // PKCS#1 v1.5 is deterministic, PSS is salted.
        let again = try key.signature(for: message, padding: padding, hash: hash)
        #expect((again == signature) == (padding == .pkcs1v1_5))
    }

    @Test("one key signs and verifies from many threads at once")
    func concurrentUse() async throws {
        let key = try Self.generated.get()
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<32 {
                group.addTask {
                    let message = Array("message \(index)".utf8)
                    let padding: RSA.Signing.Padding = index % 2 == 0 ? .pkcs1v1_5 : .pss
                    guard let signature = try? key.signature(for: message, padding: padding) else { return false }
                    return key.publicKey.isValidSignature(signature, for: message, padding: padding)
                        && !key.publicKey.isValidSignature(signature, for: message + [0], padding: padding)
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 32)
        #expect(results.allSatisfy { $0 })
    }

    @Test("generated keys: size, exponent and PEM round trips")
    func generatedKey() throws {
        let key = try Self.generated.get()
        #expect(key.publicKey.keySizeInBits == 2048)
        #expect(key.publicKey.exponent == [0x01, 0x00, 0x01])
        #expect(key.publicKey.modulus.count == 256)
        let copy = try PrivateKey(pemRepresentation: key.pemRepresentation)
        #expect(copy.publicKey == key.publicKey)
        #expect(copy.pemRepresentation == key.pemRepresentation)
        let publicKey = key.publicKey
        #expect(try PublicKey(derRepresentation: publicKey.derRepresentation) == publicKey)
        #expect(try PublicKey(pemRepresentation: publicKey.pemRepresentation) == publicKey)
        #expect(try PublicKey(modulus: publicKey.modulus, exponent: publicKey.exponent) == publicKey)
        #expect(try PublicKey(modulus: [0, 0] + publicKey.modulus, exponent: [0] + publicKey.exponent) == publicKey)
        #expect(throws: CryptoError.invalidParameter()) { try PrivateKey(keySize: 1024) }
        #expect(throws: CryptoError.invalidParameter()) { try PrivateKey(keySize: 2049) }
    }

    @Test("OpenSSL-made keys: PKCS#8, PKCS#1, SPKI and RSAPublicKey PEM")
    func opensslFixtures() throws {
        let pkcs8 = try PrivateKey(pemRepresentation: fixtures.text("rsa2048-pkcs8.pem"))
        let pkcs1 = try PrivateKey(pemRepresentation: fixtures.text("rsa2048-pkcs1.pem"))
        let spki = try PublicKey(pemRepresentation: fixtures.text("rsa2048-public.pem"))
        let rsaPublicKey = try PublicKey(pemRepresentation: fixtures.text("rsa2048-rsapublickey.pem"))
        #expect(pkcs8.publicKey == spki)
        #expect(pkcs1.publicKey == spki)
        #expect(rsaPublicKey == spki)
        #expect(Array(spki.modulus.prefix(8)).hex == "f302b41aee764ccf")
        // OpenSSL writes PKCS#8 and SPKI exactly the way this module does.
        #expect(pkcs1.pemRepresentation == (try fixtures.text("rsa2048-pkcs8.pem")))
        #expect(spki.pemRepresentation == (try fixtures.text("rsa2048-public.pem")))
        let signature = try pkcs1.signature(for: [1, 2, 3] as [UInt8], padding: .pkcs1v1_5)
        #expect(spki.isValidSignature(signature, for: [1, 2, 3] as [UInt8], padding: .pkcs1v1_5))
        // A PEM label must match its contents.
        let mislabelled = try fixtures.text("rsa2048-rsapublickey.pem").replacingOccurrences(of: "RSA PUBLIC KEY", with: "PUBLIC KEY")
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(pemRepresentation: mislabelled) }
    }

    @Test("import policy: ≥ 2048-bit odd modulus, odd exponent > 1 of at most 64 bits")
    func importPolicy() throws {
        let key = try Self.generated.get().publicKey
        let n = key.modulus
        var small = [UInt8](repeating: 0xC5, count: 128)
        small[127] |= 1
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: small, exponent: [1, 0, 1]) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: n, exponent: [1]) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: n, exponent: [0, 1]) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: n, exponent: [1, 0, 0]) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: n, exponent: [UInt8]()) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: n, exponent: [1] + [UInt8](repeating: 0, count: 8) + [1]) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: n.dropLast() + [n.last! & 0xFE], exponent: [3]) }
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(modulus: [UInt8](repeating: 0xFF, count: 2049), exponent: [3]) }
        _ = try PublicKey(modulus: n, exponent: [3])
        _ = try PublicKey(modulus: n, exponent: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        // DER import applies the same policy.
        #expect(throws: CryptoError.malformedKey()) { try PublicKey(derRepresentation: [0x30, 0x06, 0x02, 0x01, 0x0F, 0x02, 0x01, 0x03]) }
    }

    @Test("a private key whose components do not belong together is refused")
    func inconsistentPrivateKey() throws {
        let pem = try fixtures.text("rsa2048-pkcs1.pem")
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        var der = try #require(Data(base64Encoded: body))
        // Change the public exponent from 65537 to 65539: still a legal exponent, but no longer
        // the one the private exponent was made for.
        let exponent = Data([0x02, 0x03, 0x01, 0x00, 0x01])
        let range = try #require(der.range(of: exponent))
        der[range.upperBound - 1] = 0x03
        let broken = "-----BEGIN RSA PRIVATE KEY-----\n\(der.base64EncodedString(options: .lineLength64Characters))\n-----END RSA PRIVATE KEY-----\n"
        #expect(throws: CryptoError.malformedKey()) { try PrivateKey(pemRepresentation: broken) }
    }
}

@Suite("Wycheproof RSASSA-PKCS1-v1_5 2048 SHA-256")
struct RSAWycheproofTests {
    struct Group: Decodable {
        var keySize: Int
        var publicKeyDer: String
        var publicKeyAsn: String
        var sha: String
        var tests: [WycheproofSignatureCase]
    }

    @Test("rsa_signature_2048_sha256_test.json")
    func vectors() throws {
        var keys: [String: PublicKey] = [:]
        // Policy for `acceptable`: the one such case (tcId 8, MissingNull: a DigestInfo without
        // the NULL parameter) must be rejected; RFC 8017 §9.2 and RFC 3279 define the NULL, and
        // accepting two encodings of one signature gains nothing.
        let counts = try runWycheproof(
            "rsa_signature_2048_sha256_test.json", group: Group.self, cases: \.tests,
            acceptable: { _ in .rejected }
        ) { group, test in
            #expect(group.sha == "SHA-256")
            let key = try keys[group.publicKeyDer] ?? {
                let key = try PublicKey(derRepresentation: [UInt8](hex: group.publicKeyDer))
                #expect(try PublicKey(derRepresentation: [UInt8](hex: group.publicKeyAsn)) == key)
                #expect(key.keySizeInBits == group.keySize)
                #expect(key.derRepresentation.hex == group.publicKeyDer)
                return key
            }()
            keys[group.publicKeyDer] = key
            let valid = key.isValidSignature([UInt8](hex: test.sig), for: [UInt8](hex: test.msg), padding: .pkcs1v1_5)
            return valid ? .accepted : .rejected
        }
        #expect(counts == (259, 0))
    }
}
