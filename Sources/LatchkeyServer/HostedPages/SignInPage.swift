package import LatchkeyHTTP

/// The sign-in page: username and password, ready for password managers' AutoFill, and links to
/// signing up and to Sign in with Apple.
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

    /// Creates the page.
    package init(
        clientName: String? = nil, form: HostedForm, username: String = "", error: String? = nil, signUpLink: String? = nil,
        appleLink: String? = nil
    ) {
        self.clientName = clientName
        self.form = form
        self.username = username
        self.error = error
        self.signUpLink = signUpLink
        self.appleLink = appleLink
    }

    /// The document.
    package func render() -> HTML {
        let apple: HTML = PageLayout.safeURL(appleLink ?? "") == nil ? "" : """
            <p class="separator">or</p>
            \(PageLayout.link(appleLink, "Sign in with Apple", button: true))
            """
        return PasswordForm(
            title: "Sign in", clientName: clientName, form: form, username: username, error: error, passwordAutocomplete: "current-password",
            submit: "Sign in", after: "\(apple)\(PasswordForm.otherPage("No account yet?", link: signUpLink, text: "Create one"))"
        ).render()
    }
}
