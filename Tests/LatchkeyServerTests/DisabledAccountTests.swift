import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeySandbox
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// Disabled accounts (S50–S52): every sign-in method refused with 403 `account_disabled`, every
/// token endpoint with `invalid_grant` reason `account_disabled`, the sessions ended in the
/// disabling's transaction, the compare-and-set, and the CLI.
@Suite("Disabled accounts")
struct DisabledAccountTests {
    /// Disables `userID` as an admin would, through the service the admin API calls.
    @discardableResult
    static func disable(_ server: TestServer, _ userID: String) async throws -> Bool {
        var context = RequestContext(ip: "203.0.113.9", requestID: "req-disable")
        context.actor = "usr_admin"
        return try await server.application.services.accounts.disable(userID: userID, context: context)
    }

    /// Expects the 403 `account_disabled` of a refused sign-in.
    static func expectRefused(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == 403, "\(response.text)", sourceLocation: sourceLocation)
        #expect(try response.wireError.error == .accountDisabled, sourceLocation: sourceLocation)
    }

    /// Expects the 400 `invalid_grant` with reason `account_disabled` of a token endpoint.
    static func expectGrantRefused(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == 400, "\(response.text)", sourceLocation: sourceLocation)
        #expect(try response.wireError.error == .invalidGrant, sourceLocation: sourceLocation)
        #expect(try response.wireError.grantFailure == .accountDisabled, sourceLocation: sourceLocation)
    }

    static func count(_ server: TestServer, _ sql: String, _ userID: String) async throws -> Int64 {
        try await server.database.read { try $0.queryOne(sql, [.text(userID)])!.int("n") }
    }

    static func liveSessions(_ server: TestServer, _ userID: String) async throws -> Int64 {
        try await count(server, "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND revoked_at IS NULL", userID)
    }

    // MARK: Disabling

    @Test("S51, S52: disabling ends the /v1, OAuth grant and browser sessions in one transaction, audited with the actor; tokens, refreshes and codes stop")
    func s51DisablingEndsEverySession() async throws {
        try await OAuthProtocolTests.with(firstParty: true) { server, client, userID, browser in
            let login = try await PasswordAccountTests.logIn(server, OAuthBrowser.username, OAuthBrowser.password)
            let v1 = try login.tokens
            let attempt = AuthorizationAttempt(client)
            let exchanged = try await server.exchange(try await browser.authorize(attempt), attempt, as: client)
            #expect(exchanged.status == 200, "\(exchanged.text)")
            let oauth = try exchanged.oauthTokens
            // A second code, issued from the live browser session and not yet exchanged.
            let pendingAttempt = AuthorizationAttempt(client)
            let pending = try await browser.authorize(pendingAttempt)
            #expect(pending.code != nil)
            #expect(try await Self.liveSessions(server, userID) == 3, "the sign-up's, the login's and the grant's")
            #expect(try await server.request(.get, "/v1/me", headers: try login.bearer).status == 200)

            #expect(try await Self.disable(server, userID))

            // S51: the rows, all in the one transaction.
            #expect(try await Self.liveSessions(server, userID) == 0)
            let reasons = try await server.database.read {
                try $0.query("SELECT DISTINCT revoked_reason FROM sessions WHERE user_id = ?", [.text(userID)]).map { $0.optionalString("revoked_reason") }
            }
            #expect(reasons == ["account_disabled"])
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM browser_sessions WHERE user_id = ? AND ended_at IS NULL", userID) == 0)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM users WHERE id = ? AND disabled_at IS NOT NULL", userID) == 1)
            let audit = AuditLog(database: server.database)
            let disabled = try await audit.entries(userID: userID, event: "account.disabled")
            #expect(disabled.count == 1)
            #expect(disabled.first?.details == ["actor": "usr_admin", "sessions_ended": "3"])
            #expect(disabled.first?.ip == "203.0.113.9" && disabled.first?.requestID == "req-disable")
            let revoked = try await audit.entries(userID: userID, event: "session.revoked")
            #expect(revoked.count == 3 && revoked.allSatisfy { $0.details["reason"] == "account_disabled" && $0.requestID == "req-disable" })
            let ended = try await audit.entries(userID: userID, event: "browser_session.ended")
            #expect(ended.count == 1 && ended.first?.details["reason"] == "account_disabled")

            // S52: the access token of the /v1 session stops at once in this process.
            let me = try await server.request(.get, "/v1/me", headers: try login.bearer)
            #expect(try me.status == 401 && me.wireError.error == .invalidToken)
            // S51: each token endpoint refuses with the reason.
            try Self.expectGrantRefused(try await SessionTests.refresh(server, v1.refreshToken))
            try Self.expectGrantRefused(try await server.refresh(try #require(oauth.refreshToken), as: client))
            try Self.expectGrantRefused(try await server.exchange(pending, pendingAttempt, as: client))
            #expect(try await Self.liveSessions(server, userID) == 0, "the refused exchange made no session")
        }
    }

    @Test("S51: disabling is a compare-and-set: the second reports nothing changed and writes nothing; enabling restores sign-in but no session; an unknown user is not_found")
    func s51CompareAndSetAndEnable() async throws {
        try await TestServer.with { server in
            let (userID, signUp) = try await server.passwordUser()
            // Concurrent disablings: exactly one changes the account.
            async let first = Self.disable(server, userID)
            async let second = Self.disable(server, userID)
            #expect(try await [first, second].filter { $0 }.count == 1)
            #expect(try await Self.disable(server, userID) == false)
            let audit = AuditLog(database: server.database)
            #expect(try await audit.entries(userID: userID, event: "account.disabled").count == 1)

            let accounts = server.application.services.accounts
            var context = RequestContext(requestID: "req-enable")
            context.actor = "usr_admin"
            #expect(try await accounts.enable(userID: userID, context: context))
            #expect(try await accounts.enable(userID: userID, context: context) == false)
            let enabled = try await audit.entries(userID: userID, event: "account.enabled")
            #expect(enabled.count == 1 && enabled.first?.details == ["actor": "usr_admin"])
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM users WHERE id = ? AND disabled_at IS NULL", userID) == 1)

            // The ended session stays ended; a new sign-in works.
            try Self.expectGrantRefused(try await SessionTests.refresh(server, signUp.refreshToken))
            #expect(try await Self.liveSessions(server, userID) == 0)
            let again = try await PasswordAccountTests.logIn(server, OAuthBrowser.username, OAuthBrowser.password)
            #expect(again.status == 200, "\(again.text)")
            #expect(try await server.request(.get, "/v1/me", headers: try again.bearer).status == 200)

            await #expect(throws: AuthError.notFound()) { try await Self.disable(server, "usr_nobody") }
            await #expect(throws: AuthError.notFound()) { try await accounts.enable(userID: "usr_nobody", context: .operatorCLI) }
        }
    }

    // MARK: Every sign-in method (S50)

    @Test("S50: a password login of a disabled account is refused with 403 account_disabled, only after the password held; no session is made")
    func s50Password() async throws {
        try await TestServer.with { server in
            let (userID, _) = try await server.passwordUser()
            try await Self.disable(server, userID)
            try Self.expectRefused(try await PasswordAccountTests.logIn(server, OAuthBrowser.username, OAuthBrowser.password))
            let wrong = try await PasswordAccountTests.logIn(server, OAuthBrowser.username, "not the password at all")
            #expect(try wrong.status == 401 && wrong.wireError.error == .invalidCredentials)
            #expect(try await Self.liveSessions(server, userID) == 0)
            #expect(server.application.metrics.value(.signIns, ["method": "pwd", "outcome": "failure"]) == 2)
        }
    }

    @Test("S50: the hosted sign-in page says the account is disabled and does not sign in; the ended browser session no longer authorizes")
    func s50HostedPages() async throws {
        try await OAuthProtocolTests.with { server, client, userID, browser in
            _ = try await browser.authorize(AuthorizationAttempt(client))
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM browser_sessions WHERE user_id = ? AND ended_at IS NULL", userID) == 1)
            try await Self.disable(server, userID)

            // The browser's session ended: the authorization asks for a sign-in again.
            let signInPage = try await browser.open(AuthorizationAttempt(client))
            #expect(signInPage.status == 200 && signInPage.text.contains(#"name="password""#), "no code for a disabled account")
            let refused = try await browser.submit(signInPage, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            #expect(refused.status == 200)
            #expect(refused.text.contains("This account is disabled."), "\(refused.text.prefix(800))")
            #expect(try OAuthBrowser.callback(refused) == nil)
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM browser_sessions WHERE user_id = ? AND ended_at IS NULL", userID) == 0)
        }
    }

    @Test("S50: Sign in with Apple (native) of a disabled account is refused with 403 account_disabled")
    func s50Apple() async throws {
        try await TestServer.with { server in
            let sandbox = try #require(server.application.sandbox)
            let (first, credential) = try await AppleFlow.signIn(server, sandbox: sandbox)
            #expect(try first.tokens.created, "\(first.text)")
            let userID = try first.tokens.user.id
            try await Self.disable(server, userID)
            let (again, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: credential.subject)
            try Self.expectRefused(again)
            #expect(try await Self.liveSessions(server, userID) == 0)
        }
    }

    @Test("S50: web Sign in with Apple of a disabled account ends on a 403 page, without a code")
    func s50AppleWeb() async throws {
        try await WebApple.with { server, client in
            let (tokens, _) = try await WebApple.signIn(server, client: client)
            let accessToken = try #require(tokens["access_token"]?.stringValue)
            let userID = try #require(try Insecure.unverifiedContents(of: accessToken).claims["sub"]?.stringValue)
            try await Self.disable(server, userID)
            let browser = WebApple.browser(server)
            let at = try await WebApple.toApple(browser, client: client)
            let back = try await WebApple.callback(browser, try await WebApple.continueAtApple(browser, at))
            #expect(back.status == 403, "\(back.text.prefix(800))")
            #expect(back.text.contains("This account is disabled"))
            #expect(back.location == nil)
        }
    }

    @Test("S50: MFA completion (POST /v1/mfa/verify) of a sign-in begun before the account was disabled is refused with 403 account_disabled")
    func s50MFACompletion() async throws {
        try await TestServer.with { server in
            let (user, _, device, deviceID) = try await DeviceKeyTests.registered(server)
            let (mfaToken, _) = try await MFATests.mfaRequired(server, user)
            let challenge = try await server.request(.post, "/v1/mfa/challenge", json: ["mfa_token": .string(mfaToken), "device_id": .string(deviceID)])
            #expect(challenge.status == 200)
            let (challengeID, signature) = try device.sign(challengeIn: challenge)
            try await Self.disable(server, user.id)
            let response = try await MFATests.verify(
                server, ["mfa_token": .string(mfaToken), "challenge_id": .string(challengeID), "signature": .string(signature)])
            try Self.expectRefused(response)
            #expect(try await Self.liveSessions(server, user.id) == 0)
            // The first factor of a disabled account gets no mfa_token either.
            guard case .failure(let error) = try await server.signIn(user) else {
                Issue.record("expected a refusal")
                return
            }
            #expect(error.code == .accountDisabled)
        }
    }

    @Test("S50: the hosted second-factor page of a sign-in begun before the account was disabled goes back to the sign-in page, saying so, without a code")
    func s50HostedSecondFactor() async throws {
        try await OAuthProtocolTests.with { server, client, userID, browser in
            let login = try await PasswordAccountTests.logIn(server, OAuthBrowser.username, OAuthBrowser.password)
            let bearer = try login.bearer
            let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
            let secret = TOTPTests.base32Decode(begin.secret)
            let confirmed = try await server.request(
                .post, "/v1/totp/confirm", json: ["code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)))], headers: bearer)
            #expect(confirmed.status == 200)
            server.clock.advance(by: 60)
            let signInPage = try await browser.open(AuthorizationAttempt(client))
            let secondFactor = try await browser.submit(signInPage, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            #expect(secondFactor.text.contains(#"autocomplete="one-time-code""#))
            try await Self.disable(server, userID)
            let refused = try await browser.submit(secondFactor, ["code": TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))])
            #expect(try OAuthBrowser.callback(refused) == nil)
            #expect(refused.text.contains(#"name="password""#) && refused.text.contains("This account is disabled."), "\(refused.text.prefix(800))")
            #expect(try await Self.count(server, "SELECT count(*) AS n FROM browser_sessions WHERE user_id = ? AND ended_at IS NULL", userID) == 0)
            #expect(try await Self.liveSessions(server, userID) == 0)
        }
    }

    @Test("S50: a passkey sign-in of a disabled account is refused with 403 account_disabled")
    func s50Passkey() async throws {
        try await PasskeyRegistrationTests.with { server in
            let (user, authenticator, _) = try await PasskeySignInTests.registered(server)
            try await Self.disable(server, user.id)
            let (flowID, challenge, _) = try await PasskeySignInTests.options(server, "/v1/auth/passkey/options")
            let response = try await PasskeySignInTests.signIn(
                server, flowID, try authenticator.assertion(challenge: challenge, flags: PasskeySignInTests.flags))
            try Self.expectRefused(response)
            #expect(try await Self.liveSessions(server, user.id) == 0)
        }
    }

    @Test("S50: an email code or link sign-in of a disabled account is refused with 403 account_disabled")
    func s50EmailCode() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser(email: "ada@example.com")
            let flow = try EmailFlowTests.started(try await server.request(.post, "/v1/auth/email/start", json: ["email": "ada@example.com"]))
            let mail = try await EmailFlowTests.mail(server, to: "ada@example.com")
            try await Self.disable(server, user.id)
            let response = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(flow.flowID), "code": .string(mail.code)])
            try Self.expectRefused(response)
            // The refusal spent nothing: the message's link is refused the same way.
            try Self.expectRefused(try await server.request(.post, "/v1/auth/email/verify", json: ["token": .string(mail.token)]))
            #expect(try await Self.liveSessions(server, user.id) == 0)
        }
    }

    @Test("S50: an upstream provider's sign-in of a disabled account ends on a 403 page, without a code")
    func s50UpstreamProvider() async throws {
        try await Upstream.with { server, _, client in
            let (_, userID) = try await Upstream.signIn(server, client: client)
            try await Self.disable(server, userID)
            let browser = Upstream.browser(server)
            let callback = try await Upstream.toCallback(browser, client: client)
            let back = try await browser.get(callback)
            #expect(back.status == 403, "\(back.text.prefix(800))")
            #expect(back.text.contains("This account is disabled"))
            #expect(try await Self.liveSessions(server, userID) == 0)
        }
    }

    @Test("S51: an approved device code of an account disabled before the device polled is refused with invalid_grant account_disabled")
    func s51DeviceGrant() async throws {
        try await DeviceGrantTests.with { server, client, userID in
            let codes = try await DeviceGrantTests.codes(server, client)
            _ = try await DeviceGrantTests.answer(server, typed: codes.userCode, decision: "allow")
            try await Self.disable(server, userID)
            try Self.expectGrantRefused(try await DeviceGrantTests.poll(server, codes.deviceCode, as: client))
            #expect(try await Self.liveSessions(server, userID) == 0)
        }
    }

    // MARK: The CLI

    @Test("S50, S51: latchkey users disable and enable take an id or an email, say what changed, audit actor operator, exit 1 for no such user")
    func s51Commands() async throws {
        try await TestServer.with { server in
            let (userID, signUp) = try await server.passwordUser()
            let run = try server.operatorCommand()
            let missing = try #require(await run(["users", "disable", "nobody@example.com"]))
            #expect(missing.status == 1 && missing.error.contains("no user"))

            let disabled = try #require(await run(["users", "disable", OAuthBrowser.username]))
            #expect(disabled.status == 0, "\(disabled.error)")
            #expect(disabled.output == "disabled \(userID); its sessions have ended\n")
            let twice = try #require(await run(["users", "disable", userID]))
            #expect(twice.status == 0 && twice.output == "\(userID) was already disabled; nothing changed\n")
            #expect(try await Self.liveSessions(server, userID) == 0)
            let show = try #require(await run(["users", "show", userID]))
            #expect(show.output.contains("disabled    "), "\(show.output)")
            // Another process disabled it: this server's bearer checks see that within the liveness bound (S52).
            server.clock.advance(by: AccessTokens.livenessTTL)
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(signUp.accessToken)"]).status == 401)
            try Self.expectRefused(try await PasswordAccountTests.logIn(server, OAuthBrowser.username, OAuthBrowser.password))

            let enabled = try #require(await run(["users", "enable", userID]))
            #expect(enabled.status == 0 && enabled.output == "enabled \(userID); it can sign in again\n")
            let again = try #require(await run(["users", "enable", userID]))
            #expect(again.status == 0 && again.output == "\(userID) was not disabled; nothing changed\n")
            #expect(try await PasswordAccountTests.logIn(server, OAuthBrowser.username, OAuthBrowser.password).status == 200)

            let audit = AuditLog(database: server.database)
            let entries = try await audit.entries(userID: userID, event: "account.disabled") + (try await audit.entries(userID: userID, event: "account.enabled"))
            #expect(entries.count == 2 && entries.allSatisfy { $0.details["actor"] == "operator" && $0.requestID == "cli" })

            let help = try #require(await run(["users", "disable", "--help"]))
            #expect(help.output.contains("account_disabled"))
        }
    }
}
