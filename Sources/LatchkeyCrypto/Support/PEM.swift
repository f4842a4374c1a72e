/// PEM text encoding of DER (RFC 7468).
package enum PEM {
    /// `-----BEGIN label-----`, the base64 of `der` in 64-character lines, `-----END label-----`,
    /// each line ending in "\n", as OpenSSL writes it.
    package static func encode(label: String, der: [UInt8]) -> String {
        let body = Array(Base64.encode(der, padded: true).utf8)
        var text = "-----BEGIN \(label)-----\n"
        var index = 0
        while index < body.count {
            let end = min(index + 64, body.count)
            text += String(decoding: body[index..<end], as: UTF8.self)
            text += "\n"
            index = end
        }
        text += "-----END \(label)-----\n"
        return text
    }

    /// Finds the first block whose label is one of `labels` and decodes it.
    ///
    /// Text outside blocks and blocks with other labels are ignored (so `openssl ecparam -genkey`
    /// output, an `EC PARAMETERS` block followed by the key, works). Inside the chosen block only
    /// base64 and whitespace are allowed: RFC 1421 headers such as `Proc-Type` (an encrypted key)
    /// make it malformed.
    ///
    /// - Returns: The label found and the DER bytes, or nil when no block with an accepted label
    ///   exists or that block is malformed.
    package static func decode(_ text: String, labels: Set<String>) -> (label: String, der: [UInt8])? {
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { trim($0) }[...]
        while let line = lines.popFirst() {
            guard let label = marker(line, kind: "BEGIN") else { continue }
            var body: [UInt8] = []
            var ended = false
            while let inner = lines.popFirst() {
                if let endLabel = marker(inner, kind: "END") {
                    guard endLabel == label else { return nil }
                    ended = true
                    break
                }
                for byte in inner where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
                    body.append(byte)
                }
            }
            guard ended else { return nil }
            guard labels.contains(label) else { continue }
            guard let der = Base64.decode(body, padded: true), !der.isEmpty else { return nil }
            return (label, der)
        }
        return nil
    }

    /// The line without surrounding spaces, tabs and carriage returns.
    private static func trim(_ line: some Collection<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D }
        let bytes = Array(line)[...]
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    /// The label of a `-----BEGIN label-----` or `-----END label-----` line, or nil.
    private static func marker(_ line: ArraySlice<UInt8>, kind: String) -> String? {
        let prefix = Array("-----\(kind) ".utf8)
        let suffix = Array("-----".utf8)
        guard line.count >= prefix.count + suffix.count, line.starts(with: prefix),
            line.suffix(suffix.count).elementsEqual(suffix)
        else { return nil }
        let label = line.dropFirst(prefix.count).dropLast(suffix.count)
        return String(decoding: label, as: UTF8.self)
    }
}
