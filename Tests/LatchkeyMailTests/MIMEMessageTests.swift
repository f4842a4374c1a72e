import Foundation
import LatchkeyJSON
import LatchkeyMail
import LatchkeyTestSupport
import Testing

/// The RFC 5322 messages the outbox will hand to SMTP, read back by Python's `email` package, a
/// parser no one here wrote.
@Suite("Mail messages: RFC 5322, MIME, encoded words, quoted-printable (S32)")
struct MIMEMessageTests {
    static func parsed(_ message: String) throws -> JSONValue {
        try JSONValue(parsing: Array(try PythonEmail.parse(message).utf8))
    }

    static let date = Date(timeIntervalSince1970: 1_796_625_600)  // 2026-12-07 06:40:00 UTC

    @Test("S32: a message with non-ASCII subject, names and bodies parses back exactly, with no defect and no line over 78 characters")
    func roundTrip() throws {
        let text = "Bonjour Ada,\n\nVotre code : 042917 — valable 15 minutes.\n.\nA line that ends in spaces   \nx=y and a very long line " +
            String(repeating: "long ", count: 40) + "end\nÉmoji 🔐 too."
        let html = "<p>Bonjour <strong>Ada</strong> — <a href=\"https://id.example/email/reset?token=abc=\">Réinitialiser</a></p>"
        let message = MIMEMessage(
            from: try #require(MailAddress(parsing: "Équipe Latchkey <no-reply@id.example>")), to: try #require(MailAddress("ada@example.com", name: "Ada Lovelace")),
            subject: "Réinitialisez votre mot de passe — Latchkey, une très longue ligne de sujet qui doit être pliée", text: text, html: html,
            date: Self.date)
        let rendered = message.rendered()
        #expect(rendered.split(separator: "\r\n", omittingEmptySubsequences: false).allSatisfy { $0.utf8.count <= 78 })
        #expect(!rendered.replacing("\r\n", with: "").contains("\n") && !rendered.replacing("\r\n", with: "").contains("\r"), "CRLF only")
        let parsed = try Self.parsed(rendered)
        #expect(parsed["defects"] == [])
        #expect(parsed["from"] == ["no-reply@id.example"] && parsed["from_name"] == "Équipe Latchkey")
        #expect(parsed["to"] == ["ada@example.com"] && parsed["to_name"] == "Ada Lovelace")
        #expect(parsed["subject"]?.stringValue == message.subject)
        #expect(parsed["plain"]?.stringValue == text)
        #expect(parsed["html"]?.stringValue == html)
        #expect(parsed["message_id"]?.stringValue == message.messageID && message.messageID.hasSuffix("@id.example>"))
        #expect(parsed["date"] == "2026-12-07T06:40:00+00:00")
        #expect(parsed["headers"] == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"])
    }

    @Test("S32: header injection: an address with a line break is refused; a name with CR LF, commas or angle brackets stays one mailbox and adds no header", arguments: [
        "Evil\r\nBcc: victim@example.com", "Evil\nBcc: victim@example.com", "a, b <other@example.com>", "=?UTF-8?B?QmNjOg==?= x", "\"quoted\" <x@y>",
    ])
    func headerInjection(name: String) throws {
        #expect(MailAddress("ada@example.com\r\nBcc: victim@example.com") == nil)
        #expect(MailAddress("ada@example.com, victim@example.com") == nil)
        #expect(MailAddress("<ada@example.com>") == nil && MailAddress("ada example@example.com") == nil && MailAddress("@example.com") == nil)
        let message = MIMEMessage(
            from: try #require(MailAddress("no-reply@id.example")), to: try #require(MailAddress("ada@example.com", name: name)),
            subject: "Hello\r\nBcc: victim@example.com", text: "x", html: "<p>x</p>", date: Self.date)
        let parsed = try Self.parsed(message.rendered())
        #expect(parsed["to"] == ["ada@example.com"], "one recipient")
        #expect(parsed["headers"] == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"], "no header added")
        #expect(parsed["subject"]?.stringValue?.contains("\n") == false)
        #expect(parsed["defects"] == [])
    }

    @Test("quoted-printable (RFC 2045 §6.7): = encoded, trailing white space encoded, soft breaks within 76 characters, CRLF line ends")
    func quotedPrintable() {
        #expect(MIMEMessage.quotedPrintable("a=b") == "a=3Db")
        #expect(MIMEMessage.quotedPrintable("end \nnext\t") == "end=20\r\nnext=09")
        #expect(MIMEMessage.quotedPrintable("é") == "=C3=A9")
        let long = MIMEMessage.quotedPrintable(String(repeating: "a", count: 200))
        let lines = long.split(separator: "\r\n")
        #expect(lines.count == 3 && lines.allSatisfy { $0.utf8.count <= 76 } && lines.dropLast().allSatisfy { $0.hasSuffix("=") })
        #expect(lines.map { $0.hasSuffix("=") ? $0.dropLast() : $0[...] }.joined() == String(repeating: "a", count: 200))
    }

    @Test("RFC 5322 dates: weekday, zero-padded day and time, UTC", arguments: [
        (0.0, "Thu, 01 Jan 1970 00:00:00 +0000"), (951_782_400, "Tue, 29 Feb 2000 00:00:00 +0000"),
        (1_796_625_600, "Mon, 07 Dec 2026 06:40:00 +0000"), (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 +0000"),
    ])
    func dates(seconds: Double, expected: String) {
        #expect(MIMEMessage.rfc5322Date(Date(timeIntervalSince1970: seconds)) == expected)
    }
}
