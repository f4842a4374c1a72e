import FoundationEssentials
import LatchkeyHTTP

/// One account in the console: its facts, identities, passkeys, device keys, TOTP, live
/// sessions, grants and newest audit entries, and a button for each action. A button opens the
/// action's confirmation page (``ConsoleConfirmPage``); the action is done only by its form.
struct ConsoleUserPage: Sendable {
    var frame: ConsoleFrame
    var detail: AdminUserDetail
    /// Whether mail can be delivered, so a password reset can be sent.
    var canSendMail: Bool
    /// What the last action did, in words; nothing when the page was opened.
    var notice: String?

    /// The actions of the page, by the last segment of their path, and what each says it did.
    static let notices = [
        "end-session": "The session ended.", "end-sessions": "Every session ended.", "disable": "The account is disabled.",
        "enable": "The account is enabled.", "password-reset": "A password reset message is on its way.", "remove-factor": "The factor is removed.",
    ]

    func render() -> HTML {
        let summary = detail.summary
        let user = summary.user
        let base = "/admin/users/" + PercentEncoding.encode(user.id)
        let facts: [(String, String)] = [
            ("Id", user.id), ("Email", ConsoleFrame.shown(user.email)), ("Username", ConsoleFrame.shown(summary.username)),
            ("Given name", ConsoleFrame.shown(user.givenName)), ("Family name", ConsoleFrame.shown(user.familyName)),
            ("Created", ConsoleFrame.time(user.createdAt)), ("Last sign-in", ConsoleFrame.time(summary.lastSignInAt)),
            ("Signs in with", summary.methods.joined(separator: ", ")), ("Role", detail.role?.rawValue ?? "none"),
            ("Disabled", summary.disabledAt.map { ConsoleFrame.time($0) } ?? "no"),
        ]
        func confirm(_ action: String, _ label: String, _ query: [(String, String)] = [], danger: Bool = false) -> HTML {
            let target = base + "/confirm/" + action + (query.isEmpty ? "" : "?" + FormEncoding.encode(query))
            return "<a class=\"button small \(danger ? "danger" : "secondary")\" href=\"\(target)\">\(label)</a>\n"
        }
        var actions: [HTML] = [summary.disabledAt == nil ? confirm("disable", "Disable") : confirm("enable", "Enable")]
        if canSendMail, user.email != nil { actions.append(confirm("password-reset", "Send a password reset")) }
        actions.append(confirm("end-sessions", "End all sessions"))
        actions.append(confirm("delete", "Delete the account", danger: true))
        let identities = detail.profile.identities.map { identity -> [HTML] in
            ["\(identity.provider)", "\(ConsoleFrame.shown(identity.email ?? identity.username))", "\(ConsoleFrame.time(identity.createdAt))"]
        }
        let passkeys = detail.passkeys.map { passkey -> [HTML] in
            [
                "\(ConsoleFrame.shown(passkey.name))", "\(ConsoleFrame.time(passkey.createdAt))", "\(ConsoleFrame.time(passkey.lastUsedAt))",
                confirm("remove-factor", "Remove", [("kind", "passkey"), ("factor", passkey.id)], danger: true),
            ]
        }
        let deviceKeys = detail.deviceKeys.map { key -> [HTML] in
            [
                "\(ConsoleFrame.shown(key.label))", "\(ConsoleFrame.time(key.createdAt))", "\(ConsoleFrame.time(key.lastUsedAt))",
                confirm("remove-factor", "Remove", [("kind", "device_key"), ("factor", key.id)], danger: true),
            ]
        }
        let totp = detail.totp.map { factor -> [[HTML]] in
            [[
                "\(ConsoleFrame.time(factor.createdAt))", "\(ConsoleFrame.time(factor.confirmedAt))",
                confirm("remove-factor", "Remove", [("kind", "totp"), ("factor", factor.id)], danger: true),
            ]]
        } ?? []
        let sessions = detail.sessions.map { session -> [HTML] in
            [
                "\(session.id)", "\(ConsoleFrame.shown(session.userAgent))", "\(ConsoleFrame.shown(session.ip))", "\(session.amr.joined(separator: " "))",
                "\(ConsoleFrame.time(session.createdAt))", "\(ConsoleFrame.time(session.lastUsedAt))",
                confirm("end-session", "End", [("session_id", session.id)]),
            ]
        }
        let grants = detail.grants.map { grant -> [HTML] in
            ["\(ConsoleFrame.shown(grant.clientName))", "\(grant.scopes.sorted().joined(separator: " "))", "\(ConsoleFrame.time(grant.grantedAt))"]
        }
        return frame.document(
            title: ConsoleFrame.shown(user.email ?? summary.username ?? user.id), current: "/admin/users",
            body: """
                \(notice.map { "<p class=\"lead\" role=\"status\">\($0)</p>\n" as HTML } ?? "")<dl class="facts">
                \(facts.map { name, value -> HTML in "<dt>\(name)</dt><dd>\(value)</dd>\n" })</dl>
                <p>\(actions)</p>
                <h2>Identities</h2>
                \(ConsoleFrame.table(["Provider", "Email or username", "Added"], identities, empty: "No identities."))
                <h2>Passkeys</h2>
                \(ConsoleFrame.table(["Name", "Added", "Last used", ""], passkeys, empty: "No passkeys."))
                <h2>Device keys</h2>
                \(ConsoleFrame.table(["Label", "Added", "Last used", ""], deviceKeys, empty: "No device keys."))
                <h2>Authenticator app (TOTP)</h2>
                \(ConsoleFrame.table(["Added", "Confirmed", ""], totp, empty: "No authenticator app."))
                <h2>Sessions</h2>
                \(ConsoleFrame.table(["Id", "User agent", "Address", "Methods", "Started", "Last used", ""], sessions, empty: "No live sessions."))
                <h2>Grants</h2>
                \(ConsoleFrame.table(["Client", "Scopes", "Granted"], grants, empty: "No grants."))
                <h2>Audit log</h2>
                \(ConsoleAuditPage.table(detail.audit.map(\.entry)))
                """)
    }
}
