package import LatchkeyHTTP

/// Asks before signing out: shown for a logout request that does not prove the signed-in user
/// asked for it (no `id_token_hint` of theirs), so a link from any site cannot sign anyone out
/// (RP-Initiated Logout 1.0 §6). The button posts the form back to the logout endpoint.
package struct SignOutPage: Sendable, Hashable {
    /// Where the form posts, its CSRF token and the logout request it carries.
    package var form: HostedForm

    /// Creates the page.
    package init(form: HostedForm) {
        self.form = form
    }

    /// The document.
    package func render() -> HTML {
        PageLayout.document(
            title: "Sign out?",
            body: """
                <h1>Sign out?</h1>
                <p class="lead">Do you want to sign out of this server? Applications that use it will ask you to sign in again.</p>
                \(form.opening)<button type="submit">Sign out</button>
                </form>

                """)
    }
}
