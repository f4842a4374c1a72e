import FoundationEssentials
import LatchkeyHTTP
import LatchkeyStore

/// The console's audit log: filters (user, event, since, until), a page of entries newest
/// first, the next page's link and the export of the same filter as NDJSON.
struct ConsoleAuditPage: Sendable {
    var frame: ConsoleFrame
    /// The filter as typed, by parameter name (`user`, `event`, `since`, `until`).
    var filter: [String: String]
    var page: AdminPage<(id: Int64, entry: AuditLog.Entry)>

    func render() -> HTML {
        let fields = [("user", "User id"), ("event", "Event"), ("since", "Since (RFC 3339)"), ("until", "Until (RFC 3339)")].map { name, label -> HTML in
            """
            <div class="field"><label for="\(name)">\(label)</label>
            <input type="text" id="\(name)" name="\(name)" value="\(filter[name] ?? "")" autocapitalize="none" spellcheck="false"></div>

            """
        }
        let kept = filter.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var links: [HTML] = ["<a href=\"/admin/audit/export\(kept.isEmpty ? "" : "?" + FormEncoding.encode(kept))\">Export as NDJSON</a>"]
        if let cursor = page.next {
            links.append(" · <a href=\"/admin/audit?\(FormEncoding.encode(kept + [("cursor", cursor)]))\">Next page</a>")
        }
        return frame.document(
            title: "Audit log", current: "/admin/audit",
            body: """
                <form method="get" action="/admin/audit">
                \(fields)<button type="submit" class="small">Filter</button>
                </form>
                <p>\(links)</p>
                \(Self.table(page.rows.map(\.entry)))
                """)
    }

    /// Entries as a table: time, user, event, outcome, address and details.
    static func table(_ entries: [AuditLog.Entry]) -> HTML {
        let rows = entries.map { entry -> [HTML] in
            let details = entry.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let user = entry.userID.map { id -> HTML in "<a href=\"/admin/users/\(PercentEncoding.encode(id))\">\(id)</a>" } ?? ""
            return [
                "\(ConsoleFrame.time(entry.time))", user, "\(entry.event.rawValue)", "\(entry.outcome.rawValue)", "\(ConsoleFrame.shown(entry.ip))",
                "\(ConsoleFrame.shown(details))",
            ]
        }
        return ConsoleFrame.table(["Time", "User", "Event", "Outcome", "Address", "Details"], rows, empty: "No entries.")
    }
}
