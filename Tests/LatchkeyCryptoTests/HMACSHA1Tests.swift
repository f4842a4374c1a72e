import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite("HMAC-SHA-1 (for TOTP)")
struct HMACSHA1Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: [UInt8]
        var data: [UInt8]
        var mac: String
        var testDescription: String { "RFC 2202 §3 test case \(number)" }
    }

    /// RFC 2202 §3, every HMAC-SHA-1 case (case 5's full 20-byte output; the RFC also shows it
    /// truncated to 96 bits).
    static let vectors: [Vector] = [
        Vector(number: 1, key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8), mac: "b617318655057264e28bc0b6fb378c8ef146be00"),
        Vector(number: 2, key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8), mac: "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        Vector(number: 3, key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50), mac: "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        Vector(number: 4, key: Array(1...25), data: [UInt8](repeating: 0xcd, count: 50), mac: "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        Vector(number: 5, key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8), mac: "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        Vector(
            number: 6, key: [UInt8](repeating: 0xaa, count: 80), data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            mac: "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        Vector(
            number: 7, key: [UInt8](repeating: 0xaa, count: 80),
            data: Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
            mac: "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
    ]

    @Test("RFC 2202 vectors", arguments: vectors)
    func rfc2202(_ vector: Vector) {
        #expect(HMAC.sha1AuthenticationCode(for: vector.data, key: vector.key).hex == vector.mac)
    }

    @Test("an empty message and an empty key are allowed")
    func empty() {
        #expect(HMAC.sha1AuthenticationCode(for: [UInt8](), key: [UInt8]()).hex == "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d")
    }
}
