import LatchkeyHTTP

/// What the sign-in and sign-up pages share: the heading, the application's name, the error,
/// and the form with a username and a password field that password managers' AutoFill
/// understands (HTML Living Standard §4.10.18.7, `autocomplete`). The pages differ only in the
/// parameters.
struct PasswordForm {
    /// The page's title, which is also its heading.
    var title: String
    var clientName: String?
    var form: HostedForm
    /// The username kept after an error; the password never is.
    var username: String
    var error: String?
    /// `current-password` to sign in; `new-password` to sign up, so that a password manager
    /// offers a strong one and saves it.
    var passwordAutocomplete: String
    /// A line under the password's label, tied to the field by `aria-describedby`.
    var passwordHint: String?
    /// The submit button's label.
    var submit: String
    /// What follows the form: Sign in with Apple, the link to the other page.
    var after: HTML
    /// The passkey's button under the form, when the server offers passkeys.
    var passkey: PasskeyForm? = nil

    /// `username`, and `username webauthn` when the page offers a passkey to AutoFill
    /// (conditional mediation, WebAuthn L3 §5.1.4.1).
    var usernameAutocomplete: String {
        passkey?.conditional == true ? "username webauthn" : "username"
    }

    /// The document.
    func render() -> HTML {
        PageLayout.document(
            title: title,
            body: """
                <h1>\(title)</h1>
                \(PageLayout.continuing(to: clientName))\(PageLayout.alert(error))\(form.opening)<div class="field">
                <label for="username">Username</label>
                <input type="text" id="username" name="username" value="\(username)" autocomplete="\(usernameAutocomplete)" autocapitalize="none" spellcheck="false" required>
                </div>
                \(Self.passwordField(label: "Password", autocomplete: passwordAutocomplete, hint: passwordHint))<button type="submit">\(submit)</button>
                </form>
                \(passkey?.render() ?? "")\(after)
                """)
    }

    /// The hint under a new password's label.
    static let newPasswordHint = "At least 8 characters; a long phrase is best."

    /// A password field with its label and, when there is one, a hint tied to it by
    /// `aria-describedby`. The field never carries a value.
    static func passwordField(label: String, autocomplete: String, hint: String?) -> HTML {
        let hintLine: HTML = hint.map { text in "<span class=\"hint\" id=\"password-hint\">\(text)</span>\n" } ?? ""
        let describedBy: HTML = hint == nil ? "" : " aria-describedby=\"password-hint\""
        return """
            <div class="field">
            <label for="password">\(label)</label>
            \(hintLine)<input type="password" id="password" name="password" autocomplete="\(autocomplete)"\(describedBy) required>
            </div>

            """
    }

    /// The other ways in, as buttons after an "or" under the form (an emailed code, Sign in with
    /// Apple); nothing when every link is missing or unsafe.
    static func alternatives(_ links: [(url: String?, text: String)]) -> HTML {
        let buttons = links.map { PageLayout.link($0.url, $0.text, button: true) }.filter { !$0.text.isEmpty }
        guard !buttons.isEmpty else { return "" }
        return "<p class=\"separator\">or</p>\n\(buttons)"
    }

    /// "`question` `text`" under the form, `text` linking to the other page; nothing when the
    /// link is missing or unsafe.
    static func otherPage(_ question: String, link: String?, text: String) -> HTML {
        PageLayout.links([(question, link, text)])
    }
}

/// The button of an upstream provider on the sign-in and sign-up pages.
struct ProviderButton: Sendable, Hashable {
    /// The authorization endpoint with `provider` set.
    var link: String
    /// The provider's `display_name`.
    var name: String

    var alternative: (url: String?, text: String) { (link, "Continue with " + name) }
}
