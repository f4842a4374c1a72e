import FoundationEssentials
import LatchkeyHTTP

/// The console's user list: a search box (a prefix of an email, username or name, or an
/// exact id) and a page of accounts, newest first, with a link to the next page's cursor.
struct ConsoleUsersPage: Sendable {
    var frame: ConsoleFrame
    var query: String
    var page: AdminPage<AdminUserSummary>

    func render() -> HTML {
        let rows = page.rows.map { row -> [HTML] in
            let name = [row.user.givenName, row.user.familyName].compactMap { $0 }.joined(separator: " ")
            return [
                "<a href=\"/admin/users/\(PercentEncoding.encode(row.user.id))\">\(row.user.id)</a>", "\(ConsoleFrame.shown(row.user.email))",
                "\(ConsoleFrame.shown(row.username))", "\(ConsoleFrame.shown(name))", "\(row.methods.joined(separator: ", "))",
                "\(row.factors.joined(separator: ", "))", "\(ConsoleFrame.time(row.lastSignInAt))", row.disabledAt == nil ? "" : "disabled",
            ]
        }
        var next: HTML = ""
        if let cursor = page.next {
            let parameters = [("cursor", cursor)] + (query.isEmpty ? [] : [("query", query)])
            next = "<p><a href=\"/admin/users?\(FormEncoding.encode(parameters))\">Next page</a></p>\n"
        }
        return frame.document(
            title: "Users", current: "/admin/users",
            body: """
                <form class="search" method="get" action="/admin/users" role="search">
                <label for="query" class="hint">Email, username, name or id</label>
                <input type="text" id="query" name="query" value="\(query)" autocapitalize="none" spellcheck="false">
                <button type="submit">Search</button>
                </form>
                \(ConsoleFrame.table(
                    ["Id", "Email", "Username", "Name", "Signs in with", "Factors", "Last sign-in", ""], rows,
                    empty: query.isEmpty ? "No accounts yet." : "No account matches."))\(next)
                """)
    }
}
