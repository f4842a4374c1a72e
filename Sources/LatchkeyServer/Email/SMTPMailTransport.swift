package import FoundationEssentials
import LatchkeyBasics
import LatchkeyJSON
import LatchkeyMail
import Synchronization

/// Delivers the outbox's mail to the SMTP server of `email.smtp_url`.
///
/// An outage (no connection, TLS failing, no answer, 421) is said once, not once per message:
/// one `smtp_unavailable` log line when it starts and one `smtp_recovered` when a message goes
/// again, and the gauge `latchkey_email_smtp_up` in between. Readiness (`/readyz`) does not look
/// at SMTP: the outbox keeps the mail, and sign-in has nothing to do with it.
final class SMTPMailTransport: MailTransport {
    let client: SMTPClient
    private let clock: @Sendable () -> Date
    /// When the current outage started, as a Unix time; 0 while the server takes mail.
    private let outageSince = Atomic<Int64>(0)

    /// The transport of `email.smtp_url`, with its credentials and CA file.
    ///
    /// - Throws: ``ConfigurationError`` naming the setting whose file cannot be read or used.
    init(configuration: Configuration, helloName: String, metrics: Metrics, clock: @escaping @Sendable () -> Date) throws(ConfigurationError) {
        let email = configuration.email
        guard let url = email.smtpURL, let server = SMTPServer(url: url) else {
            throw ConfigurationError(problems: ["email.smtp_url: not an SMTP URL"])
        }
        var password = email.smtpPassword
        if let file = email.smtpPasswordFile { password = try ConfigurationLoader.password(fromFile: file, setting: "email.smtp_password_file") }
        do {
            client = try SMTPClient(
                configuration: .init(server: server, username: email.smtpUsername, password: password, caFile: email.caFile, helloName: helloName))
        } catch {
            throw ConfigurationError(problems: ["email.ca_file: \(error.reason)"])
        }
        self.clock = clock
        metrics.gauge(.smtpUp, [:]) { self.outageSince.load(ordering: .relaxed) == 0 ? 1 : 0 }
    }

    func send(_ message: MailMessage, from sender: String) async throws(MailDeliveryFailure) {
        let now = clock()
        guard let mime = MIMEMessage(message, from: sender, date: now) else {
            throw MailDeliveryFailure(permanent: true, reason: "the recipient is not a usable address")
        }
        do {
            try await client.send(mime)
        } catch {
            if error.isOutage, outageSince.compareExchange(expected: 0, desired: max(1, Int64(now.timeIntervalSince1970)), ordering: .relaxed).exchanged {
                ServerLog.write(.warning, "smtp_unavailable", time: now, ["server": .string("\(client.configuration.server)"), "reason": .string(error.reason)])
            }
            throw MailDeliveryFailure(permanent: error.isPermanent, reason: error.reason)
        }
        let since = outageSince.exchange(0, ordering: .relaxed)
        if since != 0 {
            ServerLog.write(
                .info, "smtp_recovered", time: now,
                ["server": .string("\(client.configuration.server)"), "outage_seconds": .number(Double(Int64(now.timeIntervalSince1970) - since))])
        }
    }
}

/// `latchkey mail test`.
package enum MailTest {
    /// `latchkey mail test`: sends one message to `address` through the SMTP server of
    /// `configuration`, outside the outbox, so an operator sees at once whether mail goes.
    ///
    /// - Returns: The server it went to, for the operator.
    /// - Throws: ``ConfigurationError`` for settings that cannot work (no `email.smtp_url`, an
    ///   address that is not one); ``MailDeliveryFailure`` with the server's reason.
    package static func send(to address: String, configuration: Configuration, now: Date) async throws -> String {
        guard configuration.email.smtpURL != nil else { throw ConfigurationError(problems: ["email.smtp_url: not set, so there is no SMTP server to test"]) }
        guard MailAddress(address) != nil else { throw ConfigurationError(problems: ["--to: \(address) is not an email address"]) }
        let host = configuration.publicURL.flatMap { URL(string: $0)?.host } ?? "localhost"
        let transport = try SMTPMailTransport(configuration: configuration, helloName: host, metrics: Metrics(), clock: { now })
        let product = configuration.email.productName
        let text = "This message was sent by `latchkey mail test` at \(MIMEMessage.rfc5322Date(now)) to check the mail settings of \(product).\n"
        let message = MailMessage(
            to: address, subject: "\(product): test message", text: text, html: "<p>" + HTMLEscaping.escape(text) + "</p>", purpose: "test")
        try await transport.send(message, from: configuration.email.from)
        return "\(transport.client.configuration.server)"
    }
}
