import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite("HKDF")
struct HKDFTests {
    // RFC 5869 Appendix A.1, test case 1.
    @Test("RFC 5869 A.1")
    func rfc5869() throws {
        let okm = try HKDF.deriveKey(
            inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: [UInt8](hex: "000102030405060708090a0b0c"),
            info: [UInt8](hex: "f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42)
        #expect(okm.hex == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    // RFC 5869 Appendix A.3: empty salt and info.
    @Test("RFC 5869 A.3, empty salt and info")
    func emptySalt() throws {
        let okm = try HKDF.deriveKey(
            inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: [UInt8](), info: [UInt8](), outputByteCount: 42)
        #expect(okm.hex == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test("output and info length limits")
    func limits() throws {
        let ikm = [UInt8](repeating: 1, count: 32)
        #expect(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 255 * 32).count == 8160)
        #expect(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 255 * 64, using: .sha512).count == 16320)
        #expect(try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](repeating: 2, count: 32768), outputByteCount: 32).count == 32)
        #expect(throws: CryptoError.invalidParameter()) {
            try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 255 * 32 + 1)
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 0)
        }
        #expect(throws: CryptoError.invalidParameter()) {
            try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](repeating: 2, count: 32769), outputByteCount: 32)
        }
    }
}

@Suite("Wycheproof HKDF-SHA-256")
struct HKDFWycheproofTests {
    struct Group: Decodable {
        var tests: [Case]
    }

    struct Case: WycheproofCase {
        var tcId: Int
        var comment: String
        var flags: [String]
        var ikm: String
        var salt: String
        var info: String
        var size: Int
        var okm: String
        var result: WycheproofResult
    }

    @Test("hkdf_sha256_test.json")
    func vectors() throws {
        let counts = try runWycheproof("hkdf_sha256_test.json", group: Group.self, cases: \.tests) { _, test in
            // The invalid cases ask for more than 255 × 32 bytes; refusing them is the right answer.
            guard let okm = try? HKDF.deriveKey(
                inputKeyMaterial: [UInt8](hex: test.ikm), salt: [UInt8](hex: test.salt),
                info: [UInt8](hex: test.info), outputByteCount: test.size)
            else { return .rejected }
            return okm.hex == test.okm ? .accepted : .rejected
        }
        #expect(counts == (86, 0))
    }
}

@Suite("AES-GCM")
struct AESGCMTests {
    @Test("seal and open with 128/192/256-bit keys, with and without AAD", arguments: [16, 24, 32])
    func roundTrip(keySize: Int) throws {
        let key = SecureRandom.bytes(count: keySize)
        let message = Array("refresh token signing secret".utf8)
        let aad = Array("record 42".utf8)
        let box = try AESGCM.seal(message, key: key, authenticating: aad)
        #expect(box.nonce.count == 12)
        #expect(box.tag.count == 16)
        #expect(box.ciphertext.count == message.count)
        #expect(box.combined.count == 12 + message.count + 16)
        #expect(try AESGCM.open(box, key: key, authenticating: aad) == message)
        #expect(try AESGCM.open(AESGCM.SealedBox(combined: box.combined), key: key, authenticating: aad) == message)
        #expect(try AESGCM.open(AESGCM.SealedBox(combined: Data(box.combined)), key: Data(key), authenticating: Data(aad)) == message)
        #expect(throws: CryptoError.authenticationFailure()) { try AESGCM.open(box, key: key) }
        #expect(throws: CryptoError.authenticationFailure()) { try AESGCM.open(box, key: SecureRandom.bytes(count: keySize), authenticating: aad) }
        var tampered = box.combined
        tampered[13] ^= 1
        #expect(throws: CryptoError.authenticationFailure()) {
            try AESGCM.open(AESGCM.SealedBox(combined: tampered), key: key, authenticating: aad)
        }
        // Random nonces differ.
        #expect(try AESGCM.seal(message, key: key).nonce != box.nonce)
    }

    @Test("empty plaintext and large plaintext")
    func sizes() throws {
        let key = SecureRandom.bytes(count: 32)
        let empty = try AESGCM.seal([UInt8](), key: key)
        #expect(empty.combined.count == 28)
        #expect(try AESGCM.open(empty, key: key) == [])
        let large = SecureRandom.bytes(count: 1 << 20)
        #expect(try AESGCM.open(AESGCM.seal(large, key: key), key: key) == large)
    }

    @Test("parameter checks")
    func parameters() throws {
        let key = SecureRandom.bytes(count: 32)
        #expect(throws: CryptoError.invalidParameter()) { try AESGCM.seal([1] as [UInt8], key: [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.invalidParameter()) { try AESGCM.seal([1] as [UInt8], key: key, nonce: [UInt8](repeating: 0, count: 16)) }
        #expect(throws: CryptoError.invalidParameter()) { try AESGCM.SealedBox(nonce: [UInt8](repeating: 0, count: 8), ciphertext: [], tag: [UInt8](repeating: 0, count: 16)) }
        #expect(throws: CryptoError.invalidParameter()) { try AESGCM.SealedBox(nonce: [UInt8](repeating: 0, count: 12), ciphertext: [], tag: [UInt8](repeating: 0, count: 12)) }
        #expect(throws: CryptoError.malformedInput()) { try AESGCM.SealedBox(combined: [UInt8](repeating: 0, count: 27)) }
        let box = try AESGCM.seal([1] as [UInt8], key: key)
        #expect(throws: CryptoError.invalidParameter()) { try AESGCM.open(box, key: [UInt8]()) }
    }
}

@Suite("Wycheproof AES-GCM")
struct AESGCMWycheproofTests {
    struct Group: Decodable {
        var ivSize: Int
        var keySize: Int
        var tagSize: Int
        var tests: [Case]
    }

    struct Case: WycheproofCase {
        var tcId: Int
        var comment: String
        var flags: [String]
        var key: String
        var iv: String
        var aad: String
        var msg: String
        var ct: String
        var tag: String
        var result: WycheproofResult
    }

    @Test("aes_gcm_test.json")
    func vectors() throws {
        let counts = try runWycheproof("aes_gcm_test.json", group: Group.self, cases: \.tests) { group, test in
            let key = [UInt8](hex: test.key)
            let nonce = [UInt8](hex: test.iv)
            let aad = [UInt8](hex: test.aad)
            let message = [UInt8](hex: test.msg)
            let ciphertext = [UInt8](hex: test.ct)
            let tag = [UInt8](hex: test.tag)
            #expect(group.tagSize == 128, "tcId \(test.tcId): every group in this file uses 128-bit tags")
            if group.ivSize != 96 {
                // The API accepts only 96-bit nonces (see AESGCM). Such a box must be refused;
                // for an invalid vector that refusal is the expected result, so it counts as
                // executed, while a valid vector with another IV size is skipped as unsupported.
                #expect(throws: CryptoError.invalidParameter(), "tcId \(test.tcId)") {
                    try AESGCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
                }
                #expect(throws: CryptoError.invalidParameter(), "tcId \(test.tcId)") {
                    try AESGCM.seal(message, key: key, nonce: nonce, authenticating: aad)
                }
                return test.result == .valid ? .skipped("\(group.ivSize)-bit IV") : .rejected
            }
            if test.result == .valid {
                let sealed = try AESGCM.seal(message, key: key, nonce: nonce, authenticating: aad)
                #expect(sealed.ciphertext == ciphertext && sealed.tag == tag, "tcId \(test.tcId): seal differs")
            }
            guard let box = try? AESGCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag),
                let opened = try? AESGCM.open(box, key: key, authenticating: aad)
            else { return .rejected }
            return opened == message ? .accepted : .rejected
        }
        #expect(counts == (197 + 6, 113))
    }
}
