import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyClient
import LatchkeyJSON
import Testing

/// The SDK's email calls against the real `latchkey serve --dev`, whose mail lands in the sandbox
/// mailbox: the tests read the code and the link from the message's text, as the user would.
@Suite("EmailFlowClient: the SDK's email calls against the server, and the universal-link handler", .serialized)
struct EmailFlowClientTests {
    static let password = "correct horse battery staple 7"
    static let newPassword = "a brand new passphrase 8"

    /// A six-digit code that is not `code`.
    static func wrong(_ code: String) -> String { code == "000000" ? "000001" : "000000" }

    @Test("Password reset by code: the same flow for known and unknown addresses, wrong code and refused password keep it, the reset signs in, the old session and password are refused")
    func resetByCode() async throws {
        try await DevServer.with { server in
            let phone = server.client()
            let original = try #require(try await phone.signUp(username: "ada@example.com", password: Self.password).session)
            let laptop = server.client()
            _ = try #require(try await laptop.signIn(username: "ada@example.com", password: Self.password).session)

            let before = Date()
            let unknown = try await phone.requestPasswordReset(email: "nobody@example.com")
            let flow = try await phone.requestPasswordReset(email: " Ada@Example.com ")
            #expect(flow.purpose == .reset && unknown.purpose == .reset && flow.id != unknown.id)
            #expect(abs(flow.expiresAt.timeIntervalSince(before) - 900) < 30, "the server's 15 minutes")
            let mail = try await server.mail(to: "ada@example.com")
            #expect(mail.subject == "Reset your Latchkey password")
            let code = try #require(mail.code)

            let wrong = await #expect(throws: LatchkeyError.self) {
                try await phone.resetPassword(flow: flow, code: Self.wrong(code), newPassword: Self.newPassword)
            }
            #expect(wrong?.code == .server(code: "invalid_grant") && wrong?.status == 400)
            #expect(wrong?.emailFlowFailure == .invalidCode && wrong?.reason == "invalid_code")
            let refused = await #expect(throws: LatchkeyError.self) {
                try await phone.resetPassword(flow: flow, code: code, newPassword: "short")
            }
            #expect(refused?.code == .server(code: "invalid_request") && refused?.reason == "password_too_short")
            #expect(refused?.emailFlowFailure == nil, "a refused password is not a refused proof")
            #expect(await phone.session == original, "nothing changed yet")

            let events = EventRecorder(phone.authEvents, count: 2)
            let reset = try #require(try await phone.resetPassword(flow: flow, code: code, newPassword: Self.newPassword).session)
            #expect(reset.user.id == original.user.id && reset.sessionID != original.sessionID)
            #expect(reset.user.emailVerified, "the mail proved the address")
            #expect(await phone.session == reset, "stored like every sign-in")
            #expect(await events.events().map(\.name) == ["initialSession", "signedIn"])
            #expect(try await phone.sessions().first { $0.isCurrent }?.amr == ["email"])

            // Every session from before the reset ended: the laptop's refresh gets the definite answer.
            let ended = await #expect(throws: LatchkeyError.self) { try await laptop.refresh() }
            #expect(ended?.code == .sessionEnded && ended?.signOutReason == .sessionRevoked && ended?.reason == "revoked")
            #expect(await laptop.session == nil)

            await #expect(throws: LatchkeyError(.invalidCredentials, "")) { try await laptop.signIn(username: "ada@example.com", password: Self.password) }
            let again = try #require(try await laptop.signIn(username: "ada@example.com", password: Self.newPassword).session)
            #expect(again.user.id == original.user.id)

            let reused = await #expect(throws: LatchkeyError.self) {
                try await phone.resetPassword(flow: flow, code: code, newPassword: "yet another passphrase 9")
            }
            #expect(reused?.emailFlowFailure == .used)
            // No account, no mail; the unknown address's flow has no code that works.
            #expect(try await server.messages(to: "nobody@example.com").isEmpty)
            let guessed = await #expect(throws: LatchkeyError.self) {
                try await phone.resetPassword(flow: unknown, code: code, newPassword: "yet another passphrase 9")
            }
            #expect(guessed?.emailFlowFailure == .invalidCode)
        }
    }

    @Test("Password reset by the mailed link: emailLink(from:) reads it as .reset, and an account with TOTP gets the second factor, never skipped")
    func resetByLinkWithSecondFactor() async throws {
        try await DevServer.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "grace@example.com", password: Self.password)
            let enrollment = try await client.enrollTOTP()
            _ = try await client.confirmTOTP(code: Authenticator.code(secret: enrollment.secret))
            let before = try #require(await client.session)

            _ = try await client.requestPasswordReset(email: "grace@example.com")
            let mail = try await server.mail(to: "grace@example.com")
            let url = try #require(mail.link)
            let link = try #require(client.emailLink(from: url))
            #expect(link.purpose == .reset)
            guard case .reset(let token) = link else {
                Issue.record("not a reset link: \(link)")
                return
            }
            // Compared outside #expect, whose failure message would show both tokens.
            let isMailedToken = token == mail.token
            #expect(isMailedToken, "the link's token is the mailed one")

            let challenge = try #require(try await client.resetPassword(token: token, newPassword: Self.newPassword).challenge)
            #expect(challenge.factors.contains(.totp))
            #expect(await client.session == before, "no session before the second factor")
            let session = try await client.completeSignIn(challenge, with: .totp(code: Authenticator.code(secret: enrollment.secret, offset: 1)))
            #expect(session.user.id == before.user.id && session.sessionID != before.sessionID)
            let amr = try #require(try await client.sessions().first { $0.isCurrent }?.amr)
            #expect(amr.contains("email") && amr.contains("otp"))

            let reused = await #expect(throws: LatchkeyError.self) { try await client.resetPassword(token: token, newPassword: "yet another passphrase 9") }
            #expect(reused?.emailFlowFailure == .used)
            // The reset's link is no sign-in link.
            let misused = await #expect(throws: LatchkeyError.self) { try await client.signIn(emailToken: token) }
            #expect(misused?.emailFlowFailure == .unknown)
        }
    }

    @Test("Sign-in by email: create:false mails an unknown address nothing, create:true creates the account; superseded, wrong-code, too-many-attempts and unknown reasons")
    func signInByEmail() async throws {
        try await DevServer.with { server in
            let client = server.client()
            let address = "new@example.com"
            let withoutCreate = try await client.signInWithEmail(address)
            let creating = try await client.signInWithEmail(address, create: true)
            #expect(creating.purpose == .signIn && creating.id != withoutCreate.id)
            let mail = try await server.mail(to: address)
            #expect(mail.subject == "Your Latchkey sign-in code")
            #expect(try await server.messages(to: address).count == 1, "create: false mailed an address without an account nothing")
            let code = try #require(mail.code)

            let superseded = await #expect(throws: LatchkeyError.self) { try await client.signIn(emailFlow: withoutCreate, code: code) }
            #expect(superseded?.emailFlowFailure == .superseded)
            let wrong = await #expect(throws: LatchkeyError.self) { try await client.signIn(emailFlow: creating, code: Self.wrong(code)) }
            #expect(wrong?.emailFlowFailure == .invalidCode)
            #expect(await client.session == nil)

            let created = try #require(try await client.signIn(emailFlow: creating, code: code).session)
            #expect(created.user.email == address && created.user.emailVerified)
            #expect(await client.session == created)
            #expect(try await client.me().user.id == created.user.id)
            await client.signOut()

            // The account exists now: a sign-in without create reaches it, here by the mailed link.
            _ = try await client.signInWithEmail(address)
            let second = try await server.mail(to: address, count: 2)
            let secondURL = try #require(second.link)
            let link = try #require(client.emailLink(from: secondURL))
            guard case .signIn(let token) = link else {
                Issue.record("not a sign-in link: \(link)")
                return
            }
            let again = try #require(try await client.signIn(emailToken: token).session)
            #expect(again.user.id == created.user.id && again.sessionID != created.sessionID)

            // Five wrong codes end the flow: then even the right code is refused.
            let flow = try await client.signInWithEmail(address)
            let third = try #require(try await server.mail(to: address, count: 3).code)
            for attempt in 1...5 {
                let refused = await #expect(throws: LatchkeyError.self, "attempt \(attempt)") {
                    try await client.signIn(emailFlow: flow, code: Self.wrong(third))
                }
                #expect(refused?.emailFlowFailure == .invalidCode, "attempt \(attempt)")
            }
            let dead = await #expect(throws: LatchkeyError.self) { try await client.signIn(emailFlow: flow, code: third) }
            #expect(dead?.emailFlowFailure == .tooManyAttempts)

            let forged = await #expect(throws: LatchkeyError.self) { try await client.signIn(emailToken: "never-issued-by-this-server") }
            #expect(forged?.emailFlowFailure == .unknown && forged?.status == 400)
            #expect(await client.session == again, "a refused proof leaves the session alone")
        }
    }

    @Test("Verification and change of address, by code and by link: the stored user follows with .userUpdated, the username follows the address")
    func verifyAndChange() async throws {
        try await DevServer.with { server in
            let client = server.client()
            let session = try #require(try await client.signUp(username: "ada@example.com", password: Self.password).session)
            #expect(session.user.email == "ada@example.com" && !session.user.emailVerified)

            let events = EventRecorder(client.authEvents, count: 3)
            let flow = try await client.verifyEmail()
            #expect(flow.purpose == .verify)
            let mail = try await server.mail(to: "ada@example.com")
            let verified = try await client.confirmEmailVerification(flow: flow, code: try #require(mail.code))
            #expect(verified.id == session.user.id && verified.emailVerified)
            #expect(await client.session?.user.emailVerified == true)
            let conflict = await #expect(throws: LatchkeyError.self) { try await client.verifyEmail() }
            #expect(conflict?.code == .server(code: "conflict") && conflict?.status == 409)

            _ = try await client.changeEmail(to: "lovelace@example.com")
            let change = try await server.mail(to: "lovelace@example.com")
            let changeURL = try #require(change.link)
            let link = try #require(client.emailLink(from: changeURL))
            guard case .change(let token) = link else {
                Issue.record("not a change link: \(link)")
                return
            }
            // The confirmation needs no session: the mail may be read on another device.
            let moved = try await server.client().confirmEmailChange(token: token)
            #expect(moved.email == "lovelace@example.com" && moved.emailVerified)
            // This client hears of it at the next read of the user.
            #expect(try await client.me().user.email == "lovelace@example.com")
            #expect(await client.session?.user.email == "lovelace@example.com")
            #expect(await events.events().map(\.name) == ["initialSession", "userUpdated", "userUpdated"])
            let notice = try await server.mail(to: "ada@example.com", count: 2)
            let noticeCarriesNoProof = notice.link == nil && notice.code == nil
            #expect(noticeCarriesNoProof, "the old address gets a notice without a link or a code")

            // Back by code, through this client: its session's user changes at once.
            let back = try await client.changeEmail(to: "ada@example.com")
            #expect(back.purpose == .change)
            let code = try #require(try await server.mail(to: "ada@example.com", count: 3).code)
            let wrong = await #expect(throws: LatchkeyError.self) { try await client.confirmEmailChange(flow: back, code: Self.wrong(code)) }
            #expect(wrong?.emailFlowFailure == .invalidCode)
            let returned = try await client.confirmEmailChange(flow: back, code: code)
            #expect(returned.email == "ada@example.com")
            #expect(await client.session?.user.email == "ada@example.com")

            await client.signOut()
            #expect(try await client.signIn(username: "ada@example.com", password: Self.password).session?.user.id == session.user.id)
            let taken = try #require(try await server.client().signUp(username: "grace@example.com", password: Self.password).session)
            #expect(taken.user.id != session.user.id)
            let conflicting = await #expect(throws: LatchkeyError.self) { try await client.changeEmail(to: "grace@example.com") }
            #expect(conflicting?.code == .server(code: "conflict"))
            let anonymous = await #expect(throws: LatchkeyError.self) { try await server.client().verifyEmail() }
            #expect(anonymous?.code == .notSignedIn)
        }
    }

    @Test("The server's apple-app-site-association claims /email/* for the configured app: each mailed link is under it, and nothing else of the server is")
    func appSiteAssociation() async throws {
        let appID = "ABCDE12345.com.example.app"
        try await DevServer.with(environment: ["LATCHKEY_ASSOCIATED_DOMAINS_APPLINKS": appID]) { server in
            let (data, response) = try await URLSession.shared.data(from: server.baseURL.appendingPathComponent(".well-known/apple-app-site-association"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let association = try JSONValue(parsing: Array(data))
            let details = try #require(association["applinks"]?["details"]?.arrayValue)
            #expect(details.count == 1 && details.first?["appIDs"] == [.string(appID)])
            let patterns = try #require(details.first?["components"]?.arrayValue).compactMap { $0["/"]?.stringValue }
            #expect(patterns == ["/email/*"])
            func claimed(_ path: String) -> Bool { patterns.contains { Self.matches(path, pattern: $0) } }

            let client = server.client()
            _ = try await client.signUp(username: "ada@example.com", password: Self.password)
            _ = try await client.verifyEmail()
            _ = try await client.requestPasswordReset(email: "ada@example.com")
            _ = try await client.signInWithEmail("ada@example.com")
            _ = try await client.changeEmail(to: "lovelace@example.com")
            var purposes: [EmailPurpose] = []
            for (address, count) in [("ada@example.com", 3), ("lovelace@example.com", 1)] {
                for index in 1...count {
                    let url = try #require(try await server.mail(to: address, count: index).link)
                    #expect(claimed(url.path), "a mailed link opens the app: \(url.path)")
                    if let link = client.emailLink(from: url) { purposes.append(link.purpose) }
                }
            }
            #expect(Set(purposes) == Set(EmailPurpose.allCases), "emailLink(from:) reads every mailed link")
            for path in ["/oauth/authorize", "/oauth/apple/callback", "/sandbox/mail", "/v1/auth/email/verify", "/", "/emails", "/app/callback"] {
                #expect(!claimed(path), "\(path) stays in the browser")
            }
        }
    }

    /// Whether `path` matches an apple-app-site-association `"/"` pattern: `*` any run of
    /// characters, `?` one character, everything else itself.
    static func matches(_ path: String, pattern: String) -> Bool {
        let text = Array(path), glob = Array(pattern)
        func match(_ t: Int, _ g: Int) -> Bool {
            if g == glob.count { return t == text.count }
            switch glob[g] {
            case "*": return (t...text.count).contains { match($0, g + 1) }
            case "?": return t < text.count && match(t + 1, g + 1)
            default: return t < text.count && text[t] == glob[g] && match(t + 1, g + 1)
            }
        }
        return match(0, 0)
    }

    // MARK: The universal-link handler, without a server

    static let server = URL(string: "https://auth.example.com")!

    @Test("EmailLink reads each purpose's link from the configured server, in the spellings a URL may take")
    func linkParsing() throws {
        let token = "A1b2-C3d4_e5.f6~g7"
        for purpose in EmailPurpose.allCases {
            let link = try #require(EmailLink(url: URL(string: "https://auth.example.com/email/\(purpose.rawValue)?token=\(token)")!, server: Self.server))
            #expect(link.purpose == purpose && link.token == token)
            #expect(link == EmailLink(purpose: purpose, token: token))
        }
        #expect(EmailLink(url: URL(string: "https://auth.example.com/email/reset?token=T")!, server: Self.server) == .reset(token: "T"))
        #expect(EmailLink(url: URL(string: "https://auth.example.com/email/verify?token=T")!, server: Self.server) == .verify(token: "T"))
        #expect(EmailLink(url: URL(string: "https://auth.example.com/email/sign-in?token=T")!, server: Self.server) == .signIn(token: "T"))
        #expect(EmailLink(url: URL(string: "https://auth.example.com/email/change?token=T")!, server: Self.server) == .change(token: "T"))
        let accepted = [
            ("https://AUTH.example.com:443/email/reset?token=T", "https://auth.example.com/"),
            ("https://auth.example.com/email/reset?utm_source=mail&token=T#top", "https://auth.example.com"),
            ("https://example.com/auth/email/reset?token=T", "https://example.com/auth/"),
            ("http://127.0.0.1:8080/email/reset?token=T", "http://127.0.0.1:8080"),
        ]
        for (url, server) in accepted {
            #expect(EmailLink(url: URL(string: url)!, server: URL(string: server)!) == .reset(token: "T"), "\(url)")
        }
        let client = LatchkeyClient(configuration: LatchkeyConfiguration(baseURL: Self.server, store: InMemoryCredentialStore()))
        #expect(client.emailLink(from: URL(string: "https://auth.example.com/email/sign-in?token=T")!) == .signIn(token: "T"))
        #expect(client.emailLink(from: URL(string: "https://evil.example.net/email/sign-in?token=T")!) == nil)
    }

    @Test("EmailLink refuses hostile and malformed URLs: other origins, user info, other paths, missing, empty, repeated or odd tokens", arguments: [
        "https://evil.example.net/email/reset?token=T",  // another host
        "https://auth.example.com.evil.example.net/email/reset?token=T",  // the server's name as a prefix
        "https://evilauth.example.com/email/reset?token=T",
        "https://auth.example.com@evil.example.net/email/reset?token=T",  // user info, another host
        "https://user@auth.example.com/email/reset?token=T",  // user info on the right host
        "http://auth.example.com/email/reset?token=T",  // another scheme
        "https://auth.example.com:8443/email/reset?token=T",  // another port
        "latchkey://auth.example.com/email/reset?token=T",
        "https://auth.example.com/email/reset",  // no token
        "https://auth.example.com/email/reset?token=",  // an empty token
        "https://auth.example.com/email/reset?tokens=T",
        "https://auth.example.com/email/reset?token=T&token=U",  // two tokens
        "https://auth.example.com/email/reset?token=%3Cscript%3E",  // not a token's characters
        "https://auth.example.com/email/reset?token=a+b",
        "https://auth.example.com/email/reset?token=" + String(repeating: "a", count: 129),  // over the server's 128
        "https://auth.example.com/email/delete?token=T",  // unknown purpose
        "https://auth.example.com/email/?token=T",
        "https://auth.example.com/email?token=T",
        "https://auth.example.com/email/reset/?token=T",  // other spellings of the path
        "https://auth.example.com/email/Reset?token=T",
        "https://auth.example.com/EMAIL/reset?token=T",
        "https://auth.example.com/email/%72eset?token=T",
        "https://auth.example.com/email/reset/extra?token=T",
        "https://auth.example.com/x/../email/reset?token=T",
        "https://auth.example.com//email/reset?token=T",
        "https://auth.example.com/oauth/authorize?token=T",
        "https://auth.example.com/?token=T",
    ])
    func hostileLinks(url: String) throws {
        let parsed = try #require(URL(string: url), "a URL Foundation reads")
        #expect(EmailLink(url: parsed, server: Self.server) == nil)
    }

    @Test("EmailLink under a server path: the path prefix is required; its description never shows the token")
    func linkPrefixAndRedaction() throws {
        let base = URL(string: "https://example.com/auth")!
        #expect(EmailLink(url: URL(string: "https://example.com/email/verify?token=T")!, server: base) == nil)
        #expect(EmailLink(url: URL(string: "https://example.com/authx/email/verify?token=T")!, server: base) == nil)
        #expect(EmailLink(url: URL(string: "https://example.com/auth/email/verify?token=T")!, server: base) == .verify(token: "T"))

        let secret = "s3cr3t-token-value"
        let link = EmailLink.signIn(token: secret)
        for text in [link.description, "\(link)", String(describing: link), String(reflecting: link)] {
            #expect(!text.contains(secret), "\(text)")
        }
        #expect(link.description == "EmailLink.signIn(token: <redacted>)")
        let flow = EmailFlow(id: "efl_1", purpose: .reset, expiresAt: Date(timeIntervalSince1970: 0))
        let decoded = try JSONDecoder().decode(EmailFlow.self, from: JSONEncoder().encode(flow))
        #expect(decoded == flow, "an app can keep a flow while the user reads the mail")
        #expect(flow.isExpired(at: Date(timeIntervalSince1970: 0)) && !flow.isExpired(at: Date(timeIntervalSince1970: -1)))
    }
}
