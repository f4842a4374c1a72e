import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeySandbox
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

@Suite("Browser sessions of the hosted pages")
struct BrowserSessionTests {
    static func service(_ server: TestServer, lifetime: TimeInterval = 86_400) -> BrowserSessionService {
        let clock = server.clock
        return BrowserSessionService(database: server.database, clock: { clock.now }, lifetime: lifetime)
    }

    static func row(_ server: TestServer, id: String) async throws -> SQLRow? {
        try await server.database.read { try $0.queryOne("SELECT * FROM browser_sessions WHERE id = ?", [.text(id)]) }
    }

    static func audit(_ server: TestServer, userID: String, event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(userID: userID, limit: 1000).filter { $0.event.rawValue == event }
    }

    @Test("S29: start, current and end over the database; the token is random, stored as its SHA-256 only; ending is once")
    func lifecycleS29() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let service = Self.service(server)
            let started = server.clock.now
            let (session, token) = try await service.start(userID: user.id, amr: ["pwd", "otp", "mfa"], ip: "192.0.2.1", userAgent: "Browser/1")
            #expect(session.userID == user.id && session.amr == ["pwd", "otp", "mfa"] && session.id.hasPrefix("bs_"))
            #expect(session.expiresAt == session.createdAt.addingTimeInterval(86_400))
            #expect(Base64URL.decode(token)?.count == 32, "256 random bits, base64url")
            let (_, second) = try await service.start(userID: user.id, amr: ["pwd"], ip: nil, userAgent: nil)
            #expect(second != token)

            let row = try #require(try await Self.row(server, id: session.id))
            #expect(try row.blob("token_hash") == HashFunction.sha256.hash(Array(token.utf8)))
            for column in ["id", "user_id", "amr", "user_agent", "ip"] {
                #expect(row.optionalString(column)?.contains(token) != true, "the token is not in \(column)")
            }
            #expect(row.optionalString("ip") == "192.0.2.1" && row.optionalString("user_agent") == "Browser/1")
            #expect(row.optionalDate("ended_at") == nil)

            server.clock.advance(by: 60)
            let current = try await service.current(token: token)
            #expect(current == session)
            let touched = try #require(try await Self.row(server, id: session.id)).date("last_used_at")
            #expect(touched.timeIntervalSince1970 == started.addingTimeInterval(60).timeIntervalSince1970.rounded(.down))
            #expect(try await service.current(token: "unknown") == nil)
            #expect(try await service.current(token: "") == nil)

            #expect(try await service.end(token: token, reason: "logout") == session)
            #expect(try await service.end(token: token, reason: "logout") == nil, "a compare-and-set: ended once")
            #expect(try await service.current(token: token) == nil)
            let ended = try #require(try await Self.row(server, id: session.id))
            #expect(ended.optionalString("ended_reason") == "logout" && ended.optionalDate("ended_at") != nil)

            #expect(try await Self.audit(server, userID: user.id, event: "browser_session.started").count == 2)
            let endings = try await Self.audit(server, userID: user.id, event: "browser_session.ended")
            #expect(endings.count == 1)
            #expect(endings.first?.details == ["browser_session_id": session.id, "reason": "logout"])
        }
    }

    @Test("S29: a browser session is not current once its lifetime is over")
    func expiryS29() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let service = Self.service(server, lifetime: 3_600)
            let (_, token) = try await service.start(userID: user.id, amr: ["pwd"], ip: nil, userAgent: nil)
            server.clock.advance(by: 3_599)
            #expect(try await service.current(token: token) != nil)
            server.clock.advance(by: 1)
            #expect(try await service.current(token: token) == nil)
        }
    }

    @Test("S29: browser_session_ttl sets the hosted sign-in's lifetime: the cookie's Max-Age and the row's expiry, then the sign-in page again")
    func configuredLifetimeS29() async throws {
        try await TestServer.with({ $0.browserSessionTTL = 600 }) { server in
            let signUp = try await server.request(
                .post, "/v1/auth/password/signup", json: ["username": "grace@example.com", "password": "correct horse battery"])
            try #require(signUp.status == 201, "\(signUp.text)")
            let (client, _) = try await server.application.clients.register(
                ClientRegistration(name: "Example App", redirectURIs: ["http://127.0.0.1/cb"], firstParty: true))
            let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(String(repeating: "v", count: 43).utf8)))
            let authorize = "/oauth/authorize?" + PercentEncoding.encodeForm([
                "response_type": "code", "client_id": client.id, "redirect_uri": "http://127.0.0.1/cb", "scope": "openid",
                "code_challenge": challenge, "code_challenge_method": "S256",
            ])
            let browser = HostedBrowser(base: URL(string: server.baseURL)!)
            let page = try await browser.get(authorize)
            let form = try #require(page.form)
            let signedIn = try await browser.post(
                form.action, form: form.fields.merging(["username": "grace@example.com", "password": "correct horse battery"]) { $1 })
            #expect(signedIn.status == 303)
            let cookie = try #require(signedIn.headers["set-cookie"], "the sign-in sets the session cookie")
            #expect(cookie.contains("__Host-latchkey_session=") && cookie.contains("Max-Age=600"), "\(cookie)")
            let row = try #require(try await server.database.read { try $0.queryOne("SELECT * FROM browser_sessions", []) })
            #expect(try row.date("expires_at").timeIntervalSince(try row.date("created_at")) == 600)

            server.clock.advance(by: 601)
            let again = try await browser.get(authorize)
            #expect(again.status == 200 && again.text.contains("autocomplete=\"current-password\""), "signed out after 600 s: the sign-in page")
        }
    }

    @Test("S29: logging out of all sessions ends every browser session of the user; logging out one API session does not")
    func endedByLogoutAllS29() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let someoneElse = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let service = Self.service(server)
            let (_, browser) = try await service.start(userID: user.id, amr: ["pwd"], ip: nil, userAgent: nil)
            let (_, othersBrowser) = try await service.start(userID: someoneElse.id, amr: ["pwd"], ip: nil, userAgent: nil)

            let one = try await server.startSession(for: user)
            let logout = try await server.request(.post, "/v1/logout", headers: SessionTests.bearer(one))
            #expect(logout.status == 204)
            #expect(try await service.current(token: browser) != nil)

            let all = try await server.startSession(for: user)
            let logoutAll = try await server.request(.post, "/v1/logout", json: ["all": true], headers: SessionTests.bearer(all))
            #expect(logoutAll.status == 204)
            #expect(try await service.current(token: browser) == nil)
            #expect(try await service.current(token: othersBrowser) != nil, "another user's browser session stays")
            let ended = try await Self.audit(server, userID: user.id, event: "browser_session.ended")
            #expect(ended.map { $0.details["reason"] } == ["logout"])
        }
    }

    @Test("S29: a password change and an operator's password reset end the user's browser sessions")
    func endedByPasswordChangeS29() async throws {
        try await TestServer.with { server in
            let signUp = try await PasswordAccountTests.signUp(server, "ada", "correct horse battery")
            #expect(signUp.status == 201)
            let userID = try signUp.tokens.user.id
            let service = Self.service(server)
            let (_, first) = try await service.start(userID: userID, amr: ["pwd"], ip: nil, userAgent: nil)
            let (_, second) = try await service.start(userID: userID, amr: ["pwd"], ip: nil, userAgent: nil)

            let change = try await server.request(
                .post, "/v1/auth/password/change", json: ["current_password": "correct horse battery", "new_password": "tr0ubadour & stapler"],
                headers: try signUp.bearer)
            #expect(change.status == 204)
            #expect(try await service.current(token: first) == nil)
            #expect(try await service.current(token: second) == nil)
            let changed = try await Self.audit(server, userID: userID, event: "browser_session.ended")
            #expect(changed.count == 2 && changed.allSatisfy { $0.details["reason"] == "password_changed" })

            let (_, third) = try await service.start(userID: userID, amr: ["pwd"], ip: nil, userAgent: nil)
            _ = try await server.application.passwords.setPassword(
                userID: userID, password: "a brand new passphrase", username: nil, context: RequestContext())
            #expect(try await service.current(token: third) == nil)
            let reset = try await Self.audit(server, userID: userID, event: "browser_session.ended").filter { $0.details["reason"] == "password_reset" }
            #expect(reset.count == 1)
        }
    }

    @Test("S29: Apple consent revoked ends the user's browser sessions; deleting the account removes them")
    func endedByConsentRevokedAndDeletionS29() async throws {
        try await TestServer.with { server in
            let (body, subject, sandbox) = try await AppleLifecycleTests.signedIn(server)
            let userID = body.user.id
            let service = Self.service(server)
            let (_, revoked) = try await service.start(userID: userID, amr: ["apple"], ip: nil, userAgent: nil)
            #expect(try await sandbox.notify(subject: subject, type: "consent-revoked") == 200)
            #expect(try await service.current(token: revoked) == nil)
            let ended = try await Self.audit(server, userID: userID, event: "browser_session.ended")
            #expect(ended.map { $0.details["reason"] } == ["consent_revoked"])

            let (again, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: subject)
            let (session, deleted) = try await service.start(userID: userID, amr: ["apple"], ip: nil, userAgent: nil)
            let deletion = try await server.request(.delete, "/v1/me", headers: try again.bearer)
            #expect(deletion.status == 204)
            #expect(try await service.current(token: deleted) == nil)
            #expect(try await Self.row(server, id: session.id) == nil, "the row goes with the account")
        }
    }
}
