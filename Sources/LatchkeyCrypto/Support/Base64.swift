/// Base64 (RFC 4648 §4) and base64url (§5), strict: one codec for PEM bodies, PHC strings and,
/// through `LatchkeyJOSE.Base64URL`, every JOSE part.
///
/// Decoding accepts only the canonical encoding of a byte string: the alphabet, the expected
/// padding, and zero bits after the last byte, so each byte string has one accepted spelling.
package enum Base64 {
    /// The two alphabets, which differ in the characters for 62 and 63.
    package enum Alphabet: Sendable {
        /// `+` and `/` (§4).
        case standard
        /// `-` and `_` (§5).
        case urlSafe

        fileprivate var characters: [UInt8] {
            switch self {
            case .standard: Base64.standardCharacters
            case .urlSafe: Base64.urlSafeCharacters
            }
        }

        fileprivate var values: [UInt8] {
            switch self {
            case .standard: Base64.standardValues
            case .urlSafe: Base64.urlSafeValues
            }
        }
    }

    private static let standardCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafeCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardValues = values(of: standardCharacters)
    private static let urlSafeValues = values(of: urlSafeCharacters)

    /// Maps each ASCII byte to its 6-bit value, or 0xFF.
    private static func values(of characters: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in characters.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }

    /// Encodes `bytes`, with `=` padding to a multiple of four characters when `padded`.
    package static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard, padded: Bool) -> String {
        let bytes = Array(bytes)
        let characters = alphabet.characters
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(characters[Int(chunk >> 18 & 63)])
            output.append(characters[Int(chunk >> 12 & 63)])
            output.append(characters[Int(chunk >> 6 & 63)])
            output.append(characters[Int(chunk & 63)])
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            let chunk = UInt32(bytes[index]) << 16 | (remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(characters[Int(chunk >> 18 & 63)])
            output.append(characters[Int(chunk >> 12 & 63)])
            if remaining == 2 { output.append(characters[Int(chunk >> 6 & 63)]) }
            if padded { output += Array(repeating: UInt8(ascii: "="), count: 3 - remaining) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes canonical base64 text given as ASCII bytes.
    ///
    /// - Parameters:
    ///   - text: The characters, with no whitespace.
    ///   - alphabet: The alphabet the text must use.
    ///   - padded: Whether `=` padding is required (true), forbidden (false) or optional (nil).
    /// - Returns: The bytes, or nil when `text` is not the canonical encoding of any bytes.
    package static func decode(_ text: some Collection<UInt8>, alphabet: Alphabet = .standard, padded: Bool?) -> [UInt8]? {
        var characters = Array(text)
        if padded != false, characters.last == UInt8(ascii: "=") || padded == true {
            guard characters.count % 4 == 0 else { return nil }
            var padding = 0
            while padding < 2, characters.last == UInt8(ascii: "=") {
                characters.removeLast()
                padding += 1
            }
            // Padding must match the length: "xx==" or "xxx=", never "x===".
            if padding > 0 && characters.count % 4 != 4 - padding { return nil }
        }
        guard characters.count % 4 != 1 else { return nil }
        let values = alphabet.values
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero in the canonical encoding.
        guard accumulator == 0 else { return nil }
        return output
    }
}
