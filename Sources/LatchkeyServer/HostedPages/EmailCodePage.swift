import LatchkeyHTTP

/// The second page of "Forgot password?" and "Email me a code": the 6-digit code from the
/// message (`autocomplete="one-time-code"`) and, for a reset, the new password
/// (`new-password`). The address shows in a read-only `username` field, so that a password
/// manager saves the new password for the right account.
///
/// It says the same whether or not the address has an account: "if an account uses it, we
/// sent a code".
struct EmailCodePage: Sendable, Hashable {
    var kind: EmailPageKind
    /// The application the user signs in to, when it has a name to show.
    var clientName: String?
    /// Where the form posts, its CSRF token and the request it carries.
    var form: HostedForm
    /// The address the code went to, as the first page normalised it.
    var email: String
    /// How long the code works (`email.code_ttl`), in minutes.
    var minutes: Int
    /// What went wrong, in words (a wrong code, a refused password), shown above the form.
    var error: String?
    /// The first page again, to ask for a new code.
    var newCodeLink: String?
    /// The page the flow started from.
    var backLink: String?

    /// The document.
    func render() -> HTML {
        let (title, lead, submit): (String, String, String) =
            switch kind {
            case .passwordReset:
                ("Choose a new password", "If an account uses this address, we sent it a message with a 6-digit code.", "Set password and sign in")
            case .signIn: ("Check your email", "If an account uses this address, we sent it a message with a 6-digit code.", "Sign in")
            case .signUp: ("Check your email", "We sent a message with a 6-digit code to this address.", "Continue")
            }
        let password: HTML =
            kind == .passwordReset
            ? PasswordForm.passwordField(label: "New password", autocomplete: "new-password", hint: PasswordForm.newPasswordHint) : ""
        return PageLayout.document(
            title: title,
            body: """
                <h1>\(title)</h1>
                \(PageLayout.continuing(to: clientName))<p>\(lead)</p>
                \(PageLayout.alert(error))\(form.opening)<div class="field">
                <label for="username">Email</label>
                <input type="email" id="username" name="username" value="\(email)" autocomplete="username" readonly>
                </div>
                \(PageLayout.codeField(hint: "It is in the message, and works once, for \(minutes) minutes."))\(password)<button type="submit">\(submit)</button>
                </form>
                \(PageLayout.links([("Did not get it?", newCodeLink, "Send a new code"), ("", backLink, kind.backText)]))
                """)
    }
}
