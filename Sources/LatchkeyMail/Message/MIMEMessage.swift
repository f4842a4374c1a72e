package import FoundationEssentials
import LatchkeyBasics
import LatchkeyCrypto

/// A mailbox as a header names it: an address and, perhaps, a display name.
///
/// Header injection is impossible by construction: an address with a line break, a control
/// character, white space or angle brackets is refused, and a display name is always written
/// as RFC 2047 encoded words unless it is plain printable ASCII without specials, so nothing a
/// name holds can end a header line or add a recipient.
package struct MailAddress: Sendable, Hashable {
    package var address: String
    package var name: String?

    /// - Returns: `nil` for an address that is not one `local@domain` of at most 254 bytes
    ///   without white space, controls, quotes, angle brackets, commas or semicolons.
    package init?(_ address: String, name: String? = nil) {
        let bytes = Array(address.utf8)
        let at = bytes.filter { $0 == UInt8(ascii: "@") }.count
        guard at == 1, bytes.first != UInt8(ascii: "@"), bytes.last != UInt8(ascii: "@"), bytes.count <= 254,
            !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F || "<>\"(),;:\\[]".utf8.contains($0) })
        else { return nil }
        self.address = address
        self.name = name.map { $0.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined() }
    }

    /// Reads `Name <address>` or a bare address, as `email.from` is written.
    package init?(parsing text: String) {
        guard let open = text.lastIndex(of: "<"), text.hasSuffix(">") else {
            self.init(text)
            return
        }
        let name = String(text[..<open].trimmingWhitespace())
        self.init(String(text[text.index(after: open)..<text.index(before: text.endIndex)]), name: name.isEmpty ? nil : name)
    }

    /// The header form: `address`, or `name <address>` with the name encoded as needed.
    package var header: String {
        guard let name, !name.isEmpty else { return address }
        let plain = name.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && !"\"()<>[]:;@\\,.=?".utf8.contains($0) }
        return (plain ? name : MIMEMessage.encodedWords(name)) + " <" + address + ">"
    }
}

/// An RFC 5322 message with a text and an HTML part (`multipart/alternative`), each
/// quoted-printable, as the outbox hands it to SMTP.
package struct MIMEMessage: Sendable {
    package var from: MailAddress
    package var to: MailAddress
    package var subject: String
    package var text: String
    package var html: String
    package var date: Date
    /// `<random@domain>`, the domain being the sender's.
    package var messageID: String

    package init(from: MailAddress, to: MailAddress, subject: String, text: String, html: String, date: Date) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.date = date
        let domain = from.address.split(separator: "@").last.map(String.init) ?? "localhost"
        self.messageID = "<" + Base64.encode(SecureRandom.bytes(count: 18), alphabet: .urlSafe, padded: false) + "@" + domain + ">"
    }

    /// The whole message, lines ending in CRLF, every line at most 78 characters.
    package func rendered(boundary: String = "=_" + Base64.encode(SecureRandom.bytes(count: 18), alphabet: .urlSafe, padded: false)) -> String {
        var lines = [
            "From: " + from.header,
            "To: " + to.header,
            "Subject: " + Self.headerText(subject),
            "Date: " + Self.rfc5322Date(date),
            "Message-ID: " + messageID,
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += [
                "--" + boundary, "Content-Type: " + type + "; charset=utf-8", "Content-Transfer-Encoding: quoted-printable", "",
                Self.quotedPrintable(body),
            ]
        }
        lines.append("--" + boundary + "--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    // MARK: Encodings

    /// A header value: as is when it is printable ASCII that cannot be mistaken for an encoded
    /// word, else RFC 2047 encoded words.
    package static func headerText(_ text: String) -> String {
        let clean = text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined()
        let plain = clean.utf8.allSatisfy { $0 < 0x7F } && !clean.contains("=?") && clean.utf8.count <= 68
        return plain ? clean : encodedWords(clean)
    }

    /// `=?UTF-8?B?…?=` words of at most 75 characters, each holding whole characters, joined by
    /// a folding space.
    package static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            // 39 bytes of UTF-8 make 52 base64 characters: 64 with the `=?UTF-8?B?` and `?=`, so
            // a first word after `Subject: ` still ends before column 78.
            if chunk.count + bytes.count > 39 {
                words.append(word(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(word(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    private static func word(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?" + Base64.encode(bytes, padded: true) + "?="
    }

    /// RFC 2045 §6.7: lines of at most 76 characters with soft breaks, `=` and every byte that
    /// is not printable ASCII encoded, and white space before a line break encoded too. Line
    /// breaks become CRLF.
    package static func quotedPrintable(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [String] = []
        let lines = text.replacing("\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines {
            let bytes = Array(line.utf8)
            var current: [UInt8] = []
            for (index, byte) in bytes.enumerated() {
                let last = index == bytes.count - 1
                let literal = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 0x20 || byte == 0x09) && !last)
                let piece = literal ? [byte] : [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                if current.count + piece.count > 75 {
                    output.append(String(decoding: current + [UInt8(ascii: "=")], as: UTF8.self))
                    current = []
                }
                current += piece
            }
            output.append(String(decoding: current, as: UTF8.self))
        }
        return output.joined(separator: "\r\n")
    }

    /// `Mon, 07 Dec 2026 06:40:00 +0000`.
    package static func rfc5322Date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        return "\(weekdays[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }
}
