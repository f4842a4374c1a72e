import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

@Suite("CBOR: strict, bounded decoding (RFC 8949)")
struct CBORTests {
    /// RFC 8949 Appendix A examples within the accepted subset, with their values.
    static let examples: [(String, CBORValue)] = [
        ("00", .unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1903e8", .unsigned(1000)),
        ("1a000f4240", .unsigned(1_000_000)), ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
        ("1bffffffffffffffff", .unsigned(.max)), ("20", .integer(-1)), ("3863", .integer(-100)),
        ("3bffffffffffffffff", .negative(.max)), ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
        ("60", .text("")), ("6449455446", .text("IETF")), ("62c3bc", .text("ü")), ("f4", .bool(false)), ("f5", .bool(true)),
        ("f6", .null), ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
        ("a0", .map([])), ("a201020304", .map([CBORMapEntry(.unsigned(1), .unsigned(2)), CBORMapEntry(.unsigned(3), .unsigned(4))])),
        ("a26161016162820203", .map([CBORMapEntry(.text("a"), .unsigned(1)), CBORMapEntry(.text("b"), .array([.unsigned(2), .unsigned(3)]))])),
    ]

    @Test("RFC 8949 Appendix A examples decode, and re-encode to the same bytes")
    func appendixA() throws {
        for (hex, value) in Self.examples {
            let bytes = [UInt8](hex: hex)
            #expect(try CBORDecoder.decode(bytes) == value, "\(hex)")
            #expect(CBOREncoder.encode(value) == bytes, "\(hex)")
        }
    }

    /// Hostile or out-of-profile inputs and the rule each breaks.
    static let refused: [(String, CBORError.Code, String)] = [
        ("", .truncated, "empty"),
        ("18", .truncated, "argument missing"),
        ("19 03", .truncated, "argument cut short"),
        ("44 0102", .truncated, "byte string shorter than its length"),
        ("5b ffffffffffffffff", .truncated, "a length of 2^64-1"),
        ("9b 0000000100000000 00", .truncated, "an array count far beyond the input"),
        ("bb 7fffffffffffffff", .truncated, "a map count far beyond the input"),
        ("a1 01", .truncated, "a map without its value"),
        ("1800", .nonMinimalEncoding, "0 in one extra byte"),
        ("1817", .nonMinimalEncoding, "23 in one extra byte"),
        ("190010", .nonMinimalEncoding, "16 in two bytes"),
        ("1a0000ffff", .nonMinimalEncoding, "65535 in four bytes"),
        ("1b00000000ffffffff", .nonMinimalEncoding, "2^32-1 in eight bytes"),
        ("3800", .nonMinimalEncoding, "-1 in one extra byte"),
        ("5801 00", .nonMinimalEncoding, "a byte string length in one extra byte"),
        ("9800", .nonMinimalEncoding, "an array count in one extra byte"),
        ("5f 41 00 ff", .indefiniteLength, "indefinite byte string"),
        ("9f ff", .indefiniteLength, "indefinite array"),
        ("bf ff", .indefiniteLength, "indefinite map"),
        ("1c", .unsupportedItem, "reserved additional information 28"),
        ("c0 60", .unsupportedItem, "a tag"),
        ("f7", .unsupportedItem, "undefined"),
        ("f93c00", .unsupportedItem, "a half float"),
        ("fb3ff199999999999a", .unsupportedItem, "a double"),
        ("f0", .unsupportedItem, "simple value 16"),
        ("a2 01 02 01 03", .duplicateKey, "an integer key twice"),
        ("a2 6161 01 6161 02", .duplicateKey, "a text key twice"),
        ("a1 41 00 01", .unsupportedKey, "a byte string key"),
        ("a1 80 01", .unsupportedKey, "an array key"),
        ("62 c328", .invalidUTF8, "an invalid UTF-8 sequence"),
        ("63 eda080", .invalidUTF8, "a UTF-16 surrogate in UTF-8"),
        ("61 ff", .invalidUTF8, "a byte that never appears in UTF-8"),
        ("00 00", .trailingBytes, "a second item"),
        ("a0 ff", .trailingBytes, "a stray break"),
    ]

    @Test("hostile and out-of-profile inputs are refused with the rule they break")
    func hostile() {
        for (hex, code, what) in Self.refused {
            let bytes = [UInt8](hex: hex.filter { $0 != " " })
            #expect(throws: CBORError(code)) { try CBORDecoder.decode(bytes) }
            // Also the rule, not just any refusal:
            do {
                _ = try CBORDecoder.decode(bytes)
                Issue.record("accepted \(what)")
            } catch {
                #expect(error.code == code, "\(what): \(error)")
            }
        }
    }

    @Test("nesting deeper than 16 is refused; 16 is accepted")
    func depth() throws {
        let sixteen = [UInt8](repeating: 0x81, count: 15) + [0x80]
        #expect(try CBORDecoder.decode(sixteen) != .null)
        let seventeen = [UInt8](repeating: 0x81, count: 16) + [0x80]
        #expect(throws: CBORError(.tooDeep)) { try CBORDecoder.decode(seventeen) }
        var maps: [UInt8] = []
        for _ in 0..<20 { maps += [0xA1, 0x01] }
        maps.append(0x00)
        #expect(throws: CBORError(.tooDeep)) { try CBORDecoder.decode(maps) }
        // A million-deep nest fails fast, without recursing a million times.
        #expect(throws: CBORError(.tooDeep)) { try CBORDecoder.decode([UInt8](repeating: 0x81, count: 1_000_000)) }
    }

    @Test("more than 2048 items are refused")
    func items() throws {
        let many = [0x99, 0x08, 0x00] + [UInt8](repeating: 0x00, count: 2048)
        #expect(throws: CBORError(.tooManyItems)) { try CBORDecoder.decode(many) }
        let fine = [0x99, 0x07, 0xFF] + [UInt8](repeating: 0x00, count: 2047)
        #expect(try CBORDecoder.decode(fine).arrayValue?.count == 2047)
    }

    @Test("decodePrefix reports the bytes one item took, so authenticator data can read what follows")
    func prefix() throws {
        let (value, consumed) = try CBORDecoder.decodePrefix([0xA1, 0x01, 0x02, 0xA0, 0xFF])
        #expect(value == .map([CBORMapEntry(.unsigned(1), .unsigned(2))]))
        #expect(consumed == 3)
    }

    @Test("map lookups by integer label and by text key")
    func lookups() throws {
        let value = try CBORDecoder.decode([UInt8](hex: "a3012603276161f5"))
        #expect(value[label: 1]?.integerValue == -7)
        #expect(value[label: 3]?.integerValue == -8)
        #expect(value["a"] == .bool(true))
        #expect(value[label: 2] == nil)
    }

    @Test("map key order is not enforced (documented choice): keys out of CTAP2 canonical order decode, in their order")
    func keyOrder() throws {
        let value = try CBORDecoder.decode([UInt8](hex: "a2036161016162"))
        #expect(value == .map([CBORMapEntry(.unsigned(3), .text("a")), CBORMapEntry(.unsigned(1), .text("b"))]))
        #expect(CBOREncoder.encode(value) == [UInt8](hex: "a2036161016162"))
    }
}
