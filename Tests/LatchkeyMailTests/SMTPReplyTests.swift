import LatchkeyMail
import Testing

/// SMTP replies (RFC 5321 §4.2), read strictly: what the SMTP client will believe of a server.
@Suite("SMTP replies")
struct SMTPReplyTests {
    static func parse(_ text: String) throws(SMTPReply.Malformed) -> (reply: SMTPReply, consumed: Int)? {
        try SMTPReply.parse(Array(text.utf8))
    }

    @Test("one-line, code-only and multi-line replies; an EHLO reply's extensions by keyword")
    func wellFormed() throws {
        let greeting = try #require(try Self.parse("220 mail.example ESMTP ready\r\n"))
        #expect(greeting.reply == SMTPReply(code: 220, lines: ["mail.example ESMTP ready"]) && greeting.consumed == 30)
        #expect(greeting.reply.isPositive && !greeting.reply.isTransient && !greeting.reply.isPermanent)
        #expect(try Self.parse("250\r\n")?.reply == SMTPReply(code: 250, lines: [""]))
        let ehlo = "250-mail.example greets you\r\n250-STARTTLS\r\n250-auth PLAIN LOGIN\r\n250-SIZE 35882577\r\n250 SMTPUTF8\r\n"
        let parsed = try #require(try Self.parse(ehlo))
        #expect(parsed.consumed == ehlo.utf8.count && parsed.reply.lines.count == 5)
        #expect(parsed.reply.extensions == ["STARTTLS": [], "AUTH": ["PLAIN", "LOGIN"], "SIZE": ["35882577"], "SMTPUTF8": []])
        #expect(try Self.parse("421 4.3.2 going down\r\n")?.reply.isTransient == true)
        #expect(try Self.parse("554 5.7.1 no\r\n")?.reply.isPermanent == true)
    }

    @Test("a reply cut short needs more bytes; replies back to back are read one at a time")
    func incrementalAndPipelined() throws {
        for partial in ["", "2", "250", "250-first\r\n", "250-first\r\n250 sec", "250 done\r"] {
            #expect(try Self.parse(partial) == nil, "\(partial)")
        }
        let two = "250 2.1.0 ok\r\n250 2.1.5 ok\r\n"
        let first = try #require(try Self.parse(two))
        #expect(first.consumed == 14 && first.reply.lines == ["2.1.0 ok"])
        #expect(try SMTPReply.parse(Array(two.utf8).dropFirst(first.consumed))?.reply.lines == ["2.1.5 ok"])
    }

    @Test("malformed replies are refused, complete or not", arguments: [
        "250-a\r\n251 b\r\n", "abc hello\r\n", "25 hello\r\n", "250xhello\r\n", "250 hi\n", "\n", "250 a\u{01}b\r\n",
        "650 x\r\n", "160 x\r\n", "260 x\r\n", "250 " + String(repeating: "x", count: 600),
        "250 " + String(repeating: "x", count: 600) + "\r\n", String(repeating: "250-x\r\n", count: 64) + "250 end\r\n",
    ])
    func malformed(text: String) {
        #expect(throws: SMTPReply.Malformed.self) { try Self.parse(text) }
    }

    @Test("a line that is not UTF-8 is refused; UTF-8 text (SMTPUTF8) is read as it is")
    func encoding() throws {
        #expect(throws: SMTPReply.Malformed.self) { try SMTPReply.parse(Array("250 caf".utf8) + [0xE9] + Array("\r\n".utf8)) }
        #expect(try Self.parse("250 café ok\r\n")?.reply.lines == ["café ok"])
    }
}
