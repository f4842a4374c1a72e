import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCrypto
import LatchkeyErrors

@Suite("CryptoError")
struct CryptoErrorTests {
    @Test("equality and hashing look at the code only")
    func equalityIgnoresReason() {
        #expect(CryptoError.malformedKey("a") == CryptoError.malformedKey("b"))
        #expect(CryptoError.malformedKey() != CryptoError.malformedSignature())
        #expect(Set([CryptoError.library("x"), CryptoError.library("y")]).count == 1)
    }

    @Test("description names the code and the reason")
    func description() {
        #expect(CryptoError.invalidParameter("nonce must be 12 bytes").description
            == "CryptoError.invalidParameter: nonce must be 12 bytes")
        #expect(CryptoError.authenticationFailure().description == "CryptoError.authenticationFailure")
    }

    @Test("OpenSSL parameter names match the header macros")
    func parameterNames() {
        #expect(ParamName.mismatches() == [])
    }
}

@Suite("Hashing")
struct HashingTests {
    // FIPS 180-2 Appendix B.1, C.1 and D.1: the one-block message "abc".
    @Test("SHA-2 of \"abc\" (FIPS 180-2)", arguments: [
        (HashFunction.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (.sha384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
        (.sha512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    ])
    func abc(hash: HashFunction, expected: String) {
        #expect(hash.hash(Array("abc".utf8)).hex == expected)
        #expect(hash.hexDigest(Array("abc".utf8)) == expected)
        #expect(hash.byteCount == expected.count / 2)
    }

    @Test("SHA-256 of the empty string, and of Data")
    func emptyAndData() {
        #expect(HashFunction.sha256.hash([UInt8]()).hex
            == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(HashFunction.sha256.hash(Data("abc".utf8)) == HashFunction.sha256.hash(Array("abc".utf8)))
    }

    // RFC 4231 §4.2, test case 1.
    @Test("HMAC-SHA-256/384/512, RFC 4231 test case 1")
    func hmacRFC4231() {
        let key = [UInt8](repeating: 0x0b, count: 20)
        let data = Array("Hi There".utf8)
        #expect(HMAC.authenticationCode(for: data, key: key).hex
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(HMAC.authenticationCode(for: data, key: key, using: .sha384).hex
            == "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6")
        #expect(HMAC.authenticationCode(for: data, key: key, using: .sha512).hex
            == "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854")
    }

    @Test("HMAC checks in constant time and refuses wrong codes")
    func hmacValidation() {
        let key = [UInt8](repeating: 0x0b, count: 20)
        let data = Array("Hi There".utf8)
        let code = HMAC.authenticationCode(for: data, key: key)
        #expect(HMAC.isValidAuthenticationCode(code, for: data, key: key))
        var flipped = code
        flipped[31] ^= 1
        #expect(!HMAC.isValidAuthenticationCode(flipped, for: data, key: key))
        #expect(!HMAC.isValidAuthenticationCode(code.prefix(16), for: data, key: key))
        #expect(!HMAC.isValidAuthenticationCode([UInt8](), for: data, key: key))
        #expect(!HMAC.isValidAuthenticationCode(code, for: data, key: key, using: .sha384))
    }

    @Test("HMAC with an empty key and an empty message")
    func hmacEmpty() {
        // Python: hmac.new(b"", b"", hashlib.sha256).hexdigest()
        #expect(HMAC.authenticationCode(for: [UInt8](), key: [UInt8]()).hex
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}

@Suite("Randomness and constant-time comparison")
struct RandomTests {
    @Test("SecureRandom gives the requested count and differs between calls")
    func randomBytes() {
        #expect(SecureRandom.bytes(count: 0) == [])
        #expect(SecureRandom.bytes(count: 1000).count == 1000)
        #expect(SecureRandom.bytes(count: 32) != SecureRandom.bytes(count: 32))
    }

    @Test("ConstantTime.equals")
    func constantTime() {
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], Data([1, 2, 3])))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!ConstantTime.equals([UInt8](), [0] as [UInt8]))
    }
}
