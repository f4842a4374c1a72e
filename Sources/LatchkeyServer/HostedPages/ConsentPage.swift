package import LatchkeyHTTP

/// The consent page: what a third-party application asks for, in words, and two buttons that
/// post `decision=allow` or `decision=deny`.
package struct ConsentPage: Sendable, Hashable {
    /// The application that asks.
    package var clientName: String
    /// The scopes it asks for, as requested.
    package var scopes: [String]
    /// Where the form posts, its CSRF token and the request it carries.
    package var form: HostedForm

    /// Creates the page.
    package init(clientName: String, scopes: [String], form: HostedForm) {
        self.clientName = clientName
        self.scopes = scopes
        self.form = form
    }

    /// What granting `scope` lets the application do; an unknown scope is shown as its name.
    static func describe(_ scope: String) -> String {
        switch scope {
        case "openid": "Know who you are on this server (your account's identifier)"
        case "profile": "See your name"
        case "email": "See your email address and whether it is verified"
        case "offline_access": "Stay signed in for you when you are not using it, until you sign out or withdraw access"
        default: scope
        }
    }

    /// The document.
    package func render() -> HTML {
        let items = scopes.map { scope -> HTML in "<li>\(Self.describe(scope))</li>\n" }
        return PageLayout.document(
            title: "Allow access?",
            body: """
                <h1>Allow \(clientName) access?</h1>
                <p class="lead">\(clientName) would like to:</p>
                <ul class="scopes">
                \(items)</ul>
                \(form.opening)<button type="submit" name="decision" value="allow">Allow</button>
                <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
                </form>

                """)
    }
}
