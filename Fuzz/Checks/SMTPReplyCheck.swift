import LatchkeyMail

extension FuzzTarget {
    /// The SMTP reply parser.
    ///
    /// Properties: an accepted reply took at most the input; written back canonically it parses
    /// to the same reply, taking exactly what was written; every proper prefix of the bytes it took
    /// asks for more rather than giving another answer.
    public static let smtpReply = FuzzTarget(name: "smtp-reply") { (input) throws(PropertyFailure) in
        guard let parsed = try? SMTPReply.parse(input) else { return .refused }
        let (reply, consumed) = parsed
        try require(consumed > 0 && consumed <= input.count, "a reply took more bytes than it was given")
        let written = reply.lines.enumerated().map { index, line in
            String(reply.code) + (index == reply.lines.count - 1 ? " " : "-") + line + "\r\n"
        }.joined()
        let again = try? SMTPReply.parse(Array(written.utf8))
        try require(again?.reply == reply && again?.consumed == written.utf8.count, "a reply written back does not parse the same")
        for cut in Set([consumed / 2, consumed - 1]) {
            let partial: (reply: SMTPReply, consumed: Int)?
            do {
                partial = try SMTPReply.parse(input.prefix(cut))
            } catch {
                throw PropertyFailure("a prefix of a whole reply is refused")
            }
            try require(partial == nil, "a prefix of a whole reply does not wait for more")
        }
        return .accepted
    }
}
