/// Percent-decoding of paths (RFC 3986 §2.1) and of `application/x-www-form-urlencoded` text
/// (WHATWG URL Standard §5.1).
package enum PercentEncoding {
    /// Decodes `%XX` escapes; with `plusIsSpace`, `+` becomes a space as in form bodies.
    ///
    /// - Returns: The decoded text, or `nil` for a broken escape, a decoded NUL or control
    ///   character, or bytes that are not UTF-8: none has a meaning in a path or a parameter, and
    ///   passing them on would let one request look like two different things to two layers.
    package static func decode(_ bytes: UnsafeRawBufferPointer, plusIsSpace: Bool) -> String? {
        if !bytes.contains(UInt8(ascii: "%")) && !(plusIsSpace && bytes.contains(UInt8(ascii: "+"))) {
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
            return String(validating: bytes, as: UTF8.self)
        }
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(plusIsSpace && byte == UInt8(ascii: "+") ? 0x20 : byte)
                index += 1
            }
        }
        guard !output.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return String(validating: output, as: UTF8.self)
    }

    package static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0), plusIsSpace: plusIsSpace) }
    }

    /// Parses `a=1&b=2` into a dictionary.
    ///
    /// - Returns: `nil` when a name repeats (RFC 6749 §3.1: OAuth parameters must not repeat, and
    ///   two layers that pick different copies disagree about the request) or an escape is broken.
    package static func parseForm(_ bytes: UnsafeRawBufferPointer) -> [String: String]? {
        var result = [String: String]()
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                let pair = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
                guard let name = decode(UnsafeRawBufferPointer(rebasing: pair[0..<equals]), plusIsSpace: true),
                    let value = decode(
                        UnsafeRawBufferPointer(rebasing: pair[min(equals + 1, pair.count)..<pair.count]), plusIsSpace: true),
                    result.updateValue(value, forKey: name) == nil
                else { return nil }
            }
            start = end + 1
        }
        return result
    }

    /// Encodes fields as `a=1&b=2`, in name order, escaping everything but RFC 3986's
    /// unreserved characters.
    package static func encodeForm(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { encode($0.key) + "=" + encode($0.value) }.joined(separator: "&")
    }

    /// Escapes every byte of the UTF-8 text except RFC 3986's unreserved characters and the
    /// ASCII characters in `kept`.
    package static func encode(_ text: String, keeping kept: String = "") -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output = [UInt8]()
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            case _ where byte < 0x80 && kept.utf8.contains(byte):
                output.append(byte)
            default:
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
