/// Base64url without padding (RFC 4648 §5), the encoding of every JOSE part (RFC 7515 §2).
///
/// ``decode(_:)`` is strict: only the URL-safe alphabet, no padding, no whitespace, and the unused
/// low bits of the last character must be zero, so every byte string has exactly one encoding and
/// a token cannot be re-encoded into a second valid form. ``decodeLenient(_:)`` also takes standard
/// base64 with padding, which is what `Data.base64EncodedString()` produces in apps.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Maps an ASCII byte to its 6-bit value for both alphabets; 0xFF marks everything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Encodes bytes as base64url without padding.
    ///
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The encoded text.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        let outputCount = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: outputCount) { output in
            var o = 0
            var i = 0
            while i + 3 <= input.count {
                let chunk = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                output[o] = alphabet[Int(chunk >> 18 & 63)]
                output[o + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[o + 2] = alphabet[Int(chunk >> 6 & 63)]
                output[o + 3] = alphabet[Int(chunk & 63)]
                i += 3
                o += 4
            }
            switch input.count - i {
            case 1:
                output[o] = alphabet[Int(input[i] >> 2)]
                output[o + 1] = alphabet[Int(input[i] & 3) << 4]
                o += 2
            case 2:
                let chunk = UInt32(input[i]) << 8 | UInt32(input[i + 1])
                output[o] = alphabet[Int(chunk >> 10 & 63)]
                output[o + 1] = alphabet[Int(chunk >> 4 & 63)]
                output[o + 2] = alphabet[Int(chunk << 2 & 63)]
                o += 3
            default:
                break
            }
            return o
        }
    }

    /// Decodes strict base64url: URL-safe alphabet, no padding, canonical trailing bits.
    ///
    /// - Parameter text: The encoded text.
    /// - Returns: The decoded bytes, or `nil` when the text is not canonical base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(Array(text.utf8), lenient: false)
    }

    /// Decodes base64url or standard base64, with or without `=` padding.
    ///
    /// API fields that carry keys and signatures accept both, because apps send
    /// `Data.base64EncodedString()`. The alphabets may not be mixed, and trailing bits must be zero.
    ///
    /// - Parameter text: The encoded text.
    /// - Returns: The decoded bytes, or `nil` when the text is neither form.
    public static func decodeLenient(_ text: some StringProtocol) -> [UInt8]? {
        decode(Array(text.utf8), lenient: true)
    }

    /// Decodes the UTF-8 bytes of base64 text; strict unless `lenient`.
    static func decode(_ input: [UInt8], lenient: Bool) -> [UInt8]? {
        var count = input.count
        if lenient {
            // Standard base64 pads to a multiple of four with at most two `=`.
            var padding = 0
            while count > 0, input[count - 1] == UInt8(ascii: "="), padding < 2 {
                count -= 1
                padding += 1
            }
            if padding > 0, input.count % 4 != 0 { return nil }
            let urlSafe = input[..<count].contains { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
            let standard = input[..<count].contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") }
            if urlSafe && standard { return nil }
        }
        if count % 4 == 1 { return nil }

        var output = [UInt8]()
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<count {
            let byte = input[index]
            var value = values[Int(byte)]
            if !lenient, byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") { value = 0xFF }
            if value == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, or two encodings would decode to the same bytes.
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return output
    }
}
