import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The email flows over HTTP against a development server, whose mail lands in the sandbox
/// mailbox (`/sandbox/mail.json`), read as a user reads mail: the link and the code from the text.
@Suite("Email flows: verification, password reset, sign-in by code, change of address (S32)")
struct EmailFlowTests {
    /// What a delivered message offers: the link's path and query, its token, and the code.
    struct Mail {
        var subject: String
        var text: String
        var link: String
        var token: String
        var code: String
    }

    /// Every message delivered to `address`, oldest first.
    static func mailbox(_ server: TestServer, to address: String) async throws -> [JSONValue] {
        let messages = try await server.request(.get, "/sandbox/mail.json").json["messages"]?.arrayValue ?? []
        return messages.filter { $0["to"]?.stringValue == address }.reversed()
    }

    /// Waits for the `count`th message to `address` (the outbox sends within a second or two).
    static func mail(_ server: TestServer, to address: String, count: Int = 1) async throws -> Mail {
        #expect(try await eventually(within: .seconds(10)) { try await mailbox(server, to: address).count >= count }, "mail to \(address)")
        let message = try #require(try await mailbox(server, to: address).dropFirst(count - 1).first)
        let text = try #require(message["text"]?.stringValue)
        let link = try #require(text.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init))
        let token = try #require(link.split(separator: "token=").last.map(String.init))
        let code = try #require(text.firstMatch(of: /Your code: ([0-9]{6})/).map { String($0.output.1) })
        return Mail(subject: message["subject"]?.stringValue ?? "", text: text, link: String(link.dropFirst(server.baseURL.count)), token: token, code: code)
    }

    static func signUp(_ server: TestServer, _ email: String, _ password: String = "correct horse battery") async throws -> WireTokenResponse {
        let response = try await PasswordAccountTests.signUp(server, email, password)
        #expect(response.status == 201, "\(response.text)")
        return try response.tokens
    }

    static func flow(_ server: TestServer, _ id: String) async throws -> SQLRow? {
        try await server.database.read { try $0.queryOne("SELECT * FROM email_flows WHERE id = ?", [.text(id)]) }
    }

    static func started(_ response: TestResponse) throws -> WireEmailFlowStarted {
        #expect(response.status == 202, "\(response.text)")
        return try WireEmailFlowStarted(parsing: response.body)
    }

    @Test("S32: a password reset by code sets the password, ends every session (the old refresh token gets invalid_grant), lifts nothing else, and signs in")
    func resetByCode() async throws {
        try await TestServer.with { server in
            let old = try await Self.signUp(server, "ada@example.com")
            let flow = try Self.started(try await server.request(.post, "/v1/auth/password/reset", json: ["email": " Ada@Example.com "]))
            #expect(flow.expiresIn == 900)
            let mail = try await Self.mail(server, to: "ada@example.com")
            #expect(mail.subject == "Reset your Latchkey password")
            #expect(mail.link.hasPrefix("/email/reset?token="))
            // The message as SMTP would carry it, read by Python's email package.
            let raw = try #require(try await Self.mailbox(server, to: "ada@example.com").first?["raw"]?.stringValue)
            let parsed = try JSONValue(parsing: Array(try PythonEmail.parse(raw).utf8))
            #expect(parsed["to"] == ["ada@example.com"] && parsed["from"] == ["no-reply@localhost"] && parsed["defects"] == [])
            #expect(parsed["plain"]?.stringValue?.contains(mail.code) == true && parsed["html"]?.stringValue?.contains(mail.code) == true)

            let refused = try await server.request(
                .post, "/v1/auth/password/reset/confirm", json: ["flow_id": .string(flow.flowID), "code": .string(mail.code), "password": "short"])
            #expect(try refused.status == 400 && refused.wireError.reason == "password_too_short", "the flow is kept")

            let reset = try await server.request(
                .post, "/v1/auth/password/reset/confirm",
                json: ["flow_id": .string(flow.flowID), "code": .string(mail.code), "password": "a brand new passphrase"])
            #expect(reset.status == 200, "\(reset.text)")
            let tokens = try reset.tokens
            #expect(try Insecure.unverifiedContents(of: tokens.accessToken).claims["amr"] == ["email"] && tokens.user.emailVerified)

            let stale = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(old.refreshToken)])
            #expect(try stale.status == 400 && stale.wireError.error == .invalidGrant)
            #expect(try await PasswordAccountTests.logIn(server, "ada@example.com", "correct horse battery").status == 401)
            #expect(try await PasswordAccountTests.logIn(server, "ada@example.com", "a brand new passphrase").status == 200)

            let row = try #require(try await Self.flow(server, flow.flowID))
            #expect(row.optionalString("ended_reason") == "used")
            let entry = try #require(try await PasswordAccountTests.audit(server, event: "password.reset").first)
            #expect(entry.userID == tokens.user.id && entry.details["sessions_ended"] == "1")
            #expect(try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox")?.int("n") } == 0, "sent mail leaves the outbox")
        }
    }

    @Test("S32: known and unknown addresses get the same status and body; only the known one gets mail")
    func noEnumeration() async throws {
        try await TestServer.with { server in
            _ = try await Self.signUp(server, "ada@example.com")
            for path in ["/v1/auth/password/reset", "/v1/auth/email/start"] {
                let known = try await server.request(.post, path, json: ["email": "ada@example.com"])
                let unknown = try await server.request(.post, path, json: ["email": "nobody@example.com"])
                #expect(known.status == 202 && unknown.status == 202)
                let (a, b) = (try known.json.objectValue ?? [:], try unknown.json.objectValue ?? [:])
                #expect(Set(a.keys) == ["flow_id", "expires_in"] && Set(b.keys) == Set(a.keys) && a["expires_in"] == b["expires_in"])
                #expect(known.headers["Content-Type"] == unknown.headers["Content-Type"])
            }
            _ = try await Self.mail(server, to: "ada@example.com", count: 2)
            #expect(try await Self.mailbox(server, to: "nobody@example.com").isEmpty)
        }
    }

    @Test("S32: opening the mailed link consumes nothing (a mail scanner may); the page's button confirms, once")
    func prefetchSafety() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "ada@example.com")
            let started = try Self.started(try await server.request(.post, "/v1/email/verification", headers: ["Authorization": "Bearer \(signedUp.accessToken)"]))
            let mail = try await Self.mail(server, to: "ada@example.com")
            for _ in 0..<3 {
                let page = try await server.request(.get, mail.link)
                #expect(page.status == 200 && page.text.contains("<form method=\"post\" action=\"/email/verify\">"))
                #expect(page.headers["Content-Security-Policy"]?.contains("default-src 'none'") == true)
            }
            #expect(try await Self.flow(server, started.flowID)?.optionalString("ended_reason") == nil, "GET consumed nothing")

            let form = Array("token=\(mail.token)".utf8)
            let confirmed = try await server.request(.post, "/email/verify", body: form, headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(confirmed.status == 200 && confirmed.text.contains("Email confirmed"))
            let me = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(signedUp.accessToken)"])
            #expect(try me.json["user"]?["email_verified"] == true)
            let again = try await server.request(.post, "/email/verify", body: form, headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(again.status == 400 && again.text.contains("used already"))
            #expect(try await PasswordAccountTests.audit(server, event: "email.verified").count == 1)
            let verifiedAgain = try await server.request(.post, "/v1/email/verification", headers: ["Authorization": "Bearer \(signedUp.accessToken)"])
            #expect(verifiedAgain.status == 409)
        }
    }

    @Test("S32: five wrong codes end the flow: the sixth attempt is refused as too_many_attempts even with the right code")
    func codeAttempts() async throws {
        try await TestServer.with { server in
            _ = try await Self.signUp(server, "ada@example.com")
            let flow = try Self.started(try await server.request(.post, "/v1/auth/email/start", json: ["email": "ada@example.com"]))
            let mail = try await Self.mail(server, to: "ada@example.com")
            let wrong = mail.code == "000000" ? "000001" : "000000"
            for _ in 0..<5 {
                let answer = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(flow.flowID), "code": .string(wrong)])
                #expect(try answer.status == 400 && answer.wireError.reason == "invalid_code")
            }
            let right = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(flow.flowID), "code": .string(mail.code)])
            #expect(try right.status == 400 && right.wireError.reason == "too_many_attempts")
            let byLink = try await server.request(.post, "/v1/auth/email/verify", json: ["token": .string(mail.token)])
            #expect(try byLink.wireError.reason == "too_many_attempts", "the link died with the flow")
            #expect(try await Self.flow(server, flow.flowID)?.int("attempts") == 5)
        }
    }

    @Test("S32: 50 concurrent confirmations of one token: exactly one succeeds, the others hear used")
    func singleUse() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "ada@example.com")
            _ = try Self.started(try await server.request(.post, "/v1/email/verification", headers: ["Authorization": "Bearer \(signedUp.accessToken)"]))
            let mail = try await Self.mail(server, to: "ada@example.com")
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let answer = try await server.request(.post, "/v1/email/verification/confirm", json: ["token": .string(mail.token)])
                        return (answer.status, answer.status == 200 ? nil : try answer.wireError.reason)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1)
            #expect(statuses.filter { $0.0 == 400 && $0.1 == "used" }.count == 49)
        }
    }

    @Test("S32, S5: a reset of an account with a second factor answers mfa_required; the password is set and the sessions ended all the same")
    func resetNeverSkipsTheSecondFactor() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "ada@example.com")
            let bearer = ["Authorization": "Bearer \(signedUp.accessToken)"]
            let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
            let code = TOTP.code(secret: TOTPTests.base32Decode(begin.secret), step: TOTP.step(at: server.clock.now))
            #expect(try await server.request(.post, "/v1/totp/confirm", json: ["code": .string(code)], headers: bearer).status == 200)

            let flow = try Self.started(try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"]))
            let mail = try await Self.mail(server, to: "ada@example.com")
            let reset = try await server.request(
                .post, "/v1/auth/password/reset/confirm",
                json: ["flow_id": .string(flow.flowID), "code": .string(mail.code), "password": "a brand new passphrase"])
            #expect(try reset.status == 403 && reset.wireError.error == .mfaRequired && reset.wireError.mfaToken != nil)
            #expect(try await server.request(.get, "/v1/me", headers: bearer).status == 401, "every session ended")
            let login = try await PasswordAccountTests.logIn(server, "ada@example.com", "a brand new passphrase")
            #expect(try login.status == 403 && login.wireError.error == .mfaRequired)
        }
    }

    @Test("S32: sign-in by email creates an account only when asked; it is created verified, with amr email")
    func signInByEmail() async throws {
        try await TestServer.with { server in
            let quiet = try Self.started(try await server.request(.post, "/v1/auth/email/start", json: ["email": "new@example.com"]))
            let created = try Self.started(try await server.request(.post, "/v1/auth/email/start", json: ["email": "new@example.com", "create": true]))
            let mail = try await Self.mail(server, to: "new@example.com")
            #expect(try await Self.mailbox(server, to: "new@example.com").count == 1, "no mail for the flow that may not create")
            let superseded = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(quiet.flowID), "code": .string(mail.code)])
            #expect(try superseded.status == 400 && superseded.wireError.reason == "superseded")

            let signedIn = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(created.flowID), "code": .string(mail.code)])
            #expect(signedIn.status == 201, "\(signedIn.text)")
            let tokens = try signedIn.tokens
            #expect(tokens.created && tokens.user.email == "new@example.com" && tokens.user.emailVerified)
            #expect(try Insecure.unverifiedContents(of: tokens.accessToken).claims["amr"] == ["email"])

            // Signing in again finds the same account.
            let again = try Self.started(try await server.request(.post, "/v1/auth/email/start", json: ["email": "new@example.com"]))
            let second = try await Self.mail(server, to: "new@example.com", count: 2)
            let back = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(again.flowID), "code": .string(second.code)])
            #expect(try back.status == 200 && back.tokens.user.id == tokens.user.id)
        }
    }

    @Test("S32: a link or code is refused as expired after email.code_ttl, as unknown when never issued")
    func expiry() async throws {
        try await TestServer.with { server in
            _ = try await Self.signUp(server, "ada@example.com")
            let flow = try Self.started(try await server.request(.post, "/v1/auth/email/start", json: ["email": "ada@example.com"]))
            let mail = try await Self.mail(server, to: "ada@example.com")
            server.clock.advance(by: 901)
            let late = try await server.request(.post, "/v1/auth/email/verify", json: ["flow_id": .string(flow.flowID), "code": .string(mail.code)])
            #expect(try late.status == 400 && late.wireError.reason == "expired")
            let unknown = try await server.request(.post, "/v1/auth/email/verify", json: ["token": "never-issued"])
            #expect(try unknown.status == 400 && unknown.wireError.reason == "unknown")
            let both = try await server.request(.post, "/v1/auth/email/verify", json: ["token": "x", "flow_id": "y", "code": "123456"])
            #expect(try both.status == 400 && both.wireError.error == .invalidRequest)
        }
    }

    @Test("S32: a change of address needs a recent sign-in, confirms on the new address, tells the old one, and the username follows")
    func changeOfAddress() async throws {
        try await TestServer.with { server in
            _ = try await Self.signUp(server, "bob@example.com")
            let signedUp = try await Self.signUp(server, "ada@example.com")
            let bearer = ["Authorization": "Bearer \(signedUp.accessToken)"]
            let taken = try await server.request(.post, "/v1/me/email", json: ["email": "bob@example.com"], headers: bearer)
            #expect(taken.status == 409)
            let flow = try Self.started(try await server.request(.post, "/v1/me/email", json: ["email": "ada@new.example"], headers: bearer))
            let mail = try await Self.mail(server, to: "ada@new.example")
            #expect(mail.link.hasPrefix("/email/change?token="))

            let confirmed = try await server.request(.post, "/v1/me/email/confirm", json: ["flow_id": .string(flow.flowID), "code": .string(mail.code)])
            #expect(confirmed.status == 200, "\(confirmed.text)")
            #expect(try confirmed.json["user"]?["email"] == "ada@new.example" && confirmed.json["user"]?["email_verified"] == true)
            #expect(try await eventually(within: .seconds(10)) { try await !Self.mailbox(server, to: "ada@example.com").isEmpty })
            let notice = try #require(try await Self.mailbox(server, to: "ada@example.com").first)
            #expect(notice["subject"] == "Your Latchkey email was changed" && notice["text"]?.stringValue?.contains("token=") == false)
            #expect(try await PasswordAccountTests.logIn(server, "ada@new.example", "correct horse battery").status == 200)
            #expect(try await PasswordAccountTests.logIn(server, "ada@example.com", "correct horse battery").status == 401)
            let entry = try #require(try await PasswordAccountTests.audit(server, event: "email.changed").first)
            #expect(entry.details["old"] == HashFunction.sha256.hexDigest(Array("ada@example.com".utf8)))
            #expect(!String(describing: entry.details).contains("ada@new.example"), "the audit log holds hashes, not addresses")

            server.clock.advance(by: 301)
            let stale = try await server.request(.post, "/v1/me/email", json: ["email": "ada@third.example"], headers: bearer)
            #expect(try stale.status == 403 && stale.wireError.error == .insufficientAuthentication)
        }
    }

    @Test("S32: past email_per_address_hour requests for one address, even one with no account, the answer is 429 with Retry-After")
    func rateLimited() async throws {
        try await TestServer.with { server in
            for _ in 0..<5 {
                #expect(try await server.request(.post, "/v1/auth/password/reset", json: ["email": "nobody@example.com"]).status == 202)
            }
            let limited = try await server.request(.post, "/v1/auth/password/reset", json: ["email": "nobody@example.com"])
            #expect(try limited.status == 429 && limited.wireError.error == .rateLimited)
            #expect(Int(limited.headers["Retry-After"] ?? "") ?? 0 > 3000)
            #expect(try await server.request(.post, "/v1/auth/password/reset", json: ["email": "other@example.com"]).status == 202)
        }
    }

    @Test("S32, S26: the link's token and the code are not in the audit log, the flow rows or the outbox at rest")
    func secretsStaySecret() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "ada@example.com")
            // A stopped outbox would leave the message at rest: read the row the moment it is written.
            let flow = try Self.started(try await server.request(.post, "/v1/auth/password/reset", json: ["email": "ada@example.com"]))
            let mail = try await Self.mail(server, to: "ada@example.com")
            _ = try await server.request(.post, "/v1/auth/password/reset/confirm", json: ["token": .string(mail.token), "password": "a brand new passphrase"])
            let dump = try await server.database.read { connection in
                try ["audit_log", "email_flows", "outbox"].flatMap { try connection.query("SELECT * FROM \($0)") }.map { "\($0)" }.joined()
            }
            #expect(!dump.contains(mail.token) && !dump.contains(mail.code) && !dump.contains(flow.flowID + ":"))
            _ = signedUp
        }
    }
}
