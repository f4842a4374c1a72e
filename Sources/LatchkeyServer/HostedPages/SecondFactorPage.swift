package import LatchkeyHTTP

/// The second step of signing in: a code from an authenticator app, a recovery code, or the
/// account's passkey.
package struct SecondFactorPage: Sendable, Hashable {
    /// Where the form posts, its CSRF token and the request it carries.
    package var form: HostedForm
    /// What went wrong, in words (a wrong code, too many attempts).
    package var error: String?
    /// The account's passkey as the second factor, when it has one and the server offers passkeys.
    var passkey: PasskeyForm?

    /// Creates the page.
    package init(form: HostedForm, error: String? = nil) {
        self.form = form
        self.error = error
    }

    /// The document.
    package func render() -> HTML {
        PageLayout.document(
            title: "Enter your code",
            body: """
                <h1>Enter your code</h1>
                <p class="lead">Open your authenticator app and enter the code it shows for this account.</p>
                \(PageLayout.alert(error))\(form.opening)\(PageLayout.codeField(hint: "A recovery code also works here."))<button type="submit">Continue</button>
                </form>
                \(passkey?.render() ?? "")
                """)
    }
}
