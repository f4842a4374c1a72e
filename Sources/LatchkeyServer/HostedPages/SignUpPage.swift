package import LatchkeyHTTP

/// The sign-up page: a new username and password (`autocomplete="new-password"`, so password
/// managers offer a strong one and save it), or an account made by a code sent by email.
package struct SignUpPage: Sendable, Hashable {
    /// The application the user signs up for, when it has a name to show.
    package var clientName: String?
    /// Where the form posts, its CSRF token and the request it carries.
    package var form: HostedForm
    /// The username typed last time, kept after an error; the password never is.
    package var username: String
    /// What went wrong, in words (a taken username, a password the policy refuses).
    package var error: String?
    /// Where the sign-in page is, for those who have an account.
    package var signInLink: String?
    /// Where "Email me a code" leads (an account without a password), when mail can be sent.
    package var emailCodeLink: String?
    /// "Continue with …", one button per upstream provider.
    var providers: [ProviderButton] = []
    /// "Create with a passkey", when the server offers passkeys.
    var passkey: PasskeyForm?

    /// Creates the page.
    package init(
        clientName: String? = nil, form: HostedForm, username: String = "", error: String? = nil, signInLink: String? = nil,
        emailCodeLink: String? = nil
    ) {
        self.clientName = clientName
        self.form = form
        self.username = username
        self.error = error
        self.signInLink = signInLink
        self.emailCodeLink = emailCodeLink
    }

    /// The document.
    package func render() -> HTML {
        PasswordForm(
            title: "Create an account", clientName: clientName, form: form, username: username, error: error,
            passwordAutocomplete: "new-password", passwordHint: PasswordForm.newPasswordHint, submit: "Create account",
            after: """
                \(PasswordForm.alternatives([(emailCodeLink, "Email me a code")] + providers.map(\.alternative)))\
                \(PasswordForm.otherPage("Have an account?", link: signInLink, text: "Sign in"))
                """, passkey: passkey
        ).render()
    }
}
