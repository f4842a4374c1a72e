import FoundationEssentials
import LatchkeyMail

extension ConfigurationLoader {
    /// What is wrong with the mail settings, each problem naming its setting.
    static func smtpProblems(_ email: Configuration.Email) -> [String] {
        var problems: [String] = []
        // `from` and `product_name` end up in message headers: one line, no control characters.
        let hasControl = { (text: String) in text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
        if hasControl(email.from) || MailAddress(parsing: email.from) == nil {
            problems.append("email.from: must be an address, or Name <address>, on one line")
        }
        if hasControl(email.productName) || email.productName.isEmpty || email.productName.utf8.count > 100 {
            problems.append("email.product_name: must be 1 to 100 bytes on one line")
        }
        if let url = email.smtpURL, SMTPServer(url: url) == nil {
            problems.append("email.smtp_url: must be smtp://HOST[:PORT] (STARTTLS), smtps://HOST[:PORT] (TLS) or smtp+plain://HOST[:PORT], "
                + "with no user, password or path")
        }
        let password = email.smtpPasswordFile != nil || email.smtpPassword != nil
        if email.smtpURL == nil, email.smtpUsername != nil || password || email.caFile != nil {
            problems.append("email.smtp_url: must be set for email.smtp_username, email.smtp_password_file or email.ca_file to apply")
        }
        if let username = email.smtpUsername, username.isEmpty || hasControl(username) {
            problems.append("email.smtp_username: must be a name on one line")
        }
        if email.smtpUsername != nil, !password {
            problems.append("email.smtp_username: needs a password, from email.smtp_password_file or LATCHKEY_SMTP_PASSWORD")
        }
        if email.smtpUsername == nil, password {
            problems.append("email.smtp_password_file: a password needs email.smtp_username")
        }
        if email.smtpPasswordFile != nil, email.smtpPassword != nil {
            problems.append("email.smtp_password_file: LATCHKEY_SMTP_PASSWORD holds a password too; keep one")
        }
        if let file = email.smtpPasswordFile, !FileManager.default.isReadableFile(atPath: file) {
            problems.append("email.smtp_password_file: \(file) cannot be read")
        }
        if let file = email.caFile, !FileManager.default.isReadableFile(atPath: file) {
            problems.append("email.ca_file: \(file) cannot be read")
        }
        return problems
    }

    /// A plain-text SMTP relay beyond this machine: mail, codes and the password cross the
    /// network unprotected.
    package static func mailWarnings(_ configuration: Configuration) -> [String] {
        guard let url = configuration.email.smtpURL, let server = SMTPServer(url: url), server.security == .plain, !Configuration.isLoopback(server.host) else {
            return []
        }
        return ["email.smtp_url: \(url) sends mail without TLS to another machine; use smtp:// (STARTTLS) or smtps:// unless the network is yours alone"]
    }
}
