import LatchkeyHTTP

/// Which of the hosted pages' email flows a page belongs to.
enum EmailPageKind: Sendable, Hashable {
    /// "Forgot password?": a code, then a new password.
    case passwordReset
    /// "Email me a code" on the sign-in page.
    case signIn
    /// "Email me a code" on the sign-up page: the code creates the account when there is none.
    case signUp

    /// The text of the link back to the page the flow started from.
    var backText: String {
        self == .signUp ? "Back to create an account" : "Back to sign in"
    }
}

/// The first page of "Forgot password?" and "Email me a code": the address the code goes to.
/// What follows is the same whether or not the address has an account (docs/reference.md,
/// "Email": no enumeration).
struct EmailAddressPage: Sendable, Hashable {
    var kind: EmailPageKind
    /// The application the user signs in to, when it has a name to show.
    var clientName: String?
    /// Where the form posts, its CSRF token and the request it carries.
    var form: HostedForm
    /// The address typed last time, or the request's `login_hint`.
    var email: String
    /// What went wrong, in words, shown above the form.
    var error: String?
    /// The page the flow started from.
    var backLink: String?

    /// The document.
    func render() -> HTML {
        let (title, lead, submit): (String, String, String) =
            switch kind {
            case .passwordReset:
                ("Reset your password", "Enter the email address of your account. We will email you a code to choose a new password.", "Send code")
            case .signIn: ("Sign in with a code", "Enter the email address of your account. We will email you a code to sign in.", "Email me a code")
            case .signUp: ("Create an account with a code", "Enter your email address. We will email you a code to create your account.", "Email me a code")
            }
        return PageLayout.document(
            title: title,
            body: """
                <h1>\(title)</h1>
                \(PageLayout.continuing(to: clientName))<p>\(lead)</p>
                \(PageLayout.alert(error))\(form.opening)<div class="field">
                <label for="email">Email</label>
                <input type="email" id="email" name="email" value="\(email)" autocomplete="username" autocapitalize="none" spellcheck="false" required>
                </div>
                <button type="submit">\(submit)</button>
                </form>
                \(PageLayout.links([("", backLink, kind.backText)]))
                """)
    }
}
