import FoundationEssentials
import LatchkeyHTTP
import LatchkeyWire

/// The frame of every admin console page (`/admin`): the hosted pages' layout in its wide form,
/// the console's navigation, and the sign-out button. Like every hosted page it has no script,
/// and values reach it only through ``HTML`` interpolation (S63); text a user typed or a browser
/// sent (names, user agents, audit details) also passes ``shown(_:)``.
struct ConsoleFrame: Sendable, Hashable {
    /// The token of the console session's forms (S61).
    var csrfToken: String
    /// The role of the signed-in admin: the navigation leaves out what `support` may not open.
    /// Hiding is a courtesy; every action checks the role itself (S64).
    var role: AdminRole

    /// A whole console page titled `title`, with `current` (a navigation path) marked.
    func document(title: String, current: String, body: HTML) -> HTML {
        var sections = [("/admin", "Overview"), ("/admin/users", "Users"), ("/admin/audit", "Audit log")]
        if role.covers(.admin) { sections += [("/admin/clients", "Clients"), ("/admin/keys", "Keys")] }
        let links = sections.map { path, name -> HTML in
            path == current ? "<a href=\"\(path)\" aria-current=\"page\">\(name)</a>\n" : "<a href=\"\(path)\">\(name)</a>\n"
        }
        return PageLayout.document(
            title: title + " · Latchkey console",
            body: """
                <nav class="console" aria-label="Console">
                \(links)\(form("/admin/sign-out"))<button type="submit" class="secondary small">Sign out</button></form>
                </nav>
                <h1>\(title)</h1>
                \(body)
                """, wide: true)
    }

    /// The opening tag of a form posting to `action` with the CSRF token first, then the
    /// `hidden` fields; the page closes it.
    func form(_ action: String, _ hidden: [HiddenField] = []) -> HTML {
        let fields = [HiddenField(name: HostedForm.csrfFieldName, value: csrfToken)] + hidden
        return "<form class=\"inline\" method=\"post\" action=\"\(PageLayout.safeURL(action) ?? "")\">\n\(fields.map(\.input))"
    }

    /// One button that posts to `action`: a small form of its own.
    func button(_ action: String, _ label: String, _ hidden: [HiddenField] = [], danger: Bool = false) -> HTML {
        "\(form(action, hidden))<button type=\"submit\" class=\"small\(danger ? " danger" : "")\">\(label)</button></form>\n"
    }

    /// `text` with control characters shown as U+FFFD, so a value a user or a browser sent (a
    /// user agent with a carriage return, say) shows as the text it is.
    static func shown(_ text: String?) -> String {
        guard let text else { return "" }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "\u{FFFD}" : $0 }))
    }

    /// A time as RFC 3339 in UTC, or a dash.
    static func time(_ date: Date?) -> String {
        date.map { WireTimestamp($0).rfc3339 } ?? "—"
    }

    /// A table with `headers` and `rows` (each row's cells already markup), scrolling sideways
    /// on a narrow screen; `empty` when there are no rows.
    static func table(_ headers: [String], _ rows: [[HTML]], empty: String) -> HTML {
        guard !rows.isEmpty else { return "<p class=\"lead\">\(empty)</p>\n" }
        let head = headers.map { header -> HTML in "<th scope=\"col\">\(header)</th>" }
        let body = rows.map { cells -> HTML in "<tr>\(cells.map { cell -> HTML in "<td>\(cell)</td>" })</tr>\n" }
        return "<div class=\"table\"><table>\n<thead><tr>\(head)</tr></thead>\n<tbody>\n\(body)</tbody>\n</table></div>\n"
    }
}
