/// The compiled-in messages, in English and French, in the format of `email.templates_dir`
/// (``MailTemplate``), so that a file there replaces one of them part for part. Each flow's
/// message has both the link and the 6-digit code, because the mail is read on another device as
/// often as on the phone.
enum MailTemplates {
    /// Every compiled-in source: locale, template, part.
    static let sources: [MailLocale: [MailTemplateName: [MailTemplatePart: String]]] = [
        .english: english,
        .french: french,
    ]

    /// The words of one language that every flow's message shares.
    private struct Words {
        /// The HTML's start tag, `<html>` or `<html lang="…">`.
        var html: String
        var code: String
        var link: String
        var closing: String
    }

    /// The three parts of a flow's message.
    private static func flow(_ words: Words, subject: String, opening: String, action: String) -> [MailTemplatePart: String] {
        [
            .subject: subject,
            .text: """
                \(opening)

                \(words.code){{code}}

                \(words.link)
                {{link}}

                \(words.closing)

                {{product_name}}
                """,
            .html: """
                <!DOCTYPE html>\(words.html)<body style="font-family: -apple-system, sans-serif">\
                <p>\(opening)</p>\
                <p style="font-size: 28px; letter-spacing: 4px"><strong>{{code}}</strong></p>\
                <p><a href="{{link}}">\(action)</a></p>\
                <p>\(words.closing)</p><p>{{product_name}}</p></body></html>
                """,
        ]
    }

    /// The notice to the old address: no link, nothing to do.
    private static func notice(html: String, subject: String, body: String) -> [MailTemplatePart: String] {
        [
            .subject: subject,
            .text: body + "\n\n{{product_name}}",
            .html: "<!DOCTYPE html>\(html)<body><p>\(body)</p><p>{{product_name}}</p></body></html>",
        ]
    }

    private static let english: [MailTemplateName: [MailTemplatePart: String]] = {
        let words = Words(
            html: "<html>", code: "Your code: ", link: "Or open this link:",
            closing: "The code and the link work once, for {{minutes}} minutes. If you did not ask for this, ignore this message.")
        return [
            .verify: flow(
                words, subject: "Confirm your email for {{product_name}}", opening: "Confirm that this address is yours.", action: "Confirm email"),
            .reset: flow(
                words, subject: "Reset your {{product_name}} password", opening: "Someone asked to reset the password of your account.",
                action: "Choose a new password"),
            .signIn: flow(words, subject: "Your {{product_name}} sign-in code", opening: "Use this code or link to sign in.", action: "Sign in"),
            .change: flow(
                words, subject: "Confirm your new email for {{product_name}}",
                opening: "Confirm that your account should use this address from now on.", action: "Confirm new email"),
            .changeNotice: notice(
                html: "<html>", subject: "Your {{product_name}} email was changed",
                body: "The email address of your {{product_name}} account was changed. If you did not do this, contact support."),
        ]
    }()

    // French typography: a no-break space before a colon, and the typographic apostrophe.
    private static let french: [MailTemplateName: [MailTemplatePart: String]] = {
        let words = Words(
            html: "<html lang=\"fr\">", code: "Votre code\u{A0}: ", link: "Ou ouvrez ce lien\u{A0}:",
            closing: "Le code et le lien ne servent qu’une fois, pendant {{minutes}} minutes. "
                + "Si vous n’êtes pas à l’origine de cette demande, ignorez ce message.")
        return [
            .verify: flow(
                words, subject: "Confirmez votre adresse e-mail pour {{product_name}}", opening: "Confirmez que cette adresse est bien la vôtre.",
                action: "Confirmer l’adresse"),
            .reset: flow(
                words, subject: "Réinitialisez votre mot de passe {{product_name}}",
                opening: "Quelqu’un a demandé la réinitialisation du mot de passe de votre compte.", action: "Choisir un nouveau mot de passe"),
            .signIn: flow(
                words, subject: "Votre code de connexion {{product_name}}", opening: "Utilisez ce code ou ce lien pour vous connecter.",
                action: "Se connecter"),
            .change: flow(
                words, subject: "Confirmez votre nouvelle adresse e-mail pour {{product_name}}",
                opening: "Confirmez que votre compte doit désormais utiliser cette adresse.", action: "Confirmer la nouvelle adresse"),
            .changeNotice: notice(
                html: "<html lang=\"fr\">", subject: "L’adresse e-mail de votre compte {{product_name}} a changé",
                body: "L’adresse e-mail de votre compte {{product_name}} a été modifiée. "
                    + "Si vous n’êtes pas à l’origine de ce changement, contactez le support."),
        ]
    }()
}
