package import LatchkeyHTTP

/// A page that says what went wrong when there is nowhere safe to redirect to (an unknown
/// client, a redirect URI that does not match, S20).
package struct ErrorPage: Sendable, Hashable {
    /// The heading, e.g. "This sign-in link is not valid".
    package var title: String
    /// What happened and what to do, in words.
    package var message: String
    /// "Try again", when trying again may help (an upstream that did not answer).
    package var retryLink: String?

    /// Creates the page.
    package init(title: String, message: String) {
        self.title = title
        self.message = message
    }

    /// The document.
    package func render() -> HTML {
        PageLayout.document(
            title: title,
            body: """
                <h1>\(title)</h1>
                <p role="alert">\(message)</p>
                \(PageLayout.links([("", retryLink, "Try again")]))
                """)
    }
}
