package import LatchkeyHTTP

/// The sign-in page: username and password, ready for password managers' AutoFill, and links to
/// a password reset, a sign-in code by email, signing up and Sign in with Apple.
package struct SignInPage: Sendable, Hashable {
    /// The application the user signs in to, when it has a name to show.
    package var clientName: String?
    /// Where the form posts, its CSRF token and the request it carries.
    package var form: HostedForm
    /// The username typed last time, kept after an error; the password never is.
    package var username: String
    /// What went wrong, in words, shown above the form.
    package var error: String?
    /// Where the sign-up page is, when sign-up is open.
    package var signUpLink: String?
    /// Where Sign in with Apple starts, when it is configured for the web.
    package var appleLink: String?
    /// Where "Forgot password?" leads, when mail can be sent and passwords are on.
    package var forgotPasswordLink: String?
    /// Where "Email me a code" leads, when mail can be sent.
    package var emailCodeLink: String?
    /// "Continue with …", one button per upstream provider.
    var providers: [ProviderButton] = []
    /// "Sign in with a passkey" and AutoFill's passkeys, when the server offers passkeys.
    var passkey: PasskeyForm?

    /// Creates the page.
    package init(
        clientName: String? = nil, form: HostedForm, username: String = "", error: String? = nil, signUpLink: String? = nil,
        appleLink: String? = nil, forgotPasswordLink: String? = nil, emailCodeLink: String? = nil
    ) {
        self.clientName = clientName
        self.form = form
        self.username = username
        self.error = error
        self.signUpLink = signUpLink
        self.appleLink = appleLink
        self.forgotPasswordLink = forgotPasswordLink
        self.emailCodeLink = emailCodeLink
    }

    /// The document.
    package func render() -> HTML {
        let after: HTML = """
            \(PageLayout.links([("", forgotPasswordLink, "Forgot password?")]))\
            \(PasswordForm.alternatives([(emailCodeLink, "Email me a code"), (appleLink, "Sign in with Apple")] + providers.map(\.alternative)))\
            \(PasswordForm.otherPage("No account yet?", link: signUpLink, text: "Create one"))
            """
        return PasswordForm(
            title: "Sign in", clientName: clientName, form: form, username: username, error: error, passwordAutocomplete: "current-password",
            submit: "Sign in", after: after, passkey: passkey
        ).render()
    }
}
