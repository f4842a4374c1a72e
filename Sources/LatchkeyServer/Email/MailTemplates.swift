import LatchkeyBasics

/// The messages of the email flows, in English: each has both the link and the 6-digit code,
/// because the mail is read on another device as often as on the phone.
struct MailTemplates: Sendable {
    /// The product name that signs the messages (`email.product_name`).
    var productName: String

    /// The message that carries a flow's link and code.
    func message(for purpose: EmailPurpose, to address: String, link: String, code: String, minutes: Int) -> MailMessage {
        let (subject, opening, action): (String, String, String) =
            switch purpose {
            case .verify: ("Confirm your email for \(productName)", "Confirm that this address is yours.", "Confirm email")
            case .reset: ("Reset your \(productName) password", "Someone asked to reset the password of your account.", "Choose a new password")
            case .signIn: ("Your \(productName) sign-in code", "Use this code or link to sign in.", "Sign in")
            case .change: ("Confirm your new email for \(productName)", "Confirm that your account should use this address from now on.", "Confirm new email")
            }
        let closing = "The code and the link work once, for \(minutes) minutes. If you did not ask for this, ignore this message."
        let text = """
            \(opening)

            Your code: \(code)

            Or open this link:
            \(link)

            \(closing)

            \(productName)
            """
        let html = """
            <!DOCTYPE html><html><body style="font-family: -apple-system, sans-serif">\
            <p>\(HTMLEscaping.escape(opening))</p>\
            <p style="font-size: 28px; letter-spacing: 4px"><strong>\(HTMLEscaping.escape(code))</strong></p>\
            <p><a href="\(HTMLEscaping.escape(link))">\(HTMLEscaping.escape(action))</a></p>\
            <p>\(HTMLEscaping.escape(closing))</p><p>\(HTMLEscaping.escape(productName))</p></body></html>
            """
        return MailMessage(to: address, subject: subject, text: text, html: html, purpose: purpose.rawValue)
    }

    /// The notice to the old address when an account's email changed: no link, nothing to do.
    func changeNotice(to address: String) -> MailMessage {
        let body = "The email address of your \(productName) account was changed. If you did not do this, contact support."
        return MailMessage(
            to: address, subject: "Your \(productName) email was changed", text: body + "\n\n" + productName,
            html: "<!DOCTYPE html><html><body><p>\(HTMLEscaping.escape(body))</p><p>\(HTMLEscaping.escape(productName))</p></body></html>",
            purpose: "change_notice")
    }
}
