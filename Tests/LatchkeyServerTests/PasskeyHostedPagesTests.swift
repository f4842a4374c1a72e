import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The hosted pages' passkey forms without a browser: the scripted ``HostedBrowser`` posts what
/// the page's script would, with the software authenticator's answers, so each refusal and the
/// second-factor page can be driven exactly (docs/reference.md, "The OAuth provider").
@Suite("Hosted passkey forms")
struct PasskeyHostedPagesTests {
    typealias Authenticator = SoftwareAuthenticator

    /// `data-options` and the `flow_id` of the page's passkey form, if it has one.
    static func passkeyForm(_ page: HostedBrowser.Page) throws -> (flowID: String, options: JSONValue)? {
        let text = page.text
        guard let start = text.range(of: #" id="passkey" "#), let end = text.range(of: "</form>", range: start.upperBound..<text.endIndex) else {
            return nil
        }
        let form = String(text[start.lowerBound..<end.upperBound])
        /// The value of the first `prefix"…"` in the form, unescaped.
        func value(after prefix: String) -> String? {
            guard let opening = form.range(of: prefix), let closing = form[opening.upperBound...].firstIndex(of: "\"") else { return nil }
            return form[opening.upperBound..<closing].replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        }
        let flowID = try #require(value(after: #"name="flow_id" value=""#))
        let options = try #require(value(after: #"data-options=""#))
        return (flowID, try JSONValue(parsing: Array(options.utf8)))
    }

    @Test("S19, S34: the second-factor page offers the account's passkey; a broken signature comes back in words and is audited, a good answer signs in with pwd, swk, mfa")
    func secondFactorPasskey() async throws {
        try await PasskeyBrowserTests.with { server in
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let client = TestOAuthClient(id: notes.id, secret: nil, redirectURI: "http://127.0.0.1/callback")
            let (userID, _) = try await BrowserFlowTests.userWithTOTP(server, username: "noether@example.com")
            let user = try #require(try await UserRepository(database: server.database).find(userID))

            // A passkey for the account, registered over /v1 for the server's own origin.
            let token = try await server.startSession(for: user)
            let (registrationFlow, registrationChallenge, creation) = try await PasskeyRegistrationTests.options(server, token)
            var authenticator = Authenticator.es256()
            authenticator.userHandle = try #require(creation["user"]?["id"]?.stringValue.flatMap { Base64URL.decode($0) })
            let registered = try await PasskeyRegistrationTests.register(
                server, token, flowID: registrationFlow,
                try authenticator.registration(
                    challenge: registrationChallenge, origin: server.baseURL, rpID: "localhost",
                    flags: Authenticator.up | Authenticator.uv | Authenticator.at))
            #expect(registered.status == 201, "\(registered.text)")

            // The password, then the second-factor page with the passkey's form and its script allowed by hash.
            let browser = HostedBrowser(base: URL(string: server.baseURL)!)
            let signIn = try await browser.get(AuthorizationAttempt(client).path)
            #expect(signIn.headers["content-security-policy"]?.contains("script-src \(PasskeyForm.scriptHash);") == true)
            let secondFactor = try await browser.submit(signIn, ["username": "noether@example.com", "password": BrowserFlowTests.password])
            #expect(secondFactor.text.contains("<h1>Enter your code</h1>"))
            #expect(secondFactor.headers["content-security-policy"]?.contains("script-src \(PasskeyForm.scriptHash);") == true)
            #expect(secondFactor.text.contains(">Use a passkey</button>"))
            let fields = try #require(secondFactor.form?.fields)
            var (flowID, options) = try #require(try Self.passkeyForm(secondFactor))
            #expect(options["allowCredentials"]?.arrayValue?.first?["id"] == .string(Base64URL.encode(authenticator.credentialID)))

            // A broken signature: the page again, the reason in words, audited; the sign-in still pending.
            var challenge = try #require(options["challenge"]?.stringValue.flatMap { Base64URL.decode($0) })
            let broken = try authenticator.assertion(
                challenge: challenge, origin: server.baseURL, rpID: "localhost", signCount: 1, signedData: { $0 + [0] })
            let refused = try await browser.follow(
                try await browser.post(
                    AuthorizeRoutes.passkeySecondFactorPath,
                    form: [
                        "csrf_token": fields["csrf_token"] ?? "", "request": fields["request"] ?? "", "flow_id": flowID,
                        "credential": PasskeySignInTests.json(broken).serializedString,
                    ]))
            #expect(refused.status == 200 && refused.text.contains("<h1>Enter your code</h1>"))
            #expect(refused.text.contains("The passkey was not accepted: its signature does not verify."), "\(refused.text.prefix(2000))")
            let failed = try await AuditLog(database: server.database).entries(userID: userID, event: "passkey.failed")
            #expect(failed.map { $0.details["reason"] } == ["bad_signature"] && failed.first?.details["use"] == "mfa")

            // A good one from the page shown again: signed in with the password and the passkey, back at the client.
            (flowID, options) = try #require(try Self.passkeyForm(refused))
            challenge = try #require(options["challenge"]?.stringValue.flatMap { Base64URL.decode($0) })
            let good = try authenticator.assertion(challenge: challenge, origin: server.baseURL, rpID: "localhost", signCount: 2)
            let again = try #require(refused.form?.fields)
            let landed = try await browser.follow(
                try await browser.post(
                    AuthorizeRoutes.passkeySecondFactorPath,
                    form: [
                        "csrf_token": again["csrf_token"] ?? "", "request": again["request"] ?? "", "flow_id": flowID,
                        "credential": PasskeySignInTests.json(good).serializedString,
                    ]))
            #expect(landed.location?.hasPrefix("http://127.0.0.1/callback?code=") == true, "\(landed.status) \(landed.location ?? landed.text.prefix(500).description)")
            let methods = try await BrowserFlowTests.browserSessionMethods(server, userID)
            #expect(methods == [["pwd", "swk", "mfa"]], "\(methods)")
            let used = try await AuditLog(database: server.database).entries(userID: userID, event: "passkey.used")
            #expect(used.count == 1 && used.first?.details["use"] == "mfa")
        }
    }

    @Test("S29: a page without passkeys carries no script and its policy allows none; a form posted without an answer comes back in words, never a 500")
    func withoutPasskeysAndWithoutAnswer() async throws {
        // The default test server is at 127.0.0.1: no RP ID, no passkeys on its pages.
        try await TestServer.with { server in
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let client = TestOAuthClient(id: notes.id, secret: nil, redirectURI: "http://127.0.0.1/callback")
            let page = try await HostedBrowser(base: URL(string: server.baseURL)!).get(AuthorizationAttempt(client).path)
            #expect(page.status == 200 && !page.text.contains("<script"))
            #expect(page.headers["content-security-policy"]?.contains("script-src") == false)
            #expect(page.text.contains(#"autocomplete="username" "#))
        }
        try await PasskeyBrowserTests.with { server in
            let (notes, _) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Notes", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let client = TestOAuthClient(id: notes.id, secret: nil, redirectURI: "http://127.0.0.1/callback")
            let browser = HostedBrowser(base: URL(string: server.baseURL)!)
            let page = try await browser.get(AuthorizationAttempt(client).path)
            let fields = try #require(page.form?.fields)
            let (flowID, _) = try #require(try Self.passkeyForm(page))
            for credential in ["", "not json", "[]", #"{"id": "x"}"#] {
                let back = try await browser.follow(
                    try await browser.post(
                        AuthorizeRoutes.passkeySignInPath,
                        form: ["csrf_token": fields["csrf_token"] ?? "", "request": fields["request"] ?? "", "flow_id": flowID, "credential": credential]))
                #expect(back.status == 200 && back.text.contains("<h1>Sign in</h1>"), "\(credential): \(back.status)")
                #expect(back.text.contains("The passkey was not") && back.text.contains(#"role="alert""#), "\(credential): \(back.text.prefix(1500))")
            }
        }
    }
}
