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
        var form = ""
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            if !form.isEmpty { form += "&" }
            form += encode(name)
            form += "="
            form += encode(value)
        }
        return form
    }

    /// Escapes every byte of the UTF-8 text except RFC 3986's unreserved characters and the
    /// ASCII characters in `kept`.
    package static func encode(_ text: String, keeping kept: String = "") -> String {
        let kept = kept.utf8
        func passes(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                true
            default: byte < 0x80 && kept.contains(byte)
            }
        }
        // Hosted pages encode every parameter of a request several times: count first, then
        // write the result once, in place (no array per escape).
        let escapes = text.utf8.reduce(0) { $0 + (passes($1) ? 0 : 1) }
        if escapes == 0 { return text }
        return String(unsafeUninitializedCapacity: text.utf8.count + 2 * escapes) { output in
            var index = 0
            for byte in text.utf8 {
                if passes(byte) {
                    output[index] = byte
                    index += 1
                } else {
                    output[index] = UInt8(ascii: "%")
                    output[index + 1] = hexDigit(byte >> 4)
                    output[index + 2] = hexDigit(byte & 0xF)
                    index += 3
                }
            }
            return index
        }
    }

    /// The upper-case hexadecimal digit of a value below 16.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
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
