import FoundationEssentials
import LatchkeyServer

/// `latchkey mail test`: one message through the configured SMTP server, now.
enum MailCommand {
    static let test = Command(
        path: ["mail", "test"], summary: "Send one message through the configured SMTP server.",
        options: [ServeCommands.configOption, Option(name: "to", valueName: "ADDRESS", help: "the recipient (required)")],
        details: """
            Sends a short message from email.from to ADDRESS through email.smtp_url, with the
            TLS, CA file and credentials serve would use, and says whether the server took it.
            It does not go through the outbox and leaves nothing in the database. The password
            is never printed.
            """
    ) { arguments in
        guard let address = arguments[option: "to"] else { throw UsageError(message: "mail test needs --to ADDRESS") }
        let configuration = try ServeCommands.loadConfiguration(arguments, dev: false)
        do {
            let server = try await MailTest.send(to: address, configuration: configuration, now: Date())
            print("sent to \(address) through \(server)")
            return 0
        } catch let failure as MailDeliveryFailure {
            printError("latchkey: mail test: not sent: \(failure.reason)")
            return 1
        }
    }
}
