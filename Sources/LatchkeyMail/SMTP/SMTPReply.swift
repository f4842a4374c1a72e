/// One SMTP reply (RFC 5321 §4.2): a three-digit code and its text lines.
///
/// Parsed strictly and within bounds, since it comes from the network: every line is
/// `code` then `-` (more lines follow) or a space or nothing (the last), then printable UTF-8
/// text and CRLF; all lines carry the same code; a line is at most ``maximumLineLength`` bytes and a reply
/// at most ``maximumLines`` lines.
package struct SMTPReply: Sendable, Hashable {
    /// `220`, `250`, `354`, `421`, `535`, …
    package var code: Int
    /// The text of each line, without the code, the separator and the CRLF.
    package var lines: [String]

    /// RFC 5321 §4.5.3.1.5: 512 bytes with the CRLF.
    package static let maximumLineLength = 512
    /// More lines than any server's EHLO answer needs.
    package static let maximumLines = 64

    package init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// 2xx.
    package var isPositive: Bool { code / 100 == 2 }
    /// 4xx: try again later.
    package var isTransient: Bool { code / 100 == 4 }
    /// 5xx: never going to work.
    package var isPermanent: Bool { code / 100 == 5 }

    /// Why a reply could not be read.
    package struct Malformed: Error, Sendable, Hashable {
        package var reason: String
    }

    /// Reads one reply from the front of `bytes`.
    ///
    /// - Returns: The reply and how many bytes it took, or `nil` when more bytes are needed.
    /// - Throws: ``Malformed`` for a line that breaks the grammar or a bound, whether or not the
    ///   reply is complete.
    package static func parse(_ bytes: some Collection<UInt8>) throws(Malformed) -> (reply: SMTPReply, consumed: Int)? {
        let bytes = Array(bytes)
        var offset = 0
        var code: Int?
        var lines: [String] = []
        while true {
            guard let newline = bytes[offset...].firstIndex(of: 0x0A) else {
                if bytes.count - offset >= maximumLineLength { throw Malformed(reason: "a reply line is longer than \(maximumLineLength) bytes") }
                return nil
            }
            guard newline - offset + 1 <= maximumLineLength else { throw Malformed(reason: "a reply line is longer than \(maximumLineLength) bytes") }
            guard newline > offset, bytes[newline - 1] == 0x0D else { throw Malformed(reason: "a reply line does not end in CRLF") }
            let line = bytes[offset..<(newline - 1)]
            guard line.count >= 3, let lineCode = Self.code(line.prefix(3)) else { throw Malformed(reason: "a reply line does not start with a reply code") }
            guard code == nil || code == lineCode else { throw Malformed(reason: "the lines of one reply carry different codes") }
            code = lineCode
            let rest = line.dropFirst(3)
            let last: Bool
            switch rest.first {
            case nil, 0x20?: last = true
            case 0x2D?: last = false
            default: throw Malformed(reason: "a reply code is followed by neither a space nor a hyphen")
            }
            let text = rest.dropFirst()
            guard text.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw Malformed(reason: "a reply line holds a control character")
            }
            // ASCII, or UTF-8 from a server that speaks SMTPUTF8 (RFC 6531); nothing else.
            guard let decoded = String(validating: text, as: UTF8.self) else { throw Malformed(reason: "a reply line is not UTF-8") }
            lines.append(decoded)
            offset = newline + 1
            if last { return (SMTPReply(code: lineCode, lines: lines), offset) }
            guard lines.count < maximumLines else { throw Malformed(reason: "a reply has more than \(maximumLines) lines") }
        }
    }

    /// The code of `digits`: 2 to 5, then 0 to 5, then 0 to 9 (RFC 5321 §4.2).
    private static func code(_ digits: some Collection<UInt8>) -> Int? {
        let values = digits.map { Int($0) - 0x30 }
        guard values.count == 3, (2...5).contains(values[0]), (0...5).contains(values[1]), (0...9).contains(values[2]) else { return nil }
        return values[0] * 100 + values[1] * 10 + values[2]
    }

    /// The extensions an EHLO reply announces (RFC 5321 §4.1.1.1): each line after the first is
    /// a keyword and its parameters, keyed by the keyword in upper case (`STARTTLS`, `AUTH`,
    /// `SMTPUTF8`, `SIZE`).
    package var extensions: [String: [String]] {
        var found: [String: [String]] = [:]
        for line in lines.dropFirst() {
            let words = line.split(separator: " ").map(String.init)
            guard let keyword = words.first, keyword.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
            found[keyword.uppercased()] = Array(words.dropFirst())
        }
        return found
    }
}
