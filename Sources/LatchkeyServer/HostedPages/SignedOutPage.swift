package import LatchkeyHTTP

/// Shown after signing out on the hosted pages.
package struct SignedOutPage: Sendable, Hashable {
    /// Where to go back to (the application's post-logout address), when there is one.
    package var returnLink: String?

    /// Creates the page.
    package init(returnLink: String? = nil) {
        self.returnLink = returnLink
    }

    /// The document.
    package func render() -> HTML {
        PageLayout.document(
            title: "Signed out",
            body: """
                <h1>You are signed out</h1>
                <p>You can close this window.</p>
                \(PageLayout.link(returnLink, "Return to the application", button: true))
                """)
    }
}
