import FoundationEssentials
import LatchkeyHTTP

/// The console's clients: the list with the form that adds one.
struct ConsoleClientsPage: Sendable {
    var frame: ConsoleFrame
    var clients: [OAuthClient]

    func render() -> HTML {
        let rows = clients.map { client -> [HTML] in
            [
                "<a href=\"/admin/clients/\(PercentEncoding.encode(client.id))\">\(client.id)</a>", "\(ConsoleFrame.shown(client.name))",
                "\(client.isConfidential ? "confidential" : "public")\(client.isFirstParty ? ", first-party" : "")",
                "\(client.redirectURIs.joined(separator: " "))", "\(ConsoleFrame.time(client.createdAt))",
            ]
        }
        return frame.document(
            title: "Clients", current: "/admin/clients",
            body: """
                \(ConsoleFrame.table(["Id", "Name", "Kind", "Redirect URIs", "Created"], rows, empty: "No clients."))
                <h2>Add a client</h2>
                \(frame.form("/admin/clients"))<div class="field"><label for="name">Name</label>
                <input type="text" id="name" name="name" required></div>
                <div class="field"><label for="redirect_uris">Redirect URIs</label>
                <span class="hint" id="redirect-hint">Separated by spaces</span>
                <input type="text" id="redirect_uris" name="redirect_uris" aria-describedby="redirect-hint" autocapitalize="none" spellcheck="false" required></div>
                <div class="field"><label><input type="checkbox" name="confidential" value="true"> Confidential (gets a secret)</label></div>
                <button type="submit" class="small">Add</button></form>
                """)
    }
}

/// One client in the console: its facts, the form that edits its redirect URIs, and the links
/// to rotate its secret and to remove it; or, once, its new secret.
struct ConsoleClientPage: Sendable {
    var frame: ConsoleFrame
    var client: OAuthClient
    /// A secret just made: shown this once, never again.
    var secret: String?
    var notice: String?

    func render() -> HTML {
        let base = "/admin/clients/" + PercentEncoding.encode(client.id)
        let facts: [(String, String)] = [
            ("Id", client.id), ("Name", ConsoleFrame.shown(client.name)), ("Kind", client.isConfidential ? "confidential" : "public"),
            ("First-party", client.isFirstParty ? "yes" : "no"), ("Scopes", client.scopes.sorted().joined(separator: " ")),
            ("Grant types", client.grantTypes.map(\.rawValue).sorted().joined(separator: " ")), ("Created", ConsoleFrame.time(client.createdAt)),
        ]
        var shownSecret: HTML = ""
        if let secret {
            shownSecret = """
                <p class="alert" role="status">The client's secret, shown this once: copy it now.</p>
                <code class="secret" id="client-secret">\(secret)</code>

                """
        }
        var links: [HTML] = []
        if client.isConfidential { links.append("<a class=\"button small secondary\" href=\"\(base)/confirm/rotate-secret\">Rotate the secret</a>\n") }
        links.append("<a class=\"button small danger\" href=\"\(base)/confirm/remove\">Remove the client</a>\n")
        return frame.document(
            title: ConsoleFrame.shown(client.name), current: "/admin/clients",
            body: """
                \(notice.map { "<p class=\"lead\" role=\"status\">\($0)</p>\n" as HTML } ?? "")\(shownSecret)<dl class="facts">
                \(facts.map { name, value -> HTML in "<dt>\(name)</dt><dd>\(value)</dd>\n" })</dl>
                <h2>Redirect URIs</h2>
                \(frame.form(base + "/redirect-uris"))<div class="field"><label for="redirect_uris">Separated by spaces</label>
                <input type="text" id="redirect_uris" name="redirect_uris" value="\(client.redirectURIs.joined(separator: " "))" autocapitalize="none" spellcheck="false" required></div>
                <button type="submit" class="small">Save</button></form>
                <p>\(links)</p>
                """)
    }
}
