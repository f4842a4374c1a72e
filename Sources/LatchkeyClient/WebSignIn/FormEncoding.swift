import Foundation

/// Percent-encoding for query strings and `application/x-www-form-urlencoded` bodies.
///
/// Everything but RFC 3986's unreserved characters is encoded, so a value such as a redirect URI
/// (`:`, `/`, `?`, `&`, `=`, `+`) or a space-separated scope list survives any decoder unchanged.
enum FormEncoding {
    /// `value` with every byte outside `A–Z a–z 0–9 - . _ ~` written as `%XX`.
    static func percentEncode(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF")
        var text = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.append(Character(Unicode.Scalar(byte)))
            default:
                text.append("%")
                text.append(hex[Int(byte >> 4)])
                text.append(hex[Int(byte & 0x0f)])
            }
        }
        return text
    }

    /// `name=value` pairs joined with `&`, both sides percent-encoded, in the order given.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    /// The pairs of a query string, in order, decoding `%XX` and `+` (a space in form encoding).
    ///
    /// - Returns: `nil` when a name or value is not valid percent-encoded UTF-8.
    static func decode(_ query: String) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for field in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = unescape(parts[0]), let value = unescape(parts.count > 1 ? parts[1] : "") else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    private static func unescape(_ text: Substring) -> String? {
        String(text.replacingOccurrences(of: "+", with: " ")).removingPercentEncoding
    }
}
