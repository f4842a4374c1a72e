import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The hosted pages in a real browser: Debian's headless Chromium, driven by Selenium
/// (`Fixtures/browser_flows.py`), types and clicks through them against a test server on the
/// loopback. The browser's side checks what a person sees (the page reached, the fields, the
/// callback's `code`, `state` and `iss`); this side checks what it left in the database and the
/// audit log. Each page's screenshot lands in `.build/test-artifacts/screenshots/`. The email
/// flows read their code from the development server's mailbox (`/sandbox/mail.json`), as a
/// person reads the message.
@Suite("Hosted pages in headless Chromium", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct BrowserFlowTests {
    static let password = "correct horse battery"

    /// Sets the server's clock to the wall clock, where the browser lives.
    static func setClock(_ server: TestServer) {
        server.clock.advance(by: Date().timeIntervalSince(server.clock.now))
    }

    /// A user with a password and a confirmed TOTP factor, made through `/v1`; returns the
    /// user's id and the TOTP secret in base32. The factor is confirmed with the code of the
    /// previous 30-second step (still in the window), so the code the browser types, of the
    /// current step, is a later one, as S19 demands.
    static func userWithTOTP(_ server: TestServer, username: String) async throws -> (id: String, secret: String) {
        setClock(server)
        let signUp = try await PasswordAccountTests.signUp(server, username, password)
        #expect(signUp.status == 201)
        let bearer = try signUp.bearer
        let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
        let code = TOTP.code(secret: TOTPTests.base32Decode(begin.secret), step: TOTP.step(at: server.clock.now) - 1)
        let confirm = try await server.request(.post, "/v1/totp/confirm", json: ["code": .string(code)], headers: bearer)
        #expect(confirm.status == 200)
        return (try signUp.tokens.user.id, begin.secret)
    }

    /// The names of the user's audit events.
    static func audit(_ server: TestServer, _ userID: String) async throws -> [String] {
        try await AuditLog(database: server.database).entries(userID: userID, limit: 1000).map(\.event.rawValue)
    }

    /// Fails unless the flow left a fresh PNG screenshot for each of `names`.
    static func expectScreenshots(_ names: [String], since start: Date, sourceLocation: SourceLocation = #_sourceLocation) {
        for name in names {
            let url = HeadlessChromium.screenshots.appendingPathComponent(name + ".png")
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            let modified = attributes?[.modificationDate] as? Date ?? .distantPast
            let head = (try? FileHandle(forReadingFrom: url)).flatMap { try? $0.read(upToCount: 8) } ?? Data()
            #expect(modified >= start.addingTimeInterval(-1) && head == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
                "a fresh screenshot \(url.path)", sourceLocation: sourceLocation)
        }
    }

    @Test("S29, S19: password and TOTP sign-in, consent for a third-party client, single sign-on into a second client, logout")
    func signInConsentSSOAndLogoutS29() async throws {
        try await TestServer.with { server in
            let start = Date()
            let clients = ClientService(database: server.database, clock: { server.clock.now })
            let (photos, _) = try await clients.register(
                ClientRegistration(name: "Example Photos", redirectURIs: ["http://127.0.0.1/callback"], confidential: true))
            let (notes, _) = try await clients.register(
                ClientRegistration(
                    name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], postLogoutRedirectURIs: ["http://127.0.0.1/signed-out"],
                    firstParty: true))
            let user = try await Self.userWithTOTP(server, username: "grace@example.com")

            let seen = try await HeadlessChromium.run(
                "sign-in",
                [
                    "user": ["username": "grace@example.com", "password": .string(Self.password), "totp_secret": .string(user.secret)],
                    "third_party": .string(photos.id), "second_client": .string(notes.id),
                ], on: server)

            // What the person saw, page by page.
            let page = HeadlessChromium.page
            #expect(seen["first_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["sign_in_fields"] == [
                "username": ["autocomplete": "username", "labelled": true], "password": ["autocomplete": "current-password", "labelled": true],
            ])
            #expect(seen["after_password"] == page("latchkey", "/oauth/authorize/second-factor", "Enter your code"))
            #expect(seen["second_factor_fields"] == ["code": ["autocomplete": "one-time-code", "labelled": true]])
            #expect(seen["after_code"] == page("latchkey", "/oauth/authorize", "Allow Example Photos access?"))
            let consentItems = Set(seen["consent_items"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            #expect(consentItems == Set(["openid", "profile", "email"].map(ConsentPage.describe)))
            // Chromium keeps the `Secure` `__Host-` cookies over http://127.0.0.1: loopback is a secure context.
            let cookie: JSONValue = ["secure": true, "http_only": true, "same_site": "Lax", "path": "/"]
            #expect(seen["cookies_after_sign_in"]?["__Host-latchkey_session"] == cookie)
            #expect(seen["cookies_after_sign_in"]?["__Host-latchkey_csrf"] == cookie)
            let issuer = JSONValue.string(server.baseURL)
            #expect(seen["first_callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["first_callback"] == ["has_code": true, "state": "state-one", "iss": issuer, "error": nil])
            // Single sign-on: the second client's request went straight back with a code.
            #expect(seen["second_callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["second_callback"] == ["has_code": true, "state": "state-two", "iss": issuer, "error": nil])
            // Logout: a link without the user's ID token is confirmed first (RP-Initiated Logout
            // §6); then back to the registered post-logout URI with the state, the session cookie gone.
            #expect(seen["logout_confirmation_page"] == page("latchkey", "/oauth/logout", "Sign out?"))
            #expect(seen["after_logout_page"] == page("rp", "/signed-out", "Back at the application"))
            #expect(seen["after_logout_query"] == ["state": "state-three"])
            #expect(seen["cookies_after_logout"]?["__Host-latchkey_session"] == nil)
            #expect(seen["signed_out_page"] == page("latchkey", "/oauth/logout", "You are signed out"))
            #expect(seen["after_logout_authorize"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["rp_hits"] == [
                ["path": "/callback", "state": "state-one", "has_code": true],
                ["path": "/callback", "state": "state-two", "has_code": true],
                ["path": "/signed-out", "state": "state-three", "has_code": false],
            ])

            // What it left: one browser session (password and TOTP), ended by the logout; a code
            // for each client from it; consent remembered for the third-party client only.
            let sessions = try await server.database.read {
                try $0.query("SELECT id, amr, ended_at, ended_reason FROM browser_sessions WHERE user_id = ?", [.text(user.id)])
            }
            #expect(sessions.count == 1)
            let browserSession = try #require(sessions.first)
            let amr = try JSONValue(parsing: Array(try browserSession.string("amr").utf8)).arrayValue?.compactMap(\.stringValue) ?? []
            #expect(Set(amr) == ["pwd", "otp", "mfa"])
            #expect(browserSession.optionalDate("ended_at") != nil && browserSession.optionalString("ended_reason") == "logout")
            let codes = try await server.database.read {
                try $0.query("SELECT client_id, browser_session_id, redirect_uri, used_at FROM oauth_codes WHERE user_id = ?", [.text(user.id)])
            }
            #expect(Set(try codes.map { try $0.string("client_id") }) == [photos.id, notes.id])
            for code in codes {
                #expect(code.optionalString("browser_session_id") == (try browserSession.string("id")))
                let redirect = try code.string("redirect_uri")
                #expect(redirect.hasPrefix("http://127.0.0.1:") && redirect.hasSuffix("/callback"), "the loopback callback on the browser's port")
                #expect(code.optionalDate("used_at") == nil)
            }
            let consents = try await server.database.read {
                try $0.query("SELECT client_id, scope FROM oauth_consents WHERE user_id = ?", [.text(user.id)])
            }
            #expect(try consents.map { try $0.string("client_id") } == [photos.id])
            #expect(Set(try consents.first?.string("scope").split(separator: " ").map(String.init) ?? []) == ["openid", "profile", "email"])

            // The audit log tells the same story: one password sign-in and one code for both clients.
            let events = try await Self.audit(server, user.id)
            for (event, count) in [
                ("password.login", 1), ("totp.used", 1), ("browser_session.started", 1), ("consent.granted", 1),
                ("oauth.code_issued", 2), ("browser_session.ended", 1),
            ] {
                #expect(events.filter { $0 == event }.count == count, "\(event) in \(events)")
            }
            Self.expectScreenshots(["sign-in", "second-factor", "consent", "signed-out"], since: start)
        }
    }

    @Test("S20, S23: sign-up (prompt=create) keeps the username after a refused password; an unregistered redirect URI shows the error page and goes nowhere")
    func signUpAndUnregisteredRedirectS20() async throws {
        try await TestServer.with { server in
            let start = Date()
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))

            let seen = try await HeadlessChromium.run(
                "sign-up", ["client": .string(notes.id), "new_user": ["username": "hopper@example.com", "password": "tr0ubadour & stapler"]],
                on: server)

            let page = HeadlessChromium.page
            #expect(seen["first_page"] == page("latchkey", "/oauth/authorize", "Create an account"))
            #expect(seen["sign_up_fields"] == [
                "username": ["autocomplete": "username", "labelled": true], "password": ["autocomplete": "new-password", "labelled": true],
            ])
            // The refused password: the same page again (after the 303, S23), the reason said,
            // the username kept and the password not.
            #expect(seen["after_refused"] == page("latchkey", "/oauth/authorize", "Create an account"))
            #expect(seen["refused_alert"]?.stringValue?.contains("most commonly used passwords") == true)
            #expect(seen["kept_username"] == "hopper@example.com")
            #expect(seen["kept_password"] == "")
            #expect(seen["callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["callback"] == ["has_code": true, "state": "state-new", "iss": .string(server.baseURL), "error": nil])
            #expect(seen["cookies_after_sign_up"]?["__Host-latchkey_session"]?["secure"] == true)
            // S20: an unregistered redirect URI is an error page here; nothing reached it.
            #expect(seen["unregistered_page"] == page("latchkey", "/oauth/authorize", "This sign-in link is not valid"))
            #expect(seen["unregistered_message"]?.stringValue?.contains("redirect_uri") == true)
            #expect(seen["unregistered_reached_rp"] == false)

            // The account exists, signed in in a browser session that issued the callback's code.
            let signUps = try await AuditLog(database: server.database).entries(event: "password.signup", limit: 10)
            let created = try #require(signUps.first { $0.outcome.rawValue == "success" }?.userID)
            #expect(signUps.filter { $0.outcome.rawValue == "success" }.count == 1)
            let email = try await server.database.read { try $0.queryOne("SELECT email FROM users WHERE id = ?", [.text(created)]) }
            #expect(email?.optionalString("email") == "hopper@example.com")
            let sessions = try await server.database.read {
                try $0.query("SELECT id, ended_at FROM browser_sessions WHERE user_id = ?", [.text(created)])
            }
            #expect(sessions.count == 1 && sessions.first?.optionalDate("ended_at") == nil)
            let codes = try await server.database.read {
                try $0.query("SELECT client_id, browser_session_id FROM oauth_codes WHERE user_id = ?", [.text(created)])
            }
            #expect(try codes.map { try $0.string("client_id") } == [notes.id])
            #expect(codes.first?.optionalString("browser_session_id") == sessions.first?.optionalString("id"))
            let events = try await Self.audit(server, created)
            #expect(events.contains("browser_session.started") && events.contains("oauth.code_issued"), "\(events)")
            Self.expectScreenshots(["sign-up", "sign-up-refused", "error"], since: start)
        }
    }

    /// The browser sessions of a user: their `amr`, oldest first.
    static func browserSessionMethods(_ server: TestServer, _ userID: String) async throws -> [Set<String>] {
        try await server.database.read {
            try $0.query("SELECT amr FROM browser_sessions WHERE user_id = ? ORDER BY created_at", [.text(userID)])
        }.map { row in Set(try JSONValue(parsing: Array(try row.string("amr").utf8)).arrayValue?.compactMap(\.stringValue) ?? []) }
    }

    @Test("S32: Forgot password? in Chromium: the address, the mailed code and a new password (a refused one first), back at the client with a code; AutoFill attributes in the DOM")
    func forgotPasswordS32() async throws {
        try await TestServer.with { server in
            let start = Date()
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let signUp = try await PasswordAccountTests.signUp(server, "lovelace@example.com", Self.password)
            #expect(signUp.status == 201)
            let userID = try signUp.tokens.user.id
            let newPassword = "analytical engine notes"

            let seen = try await HeadlessChromium.run(
                "forgot-password",
                ["client": .string(notes.id), "user": ["username": "lovelace@example.com", "new_password": .string(newPassword)]], on: server)

            let page = HeadlessChromium.page
            #expect(seen["first_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            let links = Set(seen["sign_in_links"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            #expect(links.isSuperset(of: ["Forgot password?", "Email me a code"]), "\(links)")
            #expect(seen["address_page"] == page("latchkey", AuthorizeRoutes.passwordResetPath, "Reset your password"))
            #expect(seen["address_fields"] == ["email": ["autocomplete": "username", "labelled": true]])
            #expect(seen["address_autofill"]?["email"]?["type"] == "email")
            #expect(seen["code_page"] == page("latchkey", AuthorizeRoutes.emailCodePath(.reset), "Choose a new password"))
            #expect(seen["code_fields"] == [
                "username": ["autocomplete": "username", "labelled": true], "code": ["autocomplete": "one-time-code", "labelled": true],
                "password": ["autocomplete": "new-password", "labelled": true],
            ])
            #expect(seen["code_autofill"]?["code"] == ["type": "text", "autocomplete": "one-time-code", "inputmode": "numeric", "readonly": false])
            #expect(seen["code_autofill"]?["password"]?["type"] == "password")
            #expect(seen["code_autofill"]?["username"]?["readonly"] == true)
            #expect(seen["code_page_username"] == "lovelace@example.com")
            #expect(seen["code_page_text"]?.stringValue?.contains("If an account uses this address, we sent it a message with a 6-digit code.") == true)
            // The refused password: the page again with the rules' reason, neither secret echoed.
            #expect(seen["after_refused"] == page("latchkey", AuthorizeRoutes.emailCodePath(.reset), "Choose a new password"))
            #expect(seen["refused_alert"]?.stringValue?.contains("most commonly used passwords") == true)
            #expect(seen["refused_fields_empty"] == true)
            #expect(seen["callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["callback"] == ["has_code": true, "state": "state-reset", "iss": .string(server.baseURL), "error": nil])
            #expect(seen["cookies_after_reset"]?["__Host-latchkey_session"]?["secure"] == true)
            #expect(seen["cookies_after_reset"]?[HostedEmailFlow.cookieName] == nil, "the flow's cookie is gone")

            // What it left: the new password works and the old does not; one browser session,
            // signed in by email, that issued the callback's code; the flow used.
            #expect(try await PasswordAccountTests.logIn(server, "lovelace@example.com", newPassword).status == 200)
            #expect(try await PasswordAccountTests.logIn(server, "lovelace@example.com", Self.password).status == 401)
            #expect(try await Self.browserSessionMethods(server, userID) == [["email"]])
            let flows = try await server.database.read { try $0.query("SELECT ended_reason, attempts FROM email_flows WHERE user_id = ?", [.text(userID)]) }
            #expect(flows.count == 1 && flows.first?.optionalString("ended_reason") == "used")
            let events = try await Self.audit(server, userID)
            for (event, count) in [("email.requested", 1), ("password.reset", 1), ("browser_session.started", 1), ("oauth.code_issued", 1)] {
                #expect(events.filter { $0 == event }.count == count, "\(event) in \(events)")
            }
            Self.expectScreenshots(["forgot-password", "reset-code", "reset-refused"], since: start)
        }
    }

    @Test("S32: a reset's mailed link in Chromium: opening it changes nothing, its page's button with a new password does")
    func mailedLinkS32() async throws {
        try await TestServer.with { server in
            let start = Date()
            #expect(try await PasswordAccountTests.signUp(server, "babbage@example.com", Self.password).status == 201)
            #expect(try await server.request(.post, "/v1/auth/password/reset", json: ["email": "babbage@example.com"]).status == 202)
            let newPassword = "difference engine number two"

            let seen = try await HeadlessChromium.run(
                "mailed-link", ["user": ["username": "babbage@example.com", "new_password": .string(newPassword)]], on: server)

            #expect(seen["link_page"]?["path"] == "/email/reset")
            #expect(seen["link_fields"] == ["password": ["autocomplete": "new-password", "labelled": true]])
            #expect(seen["after_submit"]?["path"] == "/email/reset")
            #expect(seen["failed"] == nil, "\(seen)")
            #expect(try await PasswordAccountTests.logIn(server, "babbage@example.com", newPassword).status == 200)
            #expect(try await PasswordAccountTests.logIn(server, "babbage@example.com", Self.password).status == 401)
            let flows = try await server.database.read { try $0.query("SELECT ended_reason FROM email_flows", []) }
            #expect(flows.map { $0.optionalString("ended_reason") } == ["used"])
            Self.expectScreenshots(["mailed-link"], since: start)
        }
    }

    @Test("S32: Email me a code in Chromium: the address, a wrong code refused in words, the mailed code, back at the client with a code")
    func emailCodeS32() async throws {
        try await TestServer.with { server in
            let start = Date()
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let signUp = try await PasswordAccountTests.signUp(server, "hopper@example.com", Self.password)
            let userID = try signUp.tokens.user.id

            let seen = try await HeadlessChromium.run(
                "email-code", ["client": .string(notes.id), "user": ["username": "hopper@example.com"]], on: server)

            let page = HeadlessChromium.page
            #expect(seen["first_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["address_page"] == page("latchkey", AuthorizeRoutes.emailSignInPath, "Sign in with a code"))
            #expect(seen["address_autofill"]?["email"]?["autocomplete"] == "username")
            #expect(seen["code_page"] == page("latchkey", AuthorizeRoutes.emailCodePath(.signIn), "Check your email"))
            #expect(seen["code_fields"] == [
                "username": ["autocomplete": "username", "labelled": true], "code": ["autocomplete": "one-time-code", "labelled": true],
            ])
            #expect(seen["code_autofill"]?["code"] == ["type": "text", "autocomplete": "one-time-code", "inputmode": "numeric", "readonly": false])
            #expect(seen["after_wrong"] == page("latchkey", AuthorizeRoutes.emailCodePath(.signIn), "Check your email"))
            #expect(seen["wrong_alert"] == "That code is not right. Please check the message and try again.")
            #expect(seen["callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["callback"] == ["has_code": true, "state": "state-code", "iss": .string(server.baseURL), "error": nil])
            #expect(seen["cookies_after_code"]?["__Host-latchkey_session"]?["http_only"] == true)

            #expect(try await Self.browserSessionMethods(server, userID) == [["email"]])
            let events = try await Self.audit(server, userID)
            for (event, count) in [("email.requested", 1), ("email.failed", 1), ("browser_session.started", 1), ("oauth.code_issued", 1)] {
                #expect(events.filter { $0 == event }.count == count, "\(event) in \(events)")
            }
            #expect(try await PasswordAccountTests.logIn(server, "hopper@example.com", Self.password).status == 200, "the password is untouched")
            Self.expectScreenshots(["email-code"], since: start)
        }
    }
}
