import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// Passkeys on the hosted pages in a real browser: headless Chromium with its virtual
/// authenticator (`Fixtures/browser_passkeys.py`) creates an account with a passkey, signs in
/// with the button and with conditional mediation, and meets each refusal. The server runs at
/// `http://localhost:PORT` with `passkeys.rp_id` localhost, the one plain-http origin where
/// browsers allow WebAuthn. This side checks the database and the audit log.
@Suite("Hosted passkeys in headless Chromium", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct PasskeyBrowserTests {
    /// A test server at `http://localhost:PORT` whose pages offer passkeys.
    static func with(_ body: (TestServer) async throws -> Void) async throws {
        let port = try DevLANTests.freePort()
        try await TestServer.with({
            $0.listen = "127.0.0.1:\(port)"
            $0.publicURL = "http://localhost:\(port)"
            $0.passkeys.rpID = "localhost"
            // A request the authenticator never answers (its user does not consent) ends when
            // the options' timeout does: short, so the test waits seconds, not minutes.
            $0.passkeys.timeout = 10
        }, body)
    }

    @Test("S34: sign-up with a passkey, sign-in with the button and by conditional mediation, each to tokens; refusals shown on the page and audited")
    func passkeysInChromium() async throws {
        try await Self.with { server in
            let start = Date()
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let email = "hamilton@example.com"

            // The sign-in page's policy admits the passkey script by its hash and nothing inline.
            let page = try await server.request(
                .get, "/oauth/authorize?response_type=code&client_id=\(notes.id)&redirect_uri=http://127.0.0.1/callback&code_challenge=\(String(repeating: "A", count: 43))&code_challenge_method=S256&scope=openid&state=s")
            #expect(page.status == 200, "\(page.headers["Location"] ?? String(page.text.prefix(300)))")
            let policy = page.headers["Content-Security-Policy"] ?? ""
            #expect(policy.contains("script-src \(PasskeyForm.scriptHash);") && !policy.contains("unsafe-inline"), "\(policy)")
            #expect(page.text.contains("<script>\(PasskeyForm.script)</script>"))
            #expect(page.text.contains(#"autocomplete="username webauthn""#))

            let seen = try await HeadlessChromium.run(
                "passkeys", ["client": .string(notes.id), "email": .string(email)], on: server, script: "browser_passkeys.py")

            let shown = HeadlessChromium.page
            let callback = shown("rp", "/callback", "Back at the application")
            // 1. Sign-up: the button the script revealed, then the client's callback and tokens.
            #expect(seen["sign_up_page"] == shown("latchkey", "/oauth/authorize", "Create an account"))
            #expect(seen["sign_up_offer"]?["button"] == "Create with a passkey")
            #expect(seen["after_sign_up"] == callback)
            #expect(seen["sign_up_callback"] == ["code": true, "state": "state-sign-up", "iss": .string(server.baseURL)])
            #expect(seen["sign_up_tokens"]?["access_token"] == true && seen["sign_up_tokens"]?["token_type"] == "Bearer", "\(seen["sign_up_tokens"] ?? .null)")
            #expect(seen["sign_up_tokens"]?["amr"] == ["swk", "user", "mfa"])
            #expect(seen["credentials_after_sign_up"]?.arrayValue?.count == 1)
            #expect(seen["credentials_after_sign_up"]?.arrayValue?.first?["resident"] == true)
            let userID = try #require(seen["sign_up_tokens"]?["sub"]?.stringValue)

            // 2. The button, in a browser without conditional mediation.
            #expect(seen["sign_in_page"] == shown("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["sign_in_offer"] == ["button": "Sign in with a passkey", "username_autocomplete": "username webauthn"])
            #expect(seen["after_button"] == callback)
            #expect(seen["button_callback_state"] == "state-button")
            #expect(seen["button_tokens"]?["sub"] == .string(userID) && seen["button_tokens"]?["amr"] == ["swk", "user", "mfa"])

            // 3. Conditional mediation: the virtual authenticator answers AutoFill's request, and
            //    the browser reaches the client without the button being pressed.
            #expect(seen["conditional_available"] == true || seen["conditional_available"] == "navigated")
            #expect(seen["conditional"] == "on_load" || seen["conditional"] == "on_focus", "\(seen["conditional"] ?? .null)")
            #expect(seen["after_conditional"] == callback)
            #expect(seen["conditional_tokens"]?["sub"] == .string(userID))

            // 4. Refusals: the page again, the reason said, nothing at the client.
            let signIn = shown("latchkey", "/oauth/authorize", "Sign in")
            #expect(seen["no_consent"] == ["page": signIn, "alert": .string(PasskeyForm.notUsed), "reached_rp": false])
            #expect(seen["not_verified"]?["alert"] != nil && seen["not_verified"]?["reached_rp"] == false, "\(seen["not_verified"] ?? .null)")
            for (how, words) in [
                ("up", "did not confirm that you were there"), ("uv", "did not verify you"), ("signature", "its signature does not verify"),
            ] {
                let refused = seen["tampered_" + how]
                #expect(refused?["page"] == signIn && refused?["reached_rp"] == false, "\(how): \(refused ?? .null)")
                #expect(refused?["alert"]?.stringValue?.contains(words) == true, "\(how): \(refused ?? .null)")
            }
            #expect(seen["callback_states"] == ["state-sign-up", "state-button", "state-conditional"])

            // What it left: the account with its email and no password, one passkey used since,
            // three browser sessions signed in by it (swk, user, mfa), a code for each.
            let user = try await server.database.read { try $0.queryOne("SELECT email FROM users WHERE id = ?", [.text(userID)]) }
            #expect(user?.optionalString("email") == email)
            let passwords = try await server.database.read { try $0.query("SELECT user_id FROM password_credentials WHERE user_id = ?", [.text(userID)]) }
            #expect(passwords.isEmpty)
            let passkeys = try await server.database.read {
                try $0.query("SELECT id, sign_count, last_used_at FROM passkeys WHERE user_id = ?", [.text(userID)])
            }
            #expect(passkeys.count == 1)
            let passkeyID = try #require(passkeys.first?.optionalString("id"))
            #expect(passkeys.first?.optionalDate("last_used_at") != nil)
            let methods = try await BrowserFlowTests.browserSessionMethods(server, userID)
            #expect(methods == Array(repeating: ["swk", "user", "mfa"], count: 3), "\(methods)")
            let codes = try await server.database.read { try $0.query("SELECT used_at FROM oauth_codes WHERE user_id = ?", [.text(userID)]) }
            #expect(codes.count == 3 && codes.allSatisfy { $0.optionalDate("used_at") != nil })

            // The audit log: the sign-up, two uses, and one refusal per changed answer with its reason.
            let audit = AuditLog(database: server.database)
            let signUps = try await audit.entries(userID: userID, event: "passkey.sign_up")
            #expect(signUps.count == 1 && signUps.first?.details["passkey_id"] == passkeyID)
            let used = try await audit.entries(userID: userID, event: "passkey.used")
            #expect(used.count == 2 && used.allSatisfy { $0.details["passkey_id"] == passkeyID && $0.details["use"] == "sign_in" })
            let failed = try await audit.entries(limit: 100).filter { $0.event.rawValue == "passkey.failed" }
            #expect(Set(failed.compactMap { $0.details["reason"] }) == ["user_not_present", "user_not_verified", "bad_signature"], "\(failed.map(\.details))")
            #expect(failed.allSatisfy { $0.userID == userID && $0.details["passkey_id"] == passkeyID })
            BrowserFlowTests.expectScreenshots(
                ["passkey-sign-up", "passkey-sign-in", "passkey-refused-by-browser", "passkey-refused-up", "passkey-refused-uv", "passkey-refused-signature"],
                since: start)
        }
    }
}
