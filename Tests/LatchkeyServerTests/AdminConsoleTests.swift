import Foundation
import LatchkeyHTTP
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The admin console (`/admin`) driven as a browser drives it: a cookie jar through the real
/// hosted sign-in (password, then a TOTP code), the console's pages and forms, and each action's
/// effect in the database and its audit entry. Each test names the requirement of
/// docs/security.md it proves.
@Suite("Admin console")
struct AdminConsoleTests {
    static let password = "correct horse battery staple"

    /// A password account with `role`, and with TOTP when `totp`; its id and TOTP secret.
    static func account(_ server: TestServer, _ username: String, role: AdminRole?, totp: Bool) async throws -> (id: String, secret: [UInt8]?) {
        let (userID, _) = try await server.passwordUser(username: username, password: password)
        if let role { try await server.application.services.admin.grant(userID: userID, role: role, context: RequestContext(requestID: "cli")) }
        guard totp else { return (userID, nil) }
        let user = try await server.application.services.accounts.profile(userID: userID).user
        let (_, _, secret, _) = try await TOTPTests.enrolled(server, user: user)
        return (userID, secret)
    }

    /// Opens `/admin` in a new browser and signs in through the hosted pages: the password, and
    /// a TOTP code of a later step when `secret` is given; returns the browser and the last page.
    static func signIn(_ server: TestServer, _ username: String, secret: [UInt8]?) async throws -> (OAuthBrowser, TestResponse) {
        let browser = OAuthBrowser(server)
        let page = try await signIn(browser, server, from: try await browser.send("/admin"), username, secret: secret)
        return (browser, page)
    }

    /// Follows `response` to the sign-in page and signs in there.
    static func signIn(_ browser: OAuthBrowser, _ server: TestServer, from response: TestResponse, _ username: String, secret: [UInt8]?) async throws
        -> TestResponse
    {
        var page = try await browser.follow(response)
        #expect(page.text.contains(#"name="password""#), "the sign-in page: \(page.status)")
        page = try await browser.submit(page, ["username": username, "password": password])
        if let secret {
            // A step after the enrolment's code, which counts once.
            server.clock.advance(by: 30)
            page = try await browser.submit(page, ["code": TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))])
        }
        return page
    }

    /// The CSRF token of a console page's forms.
    static func csrfToken(_ page: TestResponse) throws -> String {
        let expression = try NSRegularExpression(pattern: #"name="csrf_token" value="([^"]+)""#)
        let text = page.text
        guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { throw Failure("no CSRF token") }
        return String(text[Range(match.range(at: 1), in: text)!])
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func count(_ server: TestServer, _ sql: String, _ bindings: [SQLValue] = []) async throws -> Int64 {
        try await server.database.read { try $0.queryOne(sql, bindings)?.int("n") ?? 0 }
    }

    /// The newest audit entry of `event`.
    static func newest(_ server: TestServer, _ event: String) async throws -> AuditLog.Entry? {
        try await AuditLog(database: server.database).entries(event: event).first
    }

    // MARK: S59, S60: signing in

    @Test("S60: an admin who signs in with a password and a TOTP code gets a console session (hashed, 12 hours, amr with mfa) and the overview")
    func s60SecondFactorLetsAnAdminIn() async throws {
        try await TestServer.with { server in
            let (ada, secret) = try await Self.account(server, "ada@example.com", role: .admin, totp: true)
            let (browser, page) = try await Self.signIn(server, "ada@example.com", secret: secret)
            #expect(page.status == 200 && page.text.contains("<h1>Overview</h1>") && page.text.contains("<svg class=\"chart\""), "\(page.text.prefix(400))")
            #expect(page.headers["Content-Security-Policy"]?.contains("unsafe-inline") == false)
            #expect(page.headers["X-Frame-Options"] == "DENY")
            let cookie = try #require(browser.cookies[ConsoleRoutes.cookieName])
            let row = try await server.database.read { try $0.queryOne("SELECT * FROM console_sessions", []) }
            let stored = try #require(row)
            #expect(try stored.string("user_id") == ada && stored.optionalString("amr")?.contains("mfa") == true)
            #expect(try stored.blob("token_hash") == Array(cookie.sha256))
            #expect(try stored.date("expires_at").timeIntervalSince(stored.date("created_at")) == ConsoleService.lifetime)
            // The console's own client exists, first-party and public.
            let client = try #require(try await server.application.clients.client(id: ClientService.consoleID))
            #expect(client.isFirstParty && !client.isConfidential && client.redirectURIs == [server.baseURL + "/admin/callback"])
            for path in ["/admin/users", "/admin/users/\(ada)", "/admin/audit", "/admin/clients", "/admin/keys"] {
                let shown = try await browser.send(path)
                #expect(shown.status == 200, "\(path)")
                #expect(shown.headers["Content-Security-Policy"] == HTTPHeaders.hostedPageSecurity["Content-Security-Policy"], "\(path)")
            }
        }
    }

    @Test("S60: an admin with only a password is told to add a second factor and gets no console session")
    func s60PasswordOnlyAdminIsRefused() async throws {
        try await TestServer.with { server in
            let (ada, _) = try await Self.account(server, "ada@example.com", role: .admin, totp: false)
            let (browser, page) = try await Self.signIn(server, "ada@example.com", secret: nil)
            #expect(page.status == 403 && page.text.contains("Add a second factor first"))
            #expect(browser.cookies[ConsoleRoutes.cookieName] == nil)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM console_sessions") == 0)
            // The API session of the console's code exchange ended at once.
            #expect(
                try await Self.count(
                    server, "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL",
                    [.text(ada), .text(ClientService.consoleID)]) == 0)
            #expect(try await browser.send("/admin").status == 303)
        }
    }

    @Test("S59: an account without a role is refused even with a second factor; a role taken away ends the console at the next request")
    func s59RoleIsNeededAndReadEveryRequest() async throws {
        try await TestServer.with { server in
            let (_, plainSecret) = try await Self.account(server, "plain@example.com", role: nil, totp: true)
            let (plainBrowser, refused) = try await Self.signIn(server, "plain@example.com", secret: plainSecret)
            #expect(refused.status == 403 && refused.text.contains("This account cannot use the console"))
            #expect(plainBrowser.cookies[ConsoleRoutes.cookieName] == nil)

            let (ada, secret) = try await Self.account(server, "ada@example.com", role: .support, totp: true)
            let (browser, page) = try await Self.signIn(server, "ada@example.com", secret: secret)
            #expect(page.status == 200)
            #expect(try await server.application.services.admin.revoke(userID: ada, context: RequestContext(requestID: "cli")))
            let after = try await browser.send("/admin/users")
            #expect(after.status == 303 && after.headers["Location"]?.hasPrefix("/oauth/authorize?") == true)
        }
    }

    @Test("S59: a console session older than 12 hours is refused and sends the browser to sign in again")
    func s59TwelveHours() async throws {
        try await TestServer.with { server in
            let (_, secret) = try await Self.account(server, "ada@example.com", role: .admin, totp: true)
            let (browser, _) = try await Self.signIn(server, "ada@example.com", secret: secret)
            server.clock.advance(by: 11 * 3600)
            #expect(try await browser.send("/admin").status == 200)
            server.clock.advance(by: 3600 + 1)
            let late = try await browser.send("/admin")
            #expect(late.status == 303 && late.headers["Location"]?.contains("client_id=cl_console") == true)
        }
    }

    // MARK: S61: CSRF

    @Test("S61: a console POST without the CSRF token is refused with 403 and changes nothing; with it the action is done and audited with the actor")
    func s61CSRF() async throws {
        try await TestServer.with { server in
            let (ada, secret) = try await Self.account(server, "ada@example.com", role: .support, totp: true)
            let victim = try await server.createUser(email: "victim@example.com")
            let (browser, _) = try await Self.signIn(server, "ada@example.com", secret: secret)
            let confirm = try await browser.send("/admin/users/\(victim.id)/confirm/disable")
            #expect(confirm.status == 200 && confirm.text.contains("Disable the account"))
            for form in [[:], ["csrf_token": "made-up"]] {
                let refused = try await browser.send("/admin/users/\(victim.id)/disable", form: form)
                #expect(refused.status == 403)
                #expect(try await server.application.services.accounts.disabledAt(userID: victim.id) == nil)
            }
            let done = try await browser.send("/admin/users/\(victim.id)/disable", form: ["csrf_token": try Self.csrfToken(confirm)])
            #expect(done.status == 303 && done.headers["Location"] == "/admin/users/\(victim.id)?done=disable")
            #expect(try await server.application.services.accounts.disabledAt(userID: victim.id) != nil)
            let entry = try #require(try await Self.newest(server, "account.disabled"))
            #expect(entry.userID == victim.id && entry.details["actor"] == ada)
        }
    }

    // MARK: S62: fresh sign-in

    @Test("S62: a destructive action with a sign-in older than 5 minutes is not done; the browser signs in again and comes back to the confirmation")
    func s62StaleSignInIsRedirected() async throws {
        try await TestServer.with { server in
            let (ada, secret) = try await Self.account(server, "ada@example.com", role: .admin, totp: true)
            let victim = try await server.createUser(email: "victim@example.com")
            let (browser, page) = try await Self.signIn(server, "ada@example.com", secret: secret)
            let token = try Self.csrfToken(page)
            server.clock.advance(by: 301)
            let stale = try await browser.send("/admin/users/\(victim.id)/delete", form: ["csrf_token": token])
            #expect(stale.status == 303 && stale.headers["Location"]?.contains("max_age=300") == true)
            #expect(try await server.application.services.accounts.profile(userID: victim.id).user.id == victim.id)
            // Signing in again lands on the confirmation page, where the form does it.
            let confirmation = try await Self.signIn(browser, server, from: stale, "ada@example.com", secret: secret)
            #expect(confirmation.status == 200 && confirmation.text.contains("Delete the account"), "\(confirmation.text.prefix(300))")
            let done = try await browser.send("/admin/users/\(victim.id)/delete", form: ["csrf_token": try Self.csrfToken(confirmation)])
            #expect(done.status == 303 && done.headers["Location"] == "/admin/users")
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM users WHERE id = ?", [.text(victim.id)]) == 0)
            let entry = try #require(try await Self.newest(server, "account.deleted"))
            #expect(entry.details["actor"] == ada)
        }
    }

    // MARK: S64: per-action authorization

    @Test("S64: support gets 403 on clients, keys, deleting an account and removing a factor, and nothing changes")
    func s64SupportIsRefusedAdminActions() async throws {
        try await TestServer.with { server in
            let (_, secret) = try await Self.account(server, "support@example.com", role: .support, totp: true)
            let (victim, _) = try await Self.account(server, "victim@example.com", role: nil, totp: true)
            let (browser, page) = try await Self.signIn(server, "support@example.com", secret: secret)
            let token = try Self.csrfToken(page)
            #expect(!page.text.contains("href=\"/admin/clients\""), "support's navigation leaves out clients")
            let clients = try await Self.count(server, "SELECT count(*) AS n FROM oauth_clients")
            let keys = try await Self.count(server, "SELECT count(*) AS n FROM signing_keys")
            let totpID = try await server.database.read { try $0.queryOne("SELECT id FROM totp_factors WHERE user_id = ?", [.text(victim)])!.string("id") }
            for path in ["/admin/clients", "/admin/keys", "/admin/keys/confirm/rotate", "/admin/users/\(victim)/confirm/delete"] {
                #expect(try await browser.send(path).status == 403, "\(path)")
            }
            let posts: [(String, [String: String])] = [
                ("/admin/clients", ["name": "Evil", "redirect_uris": "https://evil.example/cb"]), ("/admin/keys/rotate", [:]),
                ("/admin/users/\(victim)/delete", [:]), ("/admin/users/\(victim)/remove-factor", ["kind": "totp", "factor": totpID]),
                ("/admin/clients/\(ClientService.consoleID)/remove", [:]), ("/admin/clients/\(ClientService.consoleID)/rotate-secret", [:]),
            ]
            for (path, form) in posts {
                let refused = try await browser.send(path, form: form.merging(["csrf_token": token]) { $1 })
                #expect(refused.status == 403 && refused.text.contains("Not allowed"), "\(path)")
            }
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM oauth_clients") == clients)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM signing_keys") == keys)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM users WHERE id = ?", [.text(victim)]) == 1)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM totp_factors WHERE user_id = ?", [.text(victim)]) == 1)
        }
    }

    @Test("S64: each user action changes the database and is audited with the admin as actor")
    func s64UserActions() async throws {
        try await TestServer.with { server in
            let (ada, secret) = try await Self.account(server, "ada@example.com", role: .admin, totp: true)
            let (victim, _) = try await Self.account(server, "victim@example.com", role: nil, totp: true)
            let victimUser = try await server.application.services.accounts.profile(userID: victim).user
            let first = try await server.startSession(for: victimUser)
            _ = try await server.startSession(for: victimUser)
            let (browser, page) = try await Self.signIn(server, "ada@example.com", secret: secret)
            let token = try Self.csrfToken(page)
            func post(_ action: String, _ form: [String: String] = [:]) async throws -> TestResponse {
                try await browser.send("/admin/users/\(victim)/\(action)", form: form.merging(["csrf_token": token]) { $1 })
            }
            let sessionID = first.session.id
            #expect(try await post("end-session", ["session_id": sessionID]).status == 303)
            #expect(try await Self.newest(server, "session.revoked")?.details["actor"] == ada)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM sessions WHERE id = ? AND revoked_at IS NOT NULL", [.text(sessionID)]) == 1)
            #expect(try await post("end-sessions").status == 303)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND revoked_at IS NULL", [.text(victim)]) == 0)
            #expect(try await post("disable").status == 303)
            #expect(try await post("enable").status == 303)
            #expect(try await server.application.services.accounts.disabledAt(userID: victim) == nil)
            #expect(try await Self.newest(server, "account.enabled")?.details["actor"] == ada)
            let totpID = try await server.database.read { try $0.queryOne("SELECT id FROM totp_factors WHERE user_id = ?", [.text(victim)])!.string("id") }
            #expect(try await post("remove-factor", ["kind": "totp", "factor": totpID]).status == 303)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM totp_factors WHERE user_id = ?", [.text(victim)]) == 0)
            #expect(try await Self.newest(server, "totp.removed")?.details["actor"] == ada)
            let shown = try await browser.send("/admin/users/\(victim)?done=remove-factor")
            #expect(shown.status == 200 && shown.text.contains("The factor is removed."))
        }
    }

    @Test("S62, S64: an admin adds a client, sees its secret once, rotates it, edits its redirect URIs, removes it, and rotates the signing keys")
    func s64ClientsAndKeys() async throws {
        try await TestServer.with { server in
            let (ada, secret) = try await Self.account(server, "ada@example.com", role: .admin, totp: true)
            let (browser, page) = try await Self.signIn(server, "ada@example.com", secret: secret)
            let token = try Self.csrfToken(page)
            let added = try await browser.send(
                "/admin/clients", form: ["csrf_token": token, "name": "Notes", "redirect_uris": "https://notes.example/cb", "confidential": "true"])
            #expect(added.status == 200 && added.text.contains("shown this once"), "\(added.status): \(added.text.prefix(600))")
            let clientID = try #require(try await server.application.clients.list().first { $0.name == "Notes" }?.id)
            #expect(try await Self.newest(server, "client.registered")?.details["actor"] == ada)
            let rotated = try await browser.send("/admin/clients/\(clientID)/rotate-secret", form: ["csrf_token": token])
            #expect(rotated.status == 200 && rotated.text.contains("id=\"client-secret\""))
            #expect(try await Self.newest(server, "client.secret_rotated")?.details["actor"] == ada)
            let edited = try await browser.send("/admin/clients/\(clientID)/redirect-uris", form: ["csrf_token": token, "redirect_uris": "https://notes.example/cb2 https://notes.example/cb3"])
            #expect(edited.status == 303)
            #expect(try await server.application.clients.client(id: clientID)?.redirectURIs == ["https://notes.example/cb2", "https://notes.example/cb3"])
            #expect(try await browser.send("/admin/clients/\(clientID)/remove", form: ["csrf_token": token]).status == 303)
            #expect(try await server.application.clients.client(id: clientID) == nil)
            #expect(try await Self.newest(server, "client.removed")?.details["actor"] == ada)
            let keys = try await Self.count(server, "SELECT count(*) AS n FROM signing_keys")
            #expect(try await browser.send("/admin/keys/rotate", form: ["csrf_token": token]).status == 303)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM signing_keys") == keys + 2)
            #expect(try await Self.newest(server, "key.rotated")?.details["actor"] == ada)
            let export = try await browser.send("/admin/audit/export?event=key.rotated")
            #expect(export.status == 200 && export.headers["Content-Type"] == "application/x-ndjson")
            #expect(export.text.split(separator: "\n").count == 2)
        }
    }

    // MARK: S63: escaping

    @Test("S63: a name with a script, an email with quotes and a user agent with control characters render as text")
    func s63HostileValuesAreText() async throws {
        try await TestServer.with { server in
            let (_, secret) = try await Self.account(server, "ada@example.com", role: .support, totp: true)
            let victim = try await server.createUser(email: #""quoted"@example.com"#, givenName: "<script>alert(1)</script>")
            _ = try await server.application.services.signIns.startSession(
                userID: victim.id, amr: ["pwd"], context: RequestContext(ip: "127.0.0.1", userAgent: "Evil\r\nAgent\u{7}<b>bold</b>"))
            let (browser, _) = try await Self.signIn(server, "ada@example.com", secret: secret)
            for path in ["/admin/users", "/admin/users?query=%22quoted", "/admin/users/\(victim.id)"] {
                let page = try await browser.send(path)
                #expect(page.status == 200, "\(path)")
                #expect(!page.text.contains("<script>") && page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(path)")
                #expect(!page.text.contains(#""quoted"@"#) && page.text.contains("&quot;quoted&quot;@example.com"), "\(path)")
            }
            let detail = try await browser.send("/admin/users/\(victim.id)").text
            #expect(detail.contains("Evil\u{FFFD}\u{FFFD}Agent\u{FFFD}&lt;b&gt;bold&lt;/b&gt;") && !detail.contains("<b>bold"))
        }
    }
}
