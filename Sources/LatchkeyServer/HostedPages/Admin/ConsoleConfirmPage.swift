import LatchkeyHTTP

/// The confirmation step of a console action: what is about to happen, and the one form that
/// does it (its CSRF token and the action's fields), or the way back.
struct ConsoleConfirmPage: Sendable {
    var frame: ConsoleFrame
    /// The navigation section the action belongs to.
    var section: String
    var title: String
    var question: String
    /// Where the form posts, and its fields besides the CSRF token.
    var action: String
    var hidden: [HiddenField]
    var button: String
    var danger: Bool
    var back: String

    func render() -> HTML {
        frame.document(
            title: title, current: section,
            body: """
                <p>\(question)</p>
                \(frame.form(action, hidden))<button type="submit" class="small\(danger ? " danger" : "")">\(button)</button></form>
                \(PageLayout.link(back, "Cancel", button: true))
                """)
    }
}
