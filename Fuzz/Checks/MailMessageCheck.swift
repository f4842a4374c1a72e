import FoundationEssentials
import LatchkeyMail

extension FuzzTarget {
    /// Messages built from hostile parts: the input is split at NUL bytes into a sender, a
    /// recipient, a display name, a subject and a body.
    ///
    /// Properties: lines end in CRLF only and none is over 998 bytes; the header block holds
    /// exactly the seven fields the composer writes, each other header line a folded
    /// continuation, so nothing in a name, subject or body adds a header or a recipient; an
    /// accepted address has no white space or control character.
    public static let mailMessage = FuzzTarget(name: "mail-message") { (input) throws(PropertyFailure) in
        let parts = input.split(separator: 0, maxSplits: 4, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        func part(_ index: Int) -> String { index < parts.count ? parts[index] : "" }
        guard let from = MailAddress(parsing: part(0)), let to = MailAddress(part(1), name: part(2)) else { return .refused }
        for address in [from.address, to.address] {
            try require(!address.utf8.contains { $0 <= 0x20 || $0 == 0x7F }, "an accepted address holds white space or a control character")
        }
        let message = MIMEMessage(from: from, to: to, subject: part(3), text: part(4), html: part(4), date: Date(timeIntervalSince1970: 0))
        let rendered = Array(message.rendered().utf8)
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for index in rendered.indices where rendered[index] == 0x0A {
            try require(index > 0 && rendered[index - 1] == 0x0D, "a line ends in a bare LF")
            lines.append(rendered[start..<(index - 1)])
            start = index + 1
        }
        try require(start == rendered.count, "the message does not end in CRLF")
        try require(!lines.contains { $0.contains(0x0D) }, "a bare CR inside a line")
        try require(lines.allSatisfy { $0.count <= 998 }, "a line is longer than 998 bytes")
        let header = lines.prefix { !$0.isEmpty }
        let names = header.filter { $0.first != 0x20 && $0.first != 0x09 }.map { String(decoding: $0.prefix { $0 != 0x3A }, as: UTF8.self) }
        try require(
            names == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"],
            "the header block holds other fields than the composer's: \(names)")
        return .accepted
    }
}
