import Foundation
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The admin console in headless Chromium (Tests/LatchkeyServerTests/Fixtures/browser_console.py):
/// an admin signs in with a password and TOTP, walks every page and does each action through its
/// confirmation page; the database, the audit log and the test SMTP server (aiosmtpd) are
/// checked here, and each page's screenshot lands in
/// `.build/test-artifacts/screenshots/admin-*.png`.
@Suite("Admin console in headless Chromium", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct AdminConsoleBrowserTests {
    @Test("S59–S64: sign-in with TOTP, every page, search, end a session, disable and enable, a mailed password reset, a client added, its secret rotated and removed, keys rotated, the audit log filtered")
    func consoleWalk() async throws {
        // The password reset goes out over SMTP, with STARTTLS and AUTH, to aiosmtpd.
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        try await TestServer.with({
            $0.email.smtpURL = sink.url
            $0.email.smtpUsername = "latchkey"
            $0.email.smtpPassword = sink.options.password
            $0.email.caFile = sink.caFile
        }) { (server: TestServer) async throws in
            let start = Date()
            let admin = try await BrowserFlowTests.userWithTOTP(server, username: "grace@example.com")
            try await server.application.services.admin.grant(userID: admin.id, role: .admin, context: RequestContext(requestID: "cli"))
            let signUp = try await PasswordAccountTests.signUp(server, "target@example.com", BrowserFlowTests.password)
            let target = try signUp.tokens.user.id
            _ = try await PasswordAccountTests.signUp(server, "other@example.com", BrowserFlowTests.password)
            let keysBefore = try await AdminConsoleTests.count(server, "SELECT count(*) AS n FROM signing_keys")

            let seen = try await HeadlessChromium.run(
                "console",
                [
                    "admin": ["username": "grace@example.com", "password": .string(BrowserFlowTests.password), "totp_secret": .string(admin.secret)],
                    "target": ["email": "target@example.com"],
                ], on: server, script: "browser_console.py")

            let page = HeadlessChromium.page
            #expect(seen["sign_in_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["second_factor_page"] == page("latchkey", "/oauth/authorize/second-factor", "Enter your code"))
            #expect(seen["overview"] == page("latchkey", "/admin", "Overview"))
            #expect(seen["chart"] == true)
            #expect(seen["users"] == page("latchkey", "/admin/users", "Users"))
            #expect(seen["search_rows"] == 1)
            #expect(seen["user"] == page("latchkey", "/admin/users/\(target)", "target@example.com"))
            #expect(seen["sessions_shown"] == 1)
            #expect(seen["end_session_confirmation"] == page("latchkey", "/admin/users/\(target)/confirm/end-session", "End the session"))
            #expect(seen["after_end_session"] == "The session ended.")
            #expect(seen["after_disable"] == "The account is disabled.")
            #expect(seen["after_enable"] == "The account is enabled.")
            #expect(seen["after_reset"] == "A password reset message is on its way.")
            let delivered = try await eventually(within: .seconds(15)) {
                try sink.deliveries().contains { $0.recipients == ["target@example.com"] && $0.tls && $0.raw.contains("Reset your Latchkey password") }
            }
            #expect(delivered, "the reset reached the SMTP server")
            #expect(seen["clients"] == page("latchkey", "/admin/clients", "Clients"))
            #expect(seen["client_added"]?["h1"] == "Console Notes")
            #expect(seen["secret_rotated"] == true && seen["secret_shown_again"] == false)
            #expect(seen["after_remove"] == page("latchkey", "/admin/clients", "Clients"))
            #expect(seen["keys"] == page("latchkey", "/admin/keys", "Signing keys"))
            #expect(seen["after_rotate"] == "New keys are published; they sign in 15 minutes.")
            #expect(seen["audit"] == page("latchkey", "/admin/audit", "Audit log"))
            #expect(seen["audit_rows"] == ["account.disabled"])
            #expect(seen["export_link"] == "/admin/audit/export?event=account.disabled")

            // What the actions left, each audited with the admin as actor.
            #expect(try await AdminConsoleTests.count(server, "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND revoked_at IS NULL", [.text(target)]) == 0)
            #expect(try await server.application.services.accounts.disabledAt(userID: target) == nil)
            #expect(try await server.application.clients.list().contains { $0.name == "Console Notes" } == false)
            #expect(try await AdminConsoleTests.count(server, "SELECT count(*) AS n FROM signing_keys") == keysBefore + 2)
            for event in ["session.revoked", "account.disabled", "account.enabled", "email.requested", "client.registered", "client.secret_rotated", "client.removed", "key.rotated"] {
                #expect(try await AdminConsoleTests.newest(server, event)?.details["actor"] == admin.id, "\(event)")
            }
            BrowserFlowTests.expectScreenshots(
                ["admin-overview", "admin-users", "admin-user", "admin-confirm", "admin-clients", "admin-client", "admin-keys", "admin-audit"], since: start)
        }
    }
}
