import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// Sign-in through an upstream against a real OpenID provider no one here wrote
/// (`oidc-provider-mock`, ``OIDCProviderMock``): once in headless Chromium, driven by
/// `Fixtures/browser_providers.py` (Latchkey's sign-in page, "Continue with Mock Provider", the
/// provider's own page, consent, the app's redirect URI), and once with a plain HTTP client that
/// keeps cookies (``HostedBrowser``) and posts the provider's form as its page would. The browser's
/// side checks what a person and the app see; this side checks what the sign-in left in the
/// database and the audit log.
///
/// Unlike the hostile stand-in of `UpstreamSignInTests`, the provider here is not ours: its
/// discovery, ID tokens without `kid`, its JWKS without `alg` and its form are as its authors made
/// them. It ignores PKCE, so these walks prove that Latchkey sends PKCE, not that the upstream
/// checked it.
@Suite(
    "Upstream sign-in in headless Chromium and a plain HTTP client against a real OpenID provider",
    .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct ProviderBrowserTests {
    static let redirectURI = "http://127.0.0.1/callback"
    static let displayName = "Mock Provider"

    /// A test server with the provider as `mock` (OpenID, `algorithms` left at their default), a
    /// first-party and a third-party client (both public, PKCE), its clock on the wall clock
    /// (the provider's tokens are stamped in real time).
    static func with<T>(
        _ body: (TestServer, OIDCProviderMock, _ firstParty: OAuthClient, _ thirdParty: OAuthClient) async throws -> T
    ) async throws -> T {
        let mock = try await OIDCProviderMock.start()
        defer { mock.stop() }
        // The mock takes any client id and secret; this one is never printed.
        var provider = Configuration.Provider(
            id: "mock", kind: .oidc, displayName: displayName, clientID: "latchkey-tests", scopes: ["openid", "email", "profile"])
        provider.issuer = mock.issuer
        provider.clientSecret = Configuration.ProviderSecret("secret-" + UUID().uuidString)
        return try await TestServer.with({ $0.providers = [provider] }) { server in
            BrowserFlowTests.setClock(server)
            let clients = ClientService(database: server.database, clock: { server.clock.now })
            let (firstParty, _) = try await clients.register(ClientRegistration(name: "Notes", redirectURIs: [redirectURI], firstParty: true))
            let (thirdParty, _) = try await clients.register(ClientRegistration(name: "Example Photos", redirectURIs: [redirectURI]))
            return try await body(server, mock, firstParty, thirdParty)
        }
    }

    /// The one user, the one identity: fails unless there is exactly one of each.
    static func onlyAccount(_ server: TestServer) async throws -> (user: User, identity: Identity) {
        #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM users") == 1)
        #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM identities") == 1)
        let userID = try #require(try await server.database.read { try $0.queryOne("SELECT id FROM users", [])?.string("id") })
        let user = try #require(try await UserRepository(database: server.database).find(userID))
        let identity = try #require(try await Upstream.identities(server, userID: userID).first)
        return (user, identity)
    }

    // MARK: Headless Chromium

    @Test("S37 S38 S39 in Chromium: Continue with the provider on the sign-in page, the real provider's page, consent for a third-party app, the code with state and iss, tokens and userinfo; then single sign-on skips the upstream and prompt=login through it again lands on the same account")
    func chromiumWalk() async throws {
        try await Self.with { server, mock, firstParty, thirdParty in
            let start = Date()
            let sub = "grace-\(UUID().uuidString.prefix(8))"
            try await mock.setUser(sub: sub, email: "grace@example.com", emailVerified: true, name: "Grace Hopper")

            let seen = try await HeadlessChromium.run(
                "provider",
                [
                    "third_party": .string(thirdParty.id), "first_party": .string(firstParty.id), "display_name": .string(Self.displayName),
                    "upstream": .string(mock.issuer), "sub": .string(sub),
                ], on: server, script: "browser_providers.py")

            // What the person saw, page by page.
            let page = HeadlessChromium.page
            let issuer = JSONValue.string(server.baseURL)
            #expect(seen["first_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["continue_buttons"] == ["Continue with Mock Provider"])
            #expect(seen["upstream_page"]?["server"] == "upstream" && seen["upstream_page"]?["path"] == "/oauth2/authorize", "\(seen["upstream_page"] ?? .null)")
            // S38: Latchkey's way to the upstream carries its own state, a nonce and PKCE S256,
            // and the browser holds the binding cookie of that state.
            #expect(seen["upstream_request"] == [
                "code_challenge_method": "S256", "has_code_challenge": true, "has_state": true, "has_nonce": true,
                "redirect_uri": .string(server.baseURL + "/oauth/providers/mock/callback"), "scope": "openid email profile", "response_type": "code",
            ])
            #expect(seen["upstream_buttons"]?.arrayValue?.compactMap(\.stringValue).contains("Authorize") == true, "\(seen["upstream_buttons"] ?? .null)")
            #expect(seen["cookies_at_upstream"]?.arrayValue?.contains("__Host-latchkey_provider") == true)
            // Back from the upstream: signed in (the binding cookie gone), consent for the third-party app.
            #expect(seen["after_upstream"] == page("latchkey", "/oauth/authorize", "Allow Example Photos access?"))
            #expect(Set(seen["consent_items"]?.arrayValue?.compactMap(\.stringValue) ?? []) == Set(["openid", "profile", "email"].map(ConsentPage.describe)))
            #expect(seen["cookies_after_upstream"]?.arrayValue?.contains("__Host-latchkey_session") == true)
            #expect(seen["cookies_after_upstream"]?.arrayValue?.contains("__Host-latchkey_provider") == false)
            #expect(seen["first_callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["first_callback"] == ["has_code": true, "state": "state-provider-one", "iss": issuer, "error": nil])
            let first = try #require(seen["first_redeemed"])
            #expect(first["token_status"] == 200 && first["has_id_token"] == true && first["userinfo_status"] == 200, "\(first)")
            #expect(first["userinfo"]?["email"] == "grace@example.com" && first["userinfo"]?["email_verified"] == true)

            // Single sign-on: the same browser, another app, no page and no upstream.
            #expect(seen["sso_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["sso_callback"] == ["has_code": true, "state": "state-provider-two", "iss": issuer, "error": nil])
            #expect(seen["sso_redeemed"]?["userinfo"]?["sub"] == first["userinfo"]?["sub"])
            // prompt=login: the sign-in page again, the upstream again, the same subject: the same account.
            #expect(seen["again_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["again_upstream_page"]?["server"] == "upstream")
            #expect(seen["again_callback_page"] == page("rp", "/callback", "Back at the application"))
            #expect(seen["again_callback"] == ["has_code": true, "state": "state-provider-three", "iss": issuer, "error": nil])
            #expect(seen["again_redeemed"]?["token_status"] == 200)
            #expect(seen["again_redeemed"]?["userinfo"]?["sub"] == first["userinfo"]?["sub"])
            #expect(seen["rp_hits"] == [
                ["path": "/callback", "state": "state-provider-one", "has_code": true],
                ["path": "/callback", "state": "state-provider-two", "has_code": true],
                ["path": "/callback", "state": "state-provider-three", "has_code": true],
            ])

            // What it left: one account with the provider's email, verified as the provider said,
            // and one identity (mock, the provider's issuer, the subject typed), whichever walk.
            let (user, identity) = try await Self.onlyAccount(server)
            #expect(first["userinfo"]?["sub"] == .string(user.id))
            #expect(user.email == "grace@example.com" && user.emailVerified)
            #expect(identity.provider == "mock" && identity.issuer == mock.issuer && identity.subject == sub)
            #expect(identity.email == "grace@example.com" && identity.emailVerified)
            // Two sign-ins at the upstream (the first made the account), none for single sign-on;
            // consent once, for the third-party app.
            let signIns = try await Upstream.audited(server, "sign_in.provider")
            #expect(signIns.map(\.outcome) == ["success", "success"], "\(signIns)")
            #expect(signIns.map { $0.details["provider"] } == ["mock", "mock"])
            #expect(signIns.first?.details["created"] == "true" && signIns.last?.details["created"] != "true")
            #expect(try await Upstream.audited(server, "identity.linked").isEmpty, "nothing to link: the identity was the account's")
            let consents = try await server.database.read { try $0.query("SELECT client_id FROM oauth_consents WHERE user_id = ?", [.text(user.id)]) }
            #expect(try consents.map { try $0.string("client_id") } == [thirdParty.id])
            let events = try await BrowserFlowTests.audit(server, user.id)
            #expect(events.filter { $0 == "oauth.code_issued" }.count == 3, "\(events)")
            BrowserFlowTests.expectScreenshots(["provider-sign-in", "provider-upstream", "provider-consent", "provider-callback"], since: start)
        }
    }

    // MARK: A plain HTTP client

    /// The app's request with `provider=mock` → 303 to the provider's authorize endpoint; returns
    /// that URL.
    static func toUpstream(_ browser: HostedBrowser, _ server: TestServer, _ mock: OIDCProviderMock, client: OAuthClient) async throws -> String {
        let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(Upstream.verifier.utf8)))
        let start = try await browser.get("/oauth/authorize?" + PercentEncoding.encodeForm([
            "response_type": "code", "client_id": client.id, "redirect_uri": redirectURI, "scope": "openid profile email", "state": "rp-state",
            "nonce": "rp-nonce", "code_challenge": challenge, "code_challenge_method": "S256", "provider": "mock",
        ]))
        #expect(start.status == 303, "\(start.text)")
        let location = try #require(start.location)
        #expect(location.hasPrefix(mock.authorizationEndpoint + "?"), "\(location)")
        #expect(browser.cookies[AuthorizeRoutes.providerCookieName] != nil)
        return location
    }

    /// Latchkey's callback followed to the app's redirect URI; returns that URL's query.
    static func callbackToApp(_ browser: HostedBrowser, _ server: TestServer, callback: String) async throws -> [String: String] {
        #expect(callback.hasPrefix(server.baseURL + "/oauth/providers/mock/callback?"), "\(callback)")
        let back = try await browser.get(callback)
        #expect(back.status == 303, "\(back.status) \(back.text)")
        let atApp = try await browser.follow(back)
        let location = try #require(atApp.location, "\(atApp.status) \(atApp.text)")
        #expect(location.hasPrefix(redirectURI + "?"), "\(location)")
        return Upstream.query(location)
    }

    /// The code exchanged (PKCE) and userinfo read with the access token.
    static func redeem(_ server: TestServer, _ browser: HostedBrowser, code: String, client: OAuthClient) async throws -> (tokens: JSONValue, userinfo: JSONValue) {
        let exchange = try await browser.post("/oauth/token", form: [
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "client_id": client.id, "code_verifier": Upstream.verifier,
        ])
        #expect(exchange.status == 200, "\(exchange.text)")
        let tokens = try JSONValue(parsing: Array(exchange.text.utf8))
        let userinfo = try await server.request(.get, "/oauth/userinfo", headers: ["Authorization": "Bearer " + (tokens["access_token"]?.stringValue ?? "")])
        #expect(userinfo.status == 200)
        return (tokens, try userinfo.json)
    }

    @Test("S37 S38 S39 over plain HTTP against a real OpenID provider: 303 to it with state, nonce and PKCE S256, its form posted, the callback, the code with state and iss, tokens and userinfo; an account and an identity")
    func plainHTTPWalk() async throws {
        try await Self.with { server, mock, firstParty, _ in
            let sub = "ada-\(UUID().uuidString.prefix(8))"
            try await mock.setUser(sub: sub, email: "ada@example.com", emailVerified: true, name: "Ada Lovelace")
            let browser = Upstream.browser(server)
            let upstream = try await Self.toUpstream(browser, server, mock, client: firstParty)
            let asked = Upstream.query(upstream)
            #expect(asked["code_challenge_method"] == "S256" && asked["code_challenge"]?.count == 43)
            #expect(asked["nonce"]?.isEmpty == false && asked["state"]?.isEmpty == false && asked["state"] != "rp-state")
            #expect(asked["redirect_uri"] == server.baseURL + "/oauth/providers/mock/callback")
            // The provider's page, as a person would see it, then its form posted with the subject.
            let page = try await LoopbackHTTP.get(upstream)
            #expect(page.status == 200 && page.text.contains(#"name="sub""#))
            let callback = try await mock.signIn(authorizeURL: upstream, sub: sub)
            #expect(Upstream.query(callback)["state"] == asked["state"], "the provider echoes Latchkey's state")
            let answer = try await Self.callbackToApp(browser, server, callback: callback)
            #expect(answer["state"] == "rp-state" && answer["iss"] == server.baseURL && answer["error"] == nil)
            #expect(browser.cookies[AuthorizeRoutes.providerCookieName] == nil, "the binding cookie is deleted")
            let (tokens, userinfo) = try await Self.redeem(server, browser, code: try #require(answer["code"]), client: firstParty)
            let claims = try Insecure.unverifiedContents(of: try #require(tokens["id_token"]?.stringValue)).claims
            #expect(claims["amr"] == ["fed"])
            #expect(userinfo["email"] == "ada@example.com" && userinfo["email_verified"] == true)

            let (user, identity) = try await Self.onlyAccount(server)
            #expect(claims["sub"]?.stringValue == user.id && userinfo["sub"]?.stringValue == user.id)
            #expect(user.email == "ada@example.com" && user.emailVerified && user.givenName == "Ada" && user.familyName == "Lovelace")
            #expect(identity.provider == "mock" && identity.issuer == mock.issuer && identity.subject == sub)
            let signIns = try await Upstream.audited(server, "sign_in.provider")
            #expect(signIns.count == 1 && signIns.first?.outcome == "success" && signIns.first?.details["created"] == "true", "\(signIns)")

            // A fresh client (no browser session), the same subject: the same account, no new one.
            let again = Upstream.browser(server)
            let answerAgain = try await Self.callbackToApp(
                again, server, callback: try await mock.signIn(authorizeURL: try await Self.toUpstream(again, server, mock, client: firstParty), sub: sub))
            let (_, userinfoAgain) = try await Self.redeem(server, again, code: try #require(answerAgain["code"]), client: firstParty)
            #expect(userinfoAgain["sub"]?.stringValue == user.id)
            _ = try await Self.onlyAccount(server)
        }
    }

    @Test("S37 S38: Deny at the real provider answers access_denied without state; Latchkey's callback cannot tell which sign-in it ends: a page says it was cancelled (400), the audit names access_denied, and the app hears nothing")
    func denied() async throws {
        try await Self.with { server, mock, firstParty, _ in
            let browser = Upstream.browser(server)
            let upstream = try await Self.toUpstream(browser, server, mock, client: firstParty)
            let callback = try await mock.deny(authorizeURL: upstream)
            let query = Upstream.query(callback)
            #expect(callback.hasPrefix(server.baseURL + "/oauth/providers/mock/callback?"), "\(callback)")
            #expect(query["error"] == "access_denied" && query["state"] == nil, "the provider's deny carries no state: \(query)")
            let refused = try await browser.get(callback)
            #expect(refused.status == 400 && refused.location == nil, "\(refused.status) \(refused.location ?? "")")
            #expect(refused.text.contains("Sign-in with Mock Provider did not complete"), "\(refused.text)")
            #expect(refused.text.contains("was cancelled"))
            // The browser's own sign-in is not ended by an answer it cannot place: the binding stays.
            #expect(browser.cookies[AuthorizeRoutes.providerCookieName] != nil)
            let failures = try await Upstream.audited(server, "sign_in.provider")
            #expect(failures.map(\.outcome) == ["failure"] && failures.first?.details["reason"] == "upstream_error", "\(failures)")
            #expect(failures.first?.details["error"] == "access_denied")
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM users") == 0)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM browser_sessions") == 0)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM oauth_codes") == 0)
        }
    }

    @Test("S39: an email the real provider says is unverified makes an account whose email is unverified")
    func unverifiedEmail() async throws {
        try await Self.with { server, mock, firstParty, _ in
            let sub = "eve-\(UUID().uuidString.prefix(8))"
            try await mock.setUser(sub: sub, email: "eve@example.com", emailVerified: false)
            let browser = Upstream.browser(server)
            let callback = try await mock.signIn(authorizeURL: try await Self.toUpstream(browser, server, mock, client: firstParty), sub: sub)
            let answer = try await Self.callbackToApp(browser, server, callback: callback)
            let (_, userinfo) = try await Self.redeem(server, browser, code: try #require(answer["code"]), client: firstParty)
            #expect(userinfo["email"] == "eve@example.com" && userinfo["email_verified"] == false)
            let (user, identity) = try await Self.onlyAccount(server)
            #expect(user.email == "eve@example.com" && !user.emailVerified)
            #expect(identity.subject == sub && identity.email == "eve@example.com" && !identity.emailVerified)
        }
    }
}
