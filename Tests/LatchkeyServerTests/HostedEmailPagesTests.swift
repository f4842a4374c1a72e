import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// "Forgot password?" and "Email me a code" on the hosted sign-in page: the pages' markup, and
/// each flow over HTTP as a browser walks it (cookies kept, redirects followed), the mail read
/// from the development mailbox, and what each step left in the database and the audit log.
@Suite("Hosted pages: forgot password and email me a code (S32, S29)")
struct HostedEmailPagesTests {
    static let address = OAuthBrowser.username
    static let newPassword = "a brand new passphrase"

    // MARK: Helpers

    /// The `href` of the link (or link styled as a button) whose text is `text`, unescaped.
    static func link(_ text: String, in page: TestResponse) -> String? {
        let pattern = #"<a (?:class="[^"]*" )?href="([^"]*)">"# + NSRegularExpression.escapedPattern(for: text) + "</a>"
        let expression = try! NSRegularExpression(pattern: pattern)
        let html = page.text
        guard let match = expression.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)) else { return nil }
        return String(html[Range(match.range(at: 1), in: html)!])
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The heading of a page.
    static func heading(_ page: TestResponse) -> String? {
        page.text.firstMatch(of: /<h1>([^<]*)<\/h1>/).map { String($0.output.1) }
    }

    /// The alert of a page, if any.
    static func alert(_ page: TestResponse) -> String? {
        page.text.firstMatch(of: /<p class="alert" role="alert">([^<]*)<\/p>/).map { String($0.output.1) }
    }

    /// The pending flow the browser's `__Host-latchkey_email` cookie names.
    static func pendingFlow(_ browser: OAuthBrowser) throws -> JSONValue {
        let cookie = try #require(browser.cookies[HostedEmailFlow.cookieName])
        return try JSONValue(parsing: try #require(Base64URL.decode(cookie)))
    }

    /// The flow's row.
    static func flowRow(_ server: TestServer, _ browser: OAuthBrowser) async throws -> SQLRow {
        let id = try #require(try pendingFlow(browser)["flow_id"]?.stringValue)
        return try #require(try await EmailFlowTests.flow(server, id))
    }

    /// Opens `attempt`, follows the sign-in page's link `text`, and submits `email` on the
    /// address page; returns the code page.
    static func start(_ browser: OAuthBrowser, _ attempt: AuthorizationAttempt, link text: String, email: String = address) async throws -> TestResponse {
        let signIn = try await browser.open(attempt)
        let href = try #require(Self.link(text, in: signIn), "\(text) on \(Self.heading(signIn) ?? "")")
        let addressPage = try await browser.follow(try await browser.send(href))
        #expect(addressPage.status == 200)
        return try await browser.submit(addressPage, ["email": email])
    }

    /// The audit entries of `event`, newest first.
    static func audit(_ server: TestServer, _ event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(event: event, limit: 100)
    }

    /// The browser sessions of a user: their `amr` and whether they ended.
    static func browserSessions(_ server: TestServer, _ userID: String) async throws -> [(amr: Set<String>, ended: Bool)] {
        try await server.database.read {
            try $0.query("SELECT amr, ended_at FROM browser_sessions WHERE user_id = ? ORDER BY created_at", [.text(userID)])
        }.map { row in
            let amr = try JSONValue(parsing: Array(try row.string("amr").utf8)).arrayValue?.compactMap(\.stringValue) ?? []
            return (Set(amr), row.optionalDate("ended_at") != nil)
        }
    }

    // MARK: Markup

    @Test("sign-in page: Forgot password? as a link and Email me a code as a button, only when given; sign-up page: Email me a code")
    func signInAndSignUpLinks() throws {
        let form = HostedPagesTests.form
        let html = SignInPage(
            form: form, signUpLink: "/oauth/authorize?prompt=create", forgotPasswordLink: "/oauth/authorize/password-reset?client_id=app",
            emailCodeLink: "/oauth/authorize/email-sign-in?client_id=app"
        ).render().text
        HostedPagesTests.expectAccessibleDocument(html, hasForm: true)
        #expect(html.contains(#"<div class="links"><p><a href="/oauth/authorize/password-reset?client_id=app">Forgot password?</a></p></div>"#))
        #expect(html.contains(#"<p class="separator">or</p>"# + "\n" + #"<a class="button secondary" href="/oauth/authorize/email-sign-in?client_id=app">Email me a code</a>"#))
        #expect(html.range(of: "Forgot password?")!.lowerBound > html.range(of: "</form>")!.lowerBound, "after the form: the form's fields come first")
        #expect(Self.tags("button", html) == 1, "links, not buttons of the form")
        let plain = SignInPage(form: form).render().text
        #expect(!plain.contains("Forgot password?") && !plain.contains("Email me a code") && !plain.contains("separator"))
        let signUp = SignUpPage(form: form, signInLink: "/oauth/authorize", emailCodeLink: "/oauth/authorize/email-sign-in?prompt=create").render().text
        #expect(signUp.contains(#"href="/oauth/authorize/email-sign-in?prompt=create">Email me a code</a>"#))
        #expect(!SignUpPage(form: form).render().text.contains("Email me a code"))
    }

    static func tags(_ name: String, _ html: String) -> Int { HostedPagesTests.tags(name, in: html).count }

    @Test("address page: one email field that AutoFill fills (username), the kept address, the error before the form, a way back")
    func addressPageFields() throws {
        for kind in [EmailPageKind.passwordReset, .signIn, .signUp] {
            let html = EmailAddressPage(
                kind: kind, clientName: "Notes", form: HostedPagesTests.form, email: "ada@example.com", error: "Please enter an email address.",
                backLink: "/oauth/authorize?client_id=app"
            ).render().text
            HostedPagesTests.expectAccessibleDocument(html, hasForm: true)
            let visible = HostedPagesTests.tags("input", in: html).filter { $0["type"] != "hidden" }
            #expect(visible.count == 1)
            let email = try #require(visible.first)
            #expect(email["type"] == "email" && email["name"] == "email" && email["autocomplete"] == "username" && email["value"] == "ada@example.com")
            #expect(email["required"] != nil)
            let alert = try #require(html.range(of: #"role="alert">Please enter an email address."#))
            #expect(alert.upperBound <= html.range(of: "<form")!.lowerBound)
            #expect(html.contains("to continue to Notes"))
            #expect(html.contains(#"href="/oauth/authorize?client_id=app">\#(kind.backText)</a>"#))
        }
        #expect(EmailAddressPage(kind: .passwordReset, form: HostedPagesTests.form, email: "").render().text.contains("<h1>Reset your password</h1>"))
        #expect(EmailAddressPage(kind: .signIn, form: HostedPagesTests.form, email: "").render().text.contains("<h1>Sign in with a code</h1>"))
    }

    @Test("code page: one-time-code with a numeric keypad, the address in a read-only username field, new-password for a reset only")
    func codePageFields() throws {
        let reset = EmailCodePage(
            kind: .passwordReset, form: HostedPagesTests.form, email: "ada@example.com", minutes: 15, error: "That code is not right.",
            newCodeLink: "/oauth/authorize/password-reset?client_id=app", backLink: "/oauth/authorize?client_id=app"
        ).render().text
        HostedPagesTests.expectAccessibleDocument(reset, hasForm: true)
        let inputs = HostedPagesTests.tags("input", in: reset)
        let username = try #require(inputs.first { $0["name"] == "username" })
        #expect(username["autocomplete"] == "username" && username["value"] == "ada@example.com" && username["readonly"] != nil)
        let code = try #require(inputs.first { $0["name"] == "code" })
        #expect(code["autocomplete"] == "one-time-code" && code["inputmode"] == "numeric" && code["type"] == "text")
        let password = try #require(inputs.first { $0["name"] == "password" })
        #expect(password["type"] == "password" && password["autocomplete"] == "new-password" && password["value"] == nil)
        // AutoFill saves the new password under the username that comes before it.
        #expect(reset.range(of: #"id="username""#)!.lowerBound < reset.range(of: #"id="password""#)!.lowerBound)
        #expect(reset.contains("If an account uses this address, we sent it a message with a 6-digit code."))
        #expect(reset.contains("works once, for 15 minutes"))
        #expect(reset.contains(#"role="alert">That code is not right."#))
        #expect(reset.contains(#"href="/oauth/authorize/password-reset?client_id=app">Send a new code</a>"#))
        #expect(HostedPagesTests.tags("button", in: reset).map { $0["type"] } == ["submit"])

        let signIn = EmailCodePage(kind: .signIn, form: HostedPagesTests.form, email: "ada@example.com", minutes: 15).render().text
        HostedPagesTests.expectAccessibleDocument(signIn, hasForm: true)
        #expect(HostedPagesTests.tags("input", in: signIn).first { $0["name"] == "code" }?["autocomplete"] == "one-time-code")
        #expect(!signIn.contains(#"name="password""#))
        #expect(signIn.contains("If an account uses this address"))
        #expect(EmailCodePage(kind: .signUp, form: HostedPagesTests.form, email: "a@example.com", minutes: 15).render().text
            .contains("We sent a message with a 6-digit code to this address."))
    }

    @Test("S29: hostile text in the address, the client name, the error and the links comes out escaped on both pages")
    func hostileInputIsEscapedS29() {
        let hostile = HostedPagesTests.hostile
        let form = HostedForm(action: "/oauth/authorize", csrfToken: hostile, hidden: [HiddenField(name: hostile, value: hostile)])
        let pages = [
            EmailAddressPage(kind: .signIn, clientName: hostile, form: form, email: hostile, error: hostile, backLink: "/b?q=" + hostile).render().text,
            EmailCodePage(
                kind: .passwordReset, clientName: hostile, form: form, email: hostile, minutes: 15, error: hostile, newCodeLink: "/n?q=" + hostile,
                backLink: "/b?q=" + hostile
            ).render().text,
        ]
        for (html, count) in zip(pages, [7, 8]) {
            #expect(!html.lowercased().contains("<script") && !html.contains(hostile) && !html.contains("'x'"))
            #expect(html.components(separatedBy: HostedPagesTests.hostileEscaped).count - 1 == count, "every occurrence escaped")
        }
    }

    // MARK: Forgot password

    @Test("S32: forgot password on the hosted pages: the code and a new password sign in and the authorization goes on; the wrong code and the weak password keep the flow")
    func forgotPasswordSignsIn() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            let (userID, old) = try await server.passwordUser()
            let browser = OAuthBrowser(server)
            let attempt = AuthorizationAttempt(client)

            let codePage = try await Self.start(browser, attempt, link: "Forgot password?")
            #expect(codePage.status == 200 && Self.heading(codePage) == "Choose a new password")
            #expect(codePage.text.contains("If an account uses this address, we sent it a message with a 6-digit code."))
            #expect(HostedPagesTests.tags("input", in: codePage.text).first { $0["name"] == "username" }?["value"] == Self.address)
            #expect(try Self.pendingFlow(browser)["purpose"] == "reset" && Self.pendingFlow(browser)["email"] == .string(Self.address))
            let mail = try await EmailFlowTests.mail(server, to: Self.address)
            #expect(mail.subject == "Reset your Latchkey password")
            #expect(try await Self.audit(server, "email.requested").first?.details["purpose"] == "reset")

            // A wrong code: the same page, the reason said; the try is counted and audited.
            let wrongCode = mail.code == "000000" ? "111111" : "000000"
            let wrong = try await browser.submit(codePage, ["code": wrongCode, "password": Self.newPassword])
            #expect(Self.heading(wrong) == "Choose a new password")
            #expect(Self.alert(wrong) == "That code is not right. Please check the message and try again.")
            #expect(try await Self.flowRow(server, browser).int("attempts") == 1)
            #expect(try await Self.audit(server, "email.failed").first?.details == ["purpose": "reset", "reason": "invalid_code"])

            // A password the rules refuse: the same page with the rules' reason; the flow is kept.
            let weak = try await browser.submit(wrong, ["code": mail.code, "password": "short"])
            #expect(Self.heading(weak) == "Choose a new password")
            #expect(Self.alert(weak) == "The password cannot be used: password must be at least 8 characters long.")
            let kept = try await Self.flowRow(server, browser)
            #expect(try kept.optionalDate("ended_at") == nil && kept.int("attempts") == 1)

            // The right code and a good password: signed in, and on to the client with a code.
            let done = try await browser.submit(weak, ["code": " " + mail.code + " ", "password": Self.newPassword])
            let callback = try #require(try OAuthBrowser.callback(done), "back at the client: \(Self.heading(done) ?? "")")
            // Read outside #expect, which would print the code of a failed check.
            let (hasCode, state) = (callback.code != nil, callback.parameters["state"])
            #expect(hasCode && state == attempt.parameters["state"])
            #expect(browser.cookies[HostedEmailFlow.cookieName] == nil, "the flow's cookie is gone")
            #expect(browser.cookies["__Host-latchkey_session"] != nil)
            let tokens = try await server.exchange(callback, attempt, as: client).oauthTokens
            let amr = try Insecure.unverifiedContents(of: try #require(tokens.idToken)).claims["amr"]
            #expect(amr == ["email"])

            // What it left: the password changed, the old /v1 session ended, the flow used, one
            // browser session signed in by email.
            #expect(try await PasswordAccountTests.logIn(server, Self.address, OAuthBrowser.password).status == 401)
            #expect(try await PasswordAccountTests.logIn(server, Self.address, Self.newPassword).status == 200)
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(old.accessToken)"]).status == 401)
            let sessions = try await Self.browserSessions(server, userID)
            #expect(sessions.count == 1 && sessions.first?.amr == ["email"] && sessions.first?.ended == false)
            let events = try await server.auditEvents(userID)
            for event in ["email.requested", "email.failed", "password.reset", "browser_session.started", "oauth.code_issued"] {
                #expect(events.contains(event), "\(event) in \(events)")
            }
            #expect(try await Self.audit(server, "password.reset").first?.details["sessions_ended"] == "1")
        }
    }

    @Test("S32: forgot password says the same for an unknown address, mails nothing, and no code signs anyone in")
    func forgotPasswordNoEnumeration() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            _ = try await server.passwordUser()
            let known = OAuthBrowser(server)
            let unknown = OAuthBrowser(server)
            let attempt = AuthorizationAttempt(client)
            let knownPage = try await Self.start(known, attempt, link: "Forgot password?")
            let unknownPage = try await Self.start(unknown, attempt, link: "Forgot password?", email: "nobody@example.com")
            #expect(knownPage.status == unknownPage.status)
            // The pages differ only in the address shown and the form's CSRF token.
            func normalised(_ page: TestResponse, _ email: String) throws -> String {
                let token = try OAuthBrowser.form(in: page.text).fields["csrf_token"] ?? ""
                return page.text.replacingOccurrences(of: email, with: "ADDRESS").replacingOccurrences(of: token, with: "TOKEN")
            }
            #expect(try normalised(knownPage, Self.address) == normalised(unknownPage, "nobody@example.com"))
            _ = try await EmailFlowTests.mail(server, to: Self.address)
            #expect(try await EmailFlowTests.mailbox(server, to: "nobody@example.com").isEmpty)
            let row = try await Self.flowRow(server, unknown)
            #expect(row.optionalString("user_id") == nil && row.optionalString("purpose") == "reset")
            let refused = try await unknown.submit(unknownPage, ["code": "123456", "password": Self.newPassword])
            #expect(Self.alert(refused) == "That code is not right. Please check the message and try again.")
            #expect(unknown.cookies["__Host-latchkey_session"] == nil)
            #expect(try await Self.audit(server, "email.requested").count == 2)
        }
    }

    @Test("S32, S5: a reset never skips the second factor: after the code and the new password, the second-factor page, then the client")
    func forgotPasswordThenSecondFactor() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            let (userID, signedUp) = try await server.passwordUser()
            let bearer = ["Authorization": "Bearer \(signedUp.accessToken)"]
            let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
            let secret = TOTPTests.base32Decode(begin.secret)
            let confirm = try await server.request(
                .post, "/v1/totp/confirm", json: ["code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)))], headers: bearer)
            #expect(confirm.status == 200)
            server.clock.advance(by: 60)

            let browser = OAuthBrowser(server)
            let attempt = AuthorizationAttempt(client)
            let codePage = try await Self.start(browser, attempt, link: "Forgot password?")
            let mail = try await EmailFlowTests.mail(server, to: Self.address)
            let secondFactor = try await browser.submit(codePage, ["code": mail.code, "password": Self.newPassword])
            #expect(Self.heading(secondFactor) == "Enter your code")
            #expect(browser.cookies["__Host-latchkey_session"] == nil, "not signed in yet")
            #expect(browser.cookies[HostedEmailFlow.cookieName] == nil)
            // The password is set all the same, and every session ended.
            #expect(try await server.request(.get, "/v1/me", headers: bearer).status == 401)
            #expect(try await Self.audit(server, "mfa.required").first?.details["method"] == "email")

            let done = try await browser.submit(secondFactor, ["code": TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))])
            let callback = try #require(try OAuthBrowser.callback(done))
            let hasCode = callback.code != nil
            #expect(hasCode)
            let sessions = try await Self.browserSessions(server, userID)
            #expect(sessions.count == 1 && sessions.first?.amr == ["email", "otp", "mfa"])
            let events = try await server.auditEvents(userID)
            #expect(events.contains("password.reset") && events.contains("totp.used") && events.contains("browser_session.started"))
        }
    }

    @Test("S32: an ended flow sends the browser back to the address page, saying why: too many wrong codes, expired, replaced, used by the mailed link")
    func endedFlows() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            _ = try await server.passwordUser()
            let attempt = AuthorizationAttempt(client)

            // Five wrong codes end the flow; the sixth try, even right, is refused.
            let browser = OAuthBrowser(server)
            var page = try await Self.start(browser, attempt, link: "Forgot password?")
            let mail = try await EmailFlowTests.mail(server, to: Self.address)
            let wrongCode = mail.code == "000000" ? "111111" : "000000"
            for _ in 0..<5 { page = try await browser.submit(page, ["code": wrongCode, "password": Self.newPassword]) }
            #expect(Self.heading(page) == "Choose a new password")
            let dead = try await browser.submit(page, ["code": mail.code, "password": Self.newPassword])
            #expect(Self.heading(dead) == "Reset your password")
            #expect(Self.alert(dead) == "Too many wrong codes. Please ask for a new one.")
            #expect(browser.cookies[HostedEmailFlow.cookieName] == nil)
            #expect(HostedPagesTests.tags("input", in: dead.text).first { $0["name"] == "email" }?["value"] == Self.address, "the address is kept")

            // Expired after email.code_ttl.
            page = try await browser.submit(dead, ["email": Self.address])
            let second = try await EmailFlowTests.mail(server, to: Self.address, count: 2)
            server.clock.advance(by: 901)
            let expired = try await browser.submit(page, ["code": second.code, "password": Self.newPassword])
            #expect(Self.alert(expired) == "The code has expired. Please ask for a new one.")

            // Replaced by a newer request for the same address (here, from the app).
            page = try await browser.submit(expired, ["email": Self.address])
            let third = try await EmailFlowTests.mail(server, to: Self.address, count: 3)
            #expect(try await server.request(.post, "/v1/auth/password/reset", json: ["email": .string(Self.address)]).status == 202)
            // Its message arrives before the next request's, which the test reads as the fifth.
            _ = try await EmailFlowTests.mail(server, to: Self.address, count: 4)
            let replaced = try await browser.submit(page, ["code": third.code, "password": Self.newPassword])
            #expect(Self.alert(replaced) == "A newer message replaced this code. Please ask for a new one.")

            // Used by the mailed link in the same browser: the link's page sets the password.
            page = try await browser.submit(replaced, ["email": Self.address])
            let fifth = try await EmailFlowTests.mail(server, to: Self.address, count: 5)
            let linkPage = try await browser.send(fifth.link)
            #expect(linkPage.status == 200 && Self.heading(linkPage) == "Choose a new password")
            let (action, fields) = try OAuthBrowser.form(in: linkPage.text)
            let linked = try await browser.send(action, form: fields.merging(["password": Self.newPassword]) { $1 })
            #expect(linked.status == 200 && Self.heading(linked) == "Password changed")
            let used = try await browser.submit(page, ["code": fifth.code, "password": "yet another passphrase"])
            #expect(Self.alert(used) == "This code was used already. If you chose a new password with the link in the message, sign in with it.")
            #expect(try await PasswordAccountTests.logIn(server, Self.address, Self.newPassword).status == 200)

            let reasons = try await Self.audit(server, "email.failed").compactMap { $0.details["reason"] }
            for reason in ["invalid_code", "too_many_attempts", "expired", "superseded", "used"] { #expect(reasons.contains(reason), "\(reason)") }
        }
    }

    // MARK: Email me a code

    @Test("S32: email me a code signs in and the authorization goes on to consent, as after a password sign-in; amr email")
    func emailCodeSignsIn() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(name: "Example Photos")
            let (userID, _) = try await server.passwordUser()
            let browser = OAuthBrowser(server)
            let attempt = AuthorizationAttempt(client)
            let codePage = try await Self.start(browser, attempt, link: "Email me a code")
            #expect(Self.heading(codePage) == "Check your email")
            #expect(!codePage.text.contains(#"name="password""#))
            #expect(try Self.pendingFlow(browser)["purpose"] == "sign-in")
            let mail = try await EmailFlowTests.mail(server, to: Self.address)
            #expect(mail.subject == "Your Latchkey sign-in code")

            let wrongCode = mail.code == "000000" ? "111111" : "000000"
            let wrong = try await browser.submit(codePage, ["code": wrongCode])
            #expect(Self.alert(wrong) == "That code is not right. Please check the message and try again.")
            let consent = try await browser.submit(wrong, ["code": mail.code])
            #expect(Self.heading(consent) == "Allow Example Photos access?")
            let callback = try #require(try OAuthBrowser.callback(try await browser.submit(consent, ["decision": "allow"])))
            // Read outside #expect, which would print the code of a failed check.
            let (hasCode, state) = (callback.code != nil, callback.parameters["state"])
            #expect(hasCode && state == attempt.parameters["state"])

            let sessions = try await Self.browserSessions(server, userID)
            #expect(sessions.count == 1 && sessions.first?.amr == ["email"])
            #expect(try await Self.audit(server, "email.requested").first?.details["purpose"] == "sign-in")
            let events = try await server.auditEvents(userID)
            for event in ["email.requested", "email.failed", "browser_session.started", "consent.granted", "oauth.code_issued"] {
                #expect(events.contains(event), "\(event) in \(events)")
            }
            let flow = try await server.database.read { try $0.queryOne("SELECT ended_reason FROM email_flows WHERE purpose = 'sign-in'", []) }
            #expect(flow?.optionalString("ended_reason") == "used")
        }
    }

    @Test("S32: from the sign-up page (prompt=create) the code creates the account, verified; from the sign-in page an unknown address gets no mail")
    func emailCodeCreatesOnlyFromSignUp() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            let attempt = AuthorizationAttempt(client)

            let signInBrowser = OAuthBrowser(server)
            let unknown = try await Self.start(signInBrowser, attempt, link: "Email me a code", email: "new@example.com")
            #expect(Self.heading(unknown) == "Check your email")
            #expect(try await Self.flowRow(server, signInBrowser).int("may_create") == 0)

            let browser = OAuthBrowser(server)
            let creating = AuthorizationAttempt(client, extra: ["prompt": "create"])
            let signUp = try await browser.open(creating)
            #expect(Self.heading(signUp) == "Create an account")
            let href = try #require(Self.link("Email me a code", in: signUp))
            let addressPage = try await browser.follow(try await browser.send(href))
            #expect(Self.heading(addressPage) == "Create an account with a code")
            let codePage = try await browser.submit(addressPage, ["email": "New@Example.com"])
            #expect(codePage.text.contains("We sent a message with a 6-digit code to this address."))
            #expect(HostedPagesTests.tags("input", in: codePage.text).first { $0["name"] == "username" }?["value"] == "new@example.com", "normalised")
            let mail = try await EmailFlowTests.mail(server, to: "new@example.com")
            #expect(try await EmailFlowTests.mailbox(server, to: "new@example.com").count == 1, "only the sign-up's request mailed")
            let callback = try #require(try OAuthBrowser.callback(try await browser.submit(codePage, ["code": mail.code])))
            let hasCode = callback.code != nil
            #expect(hasCode)

            let user = try #require(try await server.database.read { try $0.queryOne("SELECT id, email_verified FROM users WHERE email = ?", [.text("new@example.com")]) })
            #expect(try user.int("email_verified") == 1)
            #expect(try await Self.browserSessions(server, try user.string("id")).first?.amr == ["email"])
        }
    }

    // MARK: Refusals

    @Test("S29: the address and code forms without their CSRF token, or from another browser, start nothing and spend nothing")
    func csrfRequiredS29() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            _ = try await server.passwordUser()
            let attempt = AuthorizationAttempt(client)
            let browser = OAuthBrowser(server)
            let signIn = try await browser.open(attempt)
            let addressPage = try await browser.follow(try await browser.send(try #require(Self.link("Forgot password?", in: signIn))))
            let (action, hidden) = try OAuthBrowser.form(in: addressPage.text)
            var forged = hidden.merging(["email": Self.address]) { $1 }
            forged["csrf_token"] = nil
            let refused = try await browser.send(action, form: forged)
            #expect(refused.status == 303 && refused.headers["Location"]?.hasPrefix(AuthorizeRoutes.passwordResetPath + "?") == true)
            #expect(Self.alert(try await browser.follow(refused)) == "This page had expired. Please try again.")
            let stranger = try await OAuthBrowser(server).send(action, form: hidden.merging(["email": Self.address]) { $1 })
            #expect(stranger.status == 303)
            #expect(try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM email_flows", [])?.int("n") } == 0)

            let codePage = try await browser.submit(addressPage, ["email": Self.address])
            let mail = try await EmailFlowTests.mail(server, to: Self.address)
            let (codeAction, codeHidden) = try OAuthBrowser.form(in: codePage.text)
            var noToken = codeHidden.merging(["code": mail.code, "password": Self.newPassword]) { $1 }
            noToken["csrf_token"] = "forged"
            let again = try await browser.follow(try await browser.send(codeAction, form: noToken))
            #expect(Self.heading(again) == "Choose a new password" && Self.alert(again) == "This page had expired. Please try again.")
            let row = try await Self.flowRow(server, browser)
            #expect(try row.int("attempts") == 0 && row.optionalDate("ended_at") == nil)
            #expect(browser.cookies["__Host-latchkey_session"] == nil)
        }
    }

    @Test("a code page without a pending flow goes to the address page; a bad address and too many requests are said in words")
    func addressRefusals() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            let attempt = AuthorizationAttempt(client)
            let query = PercentEncoding.encodeForm(attempt.parameters)
            let browser = OAuthBrowser(server)
            let noFlow = try await browser.send(AuthorizeRoutes.emailCodePath(.signIn) + "?" + query)
            #expect(noFlow.status == 303 && noFlow.headers["Location"] == AuthorizeRoutes.emailSignInPath + "?" + query)

            let signIn = try await browser.open(attempt)
            var page = try await browser.follow(try await browser.send(try #require(Self.link("Email me a code", in: signIn))))
            page = try await browser.submit(page, ["email": "not an address"])
            #expect(Self.heading(page) == "Sign in with a code" && Self.alert(page) == "Please enter an email address.")
            #expect(HostedPagesTests.tags("input", in: page.text).first { $0["name"] == "email" }?["value"] == "not an address")
            for _ in 0..<5 {
                page = try await browser.submit(page, ["email": "grace@example.com"])
                #expect(Self.heading(page) == "Check your email")
                page = try await browser.follow(try await browser.send(try #require(Self.link("Send a new code", in: page))))
                #expect(HostedPagesTests.tags("input", in: page.text).first { $0["name"] == "email" }?["value"] == "grace@example.com", "the pending address")
            }
            let limited = try await browser.submit(page, ["email": "grace@example.com"])
            #expect(Self.heading(limited) == "Sign in with a code")
            #expect(Self.alert(limited)?.hasPrefix("Too many attempts. Please wait") == true)
        }
    }

    // MARK: Where mail cannot be sent

    @Test("without mail (production without SMTP) the sign-in page links neither flow and the routes do not exist; without passwords, no Forgot password?")
    func offeredOnlyWithMail() async throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("master-\(UUID()).key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        try await TestServer.with({ configuration in
            configuration.dev = false
            configuration.masterKeyFile = keyFile.path
            configuration.apple.clientIDs = []
        }) { server in
            #expect(server.application.services.email == nil)
            let client = try await server.registerClient(firstParty: true)
            let signIn = try await OAuthBrowser(server).open(AuthorizationAttempt(client))
            #expect(Self.heading(signIn) == "Sign in")
            #expect(!signIn.text.contains("Forgot password?") && !signIn.text.contains("Email me a code"))
            #expect(!server.application.router.routes.contains { $0.pattern.hasPrefix(AuthorizeRoutes.passwordResetPath) || $0.pattern.hasPrefix(AuthorizeRoutes.emailSignInPath) })
        }
        try await TestServer.with({ $0.password.enabled = false }) { server in
            let client = try await server.registerClient(firstParty: true)
            let signIn = try await OAuthBrowser(server).open(AuthorizationAttempt(client))
            #expect(!signIn.text.contains("Forgot password?") && signIn.text.contains("Email me a code"))
            let routes = server.application.router.routes.map(\.pattern)
            #expect(!routes.contains(AuthorizeRoutes.passwordResetPath) && routes.contains(AuthorizeRoutes.emailSignInPath))
        }
    }

    @Test("S23, S29: the new pages and their 303s carry the hosted pages' headers; no script, no inline style, so the policy needs no unsafe-inline")
    func headersAndPolicy() async throws {
        try await TestServer.with { server in
            let client = try await server.registerClient(firstParty: true)
            _ = try await server.passwordUser()
            let browser = OAuthBrowser(server)
            let attempt = AuthorizationAttempt(client)
            let signIn = try await browser.open(attempt)
            let addressPage = try await browser.send(try #require(Self.link("Forgot password?", in: signIn)))
            let posted = try await browser.send(
                AuthorizeRoutes.passwordResetPath,
                form: try OAuthBrowser.form(in: addressPage.text).fields.merging(["email": Self.address]) { $1 })
            #expect(posted.status == 303 && posted.headers["Location"]?.hasPrefix(AuthorizeRoutes.emailCodePath(.reset) + "?") == true)
            let flowCookie = try #require(posted.headers.values("Set-Cookie").first { $0.hasPrefix(HostedEmailFlow.cookieName + "=") })
            for attribute in ["Path=/", "Max-Age=900", "Secure", "HttpOnly", "SameSite=Lax"] { #expect(flowCookie.contains("; \(attribute)")) }
            let codePage = try await browser.follow(posted)
            for response in [addressPage, posted, codePage] {
                let policy = try #require(response.headers["Content-Security-Policy"])
                #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"))
                #expect(response.headers["Cache-Control"] == "no-store" && response.headers["X-Frame-Options"] == "DENY")
            }
            for page in [addressPage, codePage] {
                #expect(page.status == 200 && !page.text.lowercased().contains("<script") && !page.text.contains("style="))
            }
        }
    }

    @Test("the mailed sign-in link's page, opened in a browser, says where the code goes: the app or the sign-in page that asked")
    func signInLinkPage() async throws {
        try await TestServer.with { server in
            _ = try await server.passwordUser()
            #expect(try await server.request(.post, "/v1/auth/email/start", json: ["email": .string(Self.address)]).status == 202)
            let mail = try await EmailFlowTests.mail(server, to: Self.address)
            let page = try await server.request(.get, mail.link)
            #expect(page.status == 200 && page.text.contains("<h1>Enter the code</h1>"))
            #expect(page.text.contains("in the app, or on the sign-in page"))
        }
    }
}
