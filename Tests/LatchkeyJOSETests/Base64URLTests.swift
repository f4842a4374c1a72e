import LatchkeyJOSE
import LatchkeyTestSupport
import Testing

@Suite("Base64url")
struct Base64URLTests {
    @Test("RFC 4648 §10 vectors round-trip without padding")
    func rfc4648Vectors() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("the URL-safe alphabet is used for bytes 62 and 63")
    func urlSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
    }

    @Test("strict decoding refuses padding, the standard alphabet, whitespace and bad lengths",
          arguments: ["Zg==", "Zm8=", "+/8", "Zm9v\n", " Zm9v", "Z", "Zm9vY", "Zm9v.", "Zm9v%"])
    func strictRefusals(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("non-zero unused bits are refused, so each byte string has one encoding")
    func canonicalTrailingBits() {
        #expect(Base64URL.decode("Zg") == [0x66])
        #expect(Base64URL.decode("Zh") == nil)
        #expect(Base64URL.decode("Zm9") == nil)
        #expect(Base64URL.decode("Zm8") == [0x66, 0x6F])
    }

    @Test("lenient decoding takes what Data.base64EncodedString() produces")
    func lenient() {
        #expect(Base64URL.decodeLenient("+/8=") == [0xFB, 0xFF])
        #expect(Base64URL.decodeLenient("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decodeLenient("Zm9vYg==") == Array("foob".utf8))
        #expect(Base64URL.decodeLenient("Zm9vYg") == Array("foob".utf8))
        #expect(Base64URL.decodeLenient("-/8=") == nil, "mixed alphabets")
        #expect(Base64URL.decodeLenient("Zm9vYg=") == nil, "padding must complete a quantum")
        #expect(Base64URL.decodeLenient("Zg===") == nil)
    }

    @Test("every byte string of up to 64 bytes round-trips")
    func roundTrips() {
        var generator = SeededGenerator(seed: 7)
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
            #expect(Base64URL.decodeLenient(Base64URL.encode(bytes)) == bytes)
        }
    }
}
