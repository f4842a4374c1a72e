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

    /// The document.
    func render() -> HTML {
        let hint: HTML = passwordHint.map { text in "<span class=\"hint\" id=\"password-hint\">\(text)</span>\n" } ?? ""
        let describedBy: HTML = passwordHint == nil ? "" : " aria-describedby=\"password-hint\""
        return PageLayout.document(
            title: title,
            body: """
                <h1>\(title)</h1>
                \(PageLayout.continuing(to: clientName))\(PageLayout.alert(error))\(form.opening)<div class="field">
                <label for="username">Username</label>
                <input type="text" id="username" name="username" value="\(username)" autocomplete="username" autocapitalize="none" spellcheck="false" required>
                </div>
                <div class="field">
                <label for="password">Password</label>
                \(hint)<input type="password" id="password" name="password" autocomplete="\(passwordAutocomplete)"\(describedBy) required>
                </div>
                <button type="submit">\(submit)</button>
                </form>
                \(after)
                """)
    }

    /// "`question` `text`" under the form, `text` linking to the other page; nothing when the
    /// link is missing or unsafe.
    static func otherPage(_ question: String, link: String?, text: String) -> HTML {
        PageLayout.safeURL(link ?? "") == nil ? "" : """
            <div class="links"><p>\(question) \(PageLayout.link(link, text))</p></div>

            """
    }
}
