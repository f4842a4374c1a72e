import FoundationEssentials
import LatchkeyJSON
import LatchkeyMail

/// One message to deliver: its recipient, subject and its text and HTML bodies.
///
/// The recipient is a normalised address (``Username``'s rule: no white space or control
/// characters), and the subject comes from a template, never from a request, so nothing a
/// client sends can reach a header line.
struct MailMessage: Sendable, Hashable {
    var to: String
    var subject: String
    var text: String
    var html: String
    /// Which template made it: the `purpose` label of the mail metrics.
    var purpose: String

    var json: JSONValue {
        ["to": .string(to), "subject": .string(subject), "text": .string(text), "html": .string(html), "purpose": .string(purpose)]
    }

    init(to: String, subject: String, text: String, html: String, purpose: String) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.purpose = purpose
    }

    /// Reads a message back from its ``json``.
    init(json: JSONValue) throws {
        guard let to = json["to"]?.stringValue, let subject = json["subject"]?.stringValue, let text = json["text"]?.stringValue,
            let html = json["html"]?.stringValue, let purpose = json["purpose"]?.stringValue
        else { throw MailMessageError() }
        self.init(to: to, subject: subject, text: text, html: html, purpose: purpose)
    }

    struct MailMessageError: Error {}
}

/// Delivers messages: to the SMTP server (``SMTPMailTransport``), or in development mode to the
/// sandbox mailbox (``DevelopmentMailbox``).
protocol MailTransport: Sendable {
    /// Sends one message.
    ///
    /// - Throws: ``MailDeliveryFailure``; a permanent one drops the message.
    func send(_ message: MailMessage, from sender: String) async throws(MailDeliveryFailure)
}

/// Why a delivery failed, and whether trying again can help (an SMTP 5xx cannot).
package struct MailDeliveryFailure: Error, Sendable {
    package var permanent: Bool
    /// For the outbox's `last_error` and the log: never holds the message or a secret.
    package var reason: String
}

extension MIMEMessage {
    /// `message` from `sender` (`email.from`), or `nil` when either address is not one.
    init?(_ message: MailMessage, from sender: String, date: Date) {
        guard let from = MailAddress(parsing: sender), let to = MailAddress(message.to) else { return nil }
        self.init(from: from, to: to, subject: message.subject, text: message.text, html: message.html, date: date)
    }
}
