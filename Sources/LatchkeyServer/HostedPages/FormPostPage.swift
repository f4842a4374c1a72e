import LatchkeyCrypto
package import LatchkeyHTTP

/// The authorization response as a form the browser posts to the client's redirect URI
/// (OAuth 2.0 Form Post Response Mode): posted at once by a one-line script the page's policy
/// allows by its hash, or by the button where scripts are off.
package struct FormPostPage: Sendable, Hashable {
    /// The registered redirect URI the form posts to.
    package var redirectURI: String
    package var fields: [HiddenField]

    package init(redirectURI: String, fields: [HiddenField]) {
        self.redirectURI = redirectURI
        self.fields = fields
    }

    /// The script that submits the form, and its hash for `script-src`.
    static let script = "document.forms[0].submit();"
    static let scriptHash = "'sha256-" + Base64.encode(HashFunction.sha256.hash(Array(script.utf8)), padded: true) + "'"

    /// The document.
    package func render() -> HTML {
        let inputs = fields.map { field -> HTML in "<input type=\"hidden\" name=\"\(field.name)\" value=\"\(field.value)\">\n" }
        return PageLayout.document(
            title: "Continuing",
            body: """
                <h1>Continuing…</h1>
                <form method="post" action="\(redirectURI)">
                \(inputs)<button type="submit">Continue</button>
                </form>
                <script>\(HTML(stringLiteral: Self.script))</script>

                """)
    }
}
