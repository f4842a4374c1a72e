import LatchkeyCrypto

/// Base64url without padding (RFC 4648 §5), the encoding of every JOSE part (RFC 7515 §2).
///
/// ``decode(_:)`` is strict: only the URL-safe alphabet, no padding, no whitespace, and the unused
/// low bits of the last character must be zero, so every byte string has exactly one encoding and
/// a token cannot be re-encoded into a second valid form. ``decodeLenient(_:)`` also takes standard
/// base64 with padding, which is what `Data.base64EncodedString()` produces in apps.
package enum Base64URL {
    /// Encodes bytes as base64url without padding.
    ///
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The encoded text.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64.encode(bytes, alphabet: .urlSafe, padded: false)
    }

    /// Decodes strict base64url: URL-safe alphabet, no padding, canonical trailing bits.
    ///
    /// - Parameter text: The encoded text.
    /// - Returns: The decoded bytes, or `nil` when the text is not canonical base64url.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        Base64.decode(text.utf8, alphabet: .urlSafe, padded: false)
    }

    /// Decodes base64url or standard base64, with or without `=` padding.
    ///
    /// API fields that carry keys and signatures accept both, because apps send
    /// `Data.base64EncodedString()`. The alphabets may not be mixed, and trailing bits must be zero.
    ///
    /// - Parameter text: The encoded text.
    /// - Returns: The decoded bytes, or `nil` when the text is neither form.
    package static func decodeLenient(_ text: some StringProtocol) -> [UInt8]? {
        Base64.decode(text.utf8, alphabet: .urlSafe, padded: nil) ?? Base64.decode(text.utf8, alphabet: .standard, padded: nil)
    }

    /// Decodes strict base64url given as ASCII bytes (a part of a compact JWS).
    static func decode(bytes: some Collection<UInt8>) -> [UInt8]? {
        Base64.decode(bytes, alphabet: .urlSafe, padded: false)
    }
}
