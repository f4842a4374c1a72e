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
        let signUp: HTML = PageLayout.safeURL(signUpLink ?? "") == nil ? "" : """
            <div class="links"><p>No account yet? \(PageLayout.link(signUpLink, "Create one"))</p></div>

            """
        return PageLayout.document(
            title: "Sign in",
            body: """
                <h1>Sign in</h1>
                \(PageLayout.continuing(to: clientName))\(PageLayout.alert(error))\(form.opening)<div class="field">
                <label for="username">Username</label>
                <input type="text" id="username" name="username" value="\(username)" autocomplete="username" autocapitalize="none" spellcheck="false" required>
                </div>
                <div class="field">
                <label for="password">Password</label>
                <input type="password" id="password" name="password" autocomplete="current-password" required>
                </div>
                <button type="submit">Sign in</button>
                </form>
                \(apple)\(signUp)
                """)
    }
}
