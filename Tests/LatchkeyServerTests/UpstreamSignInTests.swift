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

/// Walks sign-in through upstream providers against a test server and the hostile upstream
/// stand-in (Fixtures/upstream_stand_in.py), which plays an OpenID provider (`corp`) and GitHub
/// (`github`) at once.
enum Upstream {
    static let redirectURI = "http://127.0.0.1/cb"
    static let verifier = "v" + String(repeating: "0123456789", count: 5)

    /// A development server with the stand-in configured as providers `corp` (OpenID) and
    /// `github`, and a first-party client.
    static func with<T>(
        linkByEmail: Bool = true, _ configure: @escaping (inout Configuration) -> Void = { _ in },
        _ body: (TestServer, UpstreamStandIn, OAuthClient) async throws -> T
    ) async throws -> T {
        let standIn = try await UpstreamStandIn.start()
        defer { standIn.stop() }
        var corp = Configuration.Provider(id: "corp", kind: .oidc, displayName: "Corp", clientID: UpstreamStandIn.defaultClientID, scopes: ["openid", "email", "profile"])
        corp.issuer = standIn.issuer
        corp.clientSecret = Configuration.ProviderSecret(UpstreamStandIn.defaultClientSecret)
        corp.linkByEmail = linkByEmail
        var github = Configuration.Provider(id: "github", kind: .github, displayName: "GitHub", clientID: UpstreamStandIn.defaultClientID, scopes: ["read:user", "user:email"])
        github.clientSecret = Configuration.ProviderSecret(UpstreamStandIn.defaultClientSecret)
        github.authorizeURL = standIn.githubAuthorizeURL
        github.tokenURL = standIn.githubTokenURL
        github.apiURL = standIn.githubAPIURL
        return try await TestServer.with({
            $0.providers = [corp, github]
            configure(&$0)
        }) { server in
            let (client, _) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example App", redirectURIs: [redirectURI], firstParty: true))
            return try await body(server, standIn, client)
        }
    }

    static func browser(_ server: TestServer) -> HostedBrowser { HostedBrowser(base: URL(string: server.baseURL)!) }

    static func authorizePath(_ client: OAuthClient, provider: String? = "corp", extra: [String: String] = [:]) -> String {
        let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
        var parameters = [
            "response_type": "code", "client_id": client.id, "redirect_uri": redirectURI, "scope": "openid profile email", "state": "rp-state",
            "nonce": "rp-nonce", "code_challenge": challenge, "code_challenge_method": "S256",
        ]
        if let provider { parameters["provider"] = provider }
        return "/oauth/authorize?" + PercentEncoding.encodeForm(parameters.merging(extra) { $1 })
    }

    /// The client's request → the upstream (which answers at once) → the URL it sends the
    /// browser back to, our callback, not yet followed.
    static func toCallback(_ browser: HostedBrowser, client: OAuthClient, provider: String = "corp", extra: [String: String] = [:]) async throws -> String {
        let start = try await browser.get(authorizePath(client, provider: provider, extra: extra))
        #expect(start.status == 303, "\(start.text)")
        let upstream = try #require(start.location)
        let answer = try await browser.get(upstream)
        #expect(answer.status == 302, "\(answer.text)")
        return try #require(answer.location)
    }

    /// The callback followed to the client's redirect URI, and the code exchanged.
    static func finish(_ browser: HostedBrowser, callback: String, client: OAuthClient) async throws -> JSONValue {
        let back = try await browser.get(callback)
        #expect(back.status == 303, "\(back.text)")
        let atClient = try await browser.follow(back)
        let location = try #require(atClient.location)
        #expect(location.hasPrefix(redirectURI + "?"), "\(location)")
        let query = query(location)
        #expect(query["state"] == "rp-state")
        let exchange = try await browser.post("/oauth/token", form: [
            "grant_type": "authorization_code", "code": try #require(query["code"]), "redirect_uri": redirectURI, "client_id": client.id,
            "code_verifier": verifier,
        ])
        #expect(exchange.status == 200, "\(exchange.text)")
        return try JSONValue(parsing: Array(exchange.text.utf8))
    }

    /// The whole walk: tokens, and the user id their ID token names.
    static func signIn(_ server: TestServer, client: OAuthClient, provider: String = "corp", browser: HostedBrowser? = nil) async throws -> (tokens: JSONValue, userID: String) {
        let browser = browser ?? Self.browser(server)
        let callback = try await toCallback(browser, client: client, provider: provider)
        let tokens = try await finish(browser, callback: callback, client: client)
        let claims = try Insecure.unverifiedContents(of: try #require(tokens["id_token"]?.stringValue)).claims
        return (tokens, try #require(claims["sub"]?.stringValue))
    }

    static func query(_ url: String) -> [String: String] {
        URLComponents(string: url)?.queryItems?.reduce(into: [:]) { $0[$1.name] = $1.value ?? "" } ?? [:]
    }

    static func count(_ server: TestServer, _ sql: String) async throws -> Int {
        try await server.database.read { Int(try $0.queryOne(sql, [])?.int("n") ?? -1) }
    }

    /// The audit entries of `event`, oldest first, as (outcome, details).
    static func audited(_ server: TestServer, _ event: String) async throws -> [(outcome: String, details: JSONValue)] {
        let rows = try await server.database.read { try $0.query("SELECT outcome, details FROM audit_log WHERE event = ? ORDER BY id", [.text(event)]) }
        return try rows.map { (try $0.string("outcome"), try JSONValue(parsing: Array(try $0.string("details").utf8))) }
    }

    static func identities(_ server: TestServer, userID: String) async throws -> [Identity] {
        try await server.database.read { try IdentityRepository().list(userID: userID, on: $0) }
    }

    /// A password account, its email verified or not.
    static func passwordAccount(_ server: TestServer, email: String, verified: Bool) async throws -> String {
        let tokens = try await server.application.passwords.signUp(
            username: email, password: "correct horse battery staple", givenName: nil, familyName: nil, context: RequestContext(ip: "127.0.0.1"))
        let id = tokens.user.id
        try await server.database.write { _ = try $0.execute("UPDATE users SET email_verified = ? WHERE id = ?", [.bool(verified), .text(id)]) }
        return id
    }
}

@Suite("Sign-in through upstream providers")
struct UpstreamSignInTests {
    @Test("S37 S38: the whole walk through an OpenID upstream: a new account, its email verified as the upstream says, tokens, userinfo, audit; PKCE S256, nonce and the client secret on every upstream request, the secret in no log")
    func openIDEndToEnd() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true, sub: "corp-1", email: "grace@example.com", emailVerified: true, name: "Grace Hopper")
            let browser = Upstream.browser(server)
            let start = try await browser.get(Upstream.authorizePath(client))
            #expect(start.status == 303)
            let upstream = Upstream.query(try #require(start.location))
            #expect(upstream["code_challenge_method"] == "S256" && upstream["code_challenge"]?.count == 43 && upstream["nonce"]?.isEmpty == false)
            #expect(upstream["redirect_uri"] == server.baseURL + "/oauth/providers/corp/callback" && upstream["scope"] == "openid email profile")
            #expect(browser.cookies["__Host-latchkey_provider"] != nil)
            let upstreamURL = try #require(start.location)
            let callback = try #require(try await browser.get(upstreamURL).location)
            let tokens = try await Upstream.finish(browser, callback: callback, client: client)
            #expect(browser.cookies["__Host-latchkey_provider"] == nil, "the binding cookie is deleted")
            let claims = try Insecure.unverifiedContents(of: try #require(tokens["id_token"]?.stringValue)).claims
            let userID = try #require(claims["sub"]?.stringValue)
            #expect(claims["amr"] == ["fed"])

            let userinfo = try await server.request(.get, "/oauth/userinfo", headers: ["Authorization": "Bearer " + (tokens["access_token"]?.stringValue ?? "")])
            #expect(userinfo.status == 200)
            #expect(try userinfo.json["email"] == "grace@example.com" && userinfo.json["email_verified"] == true)
            let identities = try await Upstream.identities(server, userID: userID)
            #expect(identities.map(\.provider) == ["corp"] && identities[0].subject == "corp-1" && identities[0].issuer == standIn.issuer)
            let me = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer " + (tokens["access_token"]?.stringValue ?? "")])
            #expect(try me.json["identities"]?.arrayValue?.compactMap { $0["provider"]?.stringValue } == ["corp"])
            let signIns = try await Upstream.audited(server, "sign_in.provider")
            #expect(signIns.count == 1 && signIns[0].outcome == "success" && signIns[0].details["created"] == "true" && signIns[0].details["provider"] == "corp")

            let log = try await standIn.requests()
            let authorize = log.filter { $0.endpoint == "authorize" }
            let token = log.filter { $0.endpoint == "token" }
            #expect(!authorize.isEmpty && authorize.allSatisfy { $0.nonce && $0.codeChallengeMethod == "S256" })
            #expect(!token.isEmpty && token.allSatisfy { $0.codeVerifier && $0.clientAuthentication != nil && $0.status == 200 })
            #expect(!(try await standIn.requestLog()).contains(UpstreamStandIn.defaultClientSecret))
            let audit = try await server.database.read { try $0.query("SELECT details FROM audit_log", []).map { try $0.string("details") } }
            #expect(!audit.joined().contains(UpstreamStandIn.defaultClientSecret))
        }
    }

    @Test("S37: each hostile answer is refused with its own audited reason; no code reaches the app, no account, no identity, no browser session", arguments: [
        (UpstreamStandIn.Mode.wrongIss, "id_token_iss"), (.wrongAud, "id_token_aud"), (.wrongNonce, "id_token_nonce"), (.algNone, "id_token_alg"),
        (.hs256ClientSecret, "id_token_alg"), (.expired, "id_token_expired"), (.unknownKid, "id_token_unknown_key"), (.issParamMismatch, "iss_mismatch"),
        (.azpMismatch, "id_token_azp"),
    ])
    func hostileAnswers(mode: UpstreamStandIn.Mode, reason: String) async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true, mode: mode)
            let browser = Upstream.browser(server)
            let callback = try await Upstream.toCallback(browser, client: client)
            let refused = try await browser.get(callback)
            #expect(refused.status == 400, "\(mode): \(refused.text)")
            #expect(refused.location == nil && refused.text.contains("did not complete"))
            #expect(browser.cookies["__Host-latchkey_session"] == nil)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM users") == 0)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM identities") == 0)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM browser_sessions") == 0)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM oauth_codes") == 0)
            let failures = try await Upstream.audited(server, "sign_in.provider")
            #expect(failures.map(\.outcome) == ["failure"] && failures.first?.details["reason"]?.stringValue == reason, "\(mode)")
        }
    }

    @Test("S37: an upstream error=access_denied goes back to the app as the same error with its state")
    func upstreamError() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true, mode: .errorAccessDenied)
            let browser = Upstream.browser(server)
            let back = try await browser.get(try await Upstream.toCallback(browser, client: client))
            #expect(back.status == 303)
            let query = Upstream.query(try #require(back.location))
            #expect(back.location?.hasPrefix(Upstream.redirectURI + "?") == true)
            #expect(query["error"] == "access_denied" && query["state"] == "rp-state" && query["code"] == nil && query["iss"] == server.baseURL)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM users") == 0)
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM browser_sessions") == 0 && browser.cookies["__Host-latchkey_session"] == nil)
            #expect(try await Upstream.audited(server, "sign_in.provider").first?.details["error"] == "access_denied")
        }
    }

    @Test("S38: a replayed state, a callback in another browser, a forged state and a state for another provider are refused before any exchange")
    func stateChecks() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true)
            let browser = Upstream.browser(server)
            let callback = try await Upstream.toCallback(browser, client: client)
            // Another browser: no binding cookie.
            let elsewhere = try await Upstream.browser(server).get(callback)
            #expect(elsewhere.status == 400 && elsewhere.text.contains("another browser"))
            // The genuine browser completes it, which deletes its binding cookie; the same answer
            // again, even with the cookie put back, is a replay.
            let binding = try #require(browser.cookies["__Host-latchkey_provider"])
            _ = try await Upstream.finish(browser, callback: callback, client: client)
            browser.setCookie("__Host-latchkey_provider", binding)
            let replayed = try await browser.get(callback)
            #expect(replayed.status == 400 && replayed.text.contains("already completed"), "\(replayed.text)")
            // A state that is not one of ours, and one of ours for the other provider.
            #expect(try await browser.get("/oauth/providers/corp/callback?code=x&state=x.y").status == 400)
            let state = try #require(Upstream.query(callback)["state"])
            let github = try await browser.get("/oauth/providers/github/callback?code=x&state=" + PercentEncoding.encode(state))
            #expect(github.status == 400)
            let reasons = try await Upstream.audited(server, "sign_in.provider").compactMap { $0.details["reason"]?.stringValue }
            #expect(reasons == ["state_other_browser", "state_replayed", "state_unknown", "state_unknown"])
            let exchanges = try await standIn.requests().filter { $0.endpoint == "token" }
            #expect(exchanges.count == 1, "refused states never reach the token endpoint")
            // Only the genuine sign-in left anything: one account, one identity, one browser session, one code.
            for table in ["users", "identities", "browser_sessions", "oauth_codes"] {
                #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM \(table)") == 1, "\(table)")
            }
        }
    }

    @Test("an upstream whose token endpoint fails is a 503 page with Retry-After and a retry link, never a 500")
    func upstreamUnavailable() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true, mode: .token500)
            let browser = Upstream.browser(server)
            let page = try await browser.get(try await Upstream.toCallback(browser, client: client))
            #expect(page.status == 503 && page.headers["retry-after"] == "5" && page.text.contains("Try again"), "\(page.status) \(page.headers)")
            #expect(try await Upstream.audited(server, "sign_in.provider").first?.details["reason"] == "upstream_unavailable")
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM users") == 0)
        }
    }

    @Test("linking: both emails verified links; the same subject lands on the same account after its email changes")
    func linkedWhenBothVerified() async throws {
        try await Upstream.with { server, standIn, client in
            let existing = try await Upstream.passwordAccount(server, email: "ada@example.com", verified: true)
            try await standIn.configure(reset: true, sub: "corp-ada", email: "ada@example.com", emailVerified: true)
            let (_, userID) = try await Upstream.signIn(server, client: client)
            #expect(userID == existing)
            let linked = try await Upstream.audited(server, "identity.linked")
            #expect(linked.count == 1 && linked[0].details["via"] == "email" && linked[0].details["provider"] == "corp")
            try await standIn.configure(email: "ada.lovelace@example.org", emailVerified: false)
            let (_, again) = try await Upstream.signIn(server, client: client)
            #expect(again == existing)
            #expect(try await Upstream.identities(server, userID: existing).first { $0.provider == "corp" }?.email == "ada.lovelace@example.org")
        }
    }

    @Test("S39: not linked when the upstream's email is unverified (pre-hijacking) or the account's is; the page asks to sign in to the account, and then links")
    func notLinkedUnlessBothVerified() async throws {
        try await Upstream.with { server, standIn, client in
            let verified = try await Upstream.passwordAccount(server, email: "ada@example.com", verified: true)
            let unverified = try await Upstream.passwordAccount(server, email: "bob@example.com", verified: false)
            for (email, upstreamVerified, account) in [("ada@example.com", false, verified), ("bob@example.com", true, unverified)] {
                try await standIn.configure(reset: true, sub: "corp-" + email, email: email, emailVerified: upstreamVerified)
                let browser = Upstream.browser(server)
                let back = try await browser.get(try await Upstream.toCallback(browser, client: client))
                #expect(back.status == 303 && browser.cookies["__Host-latchkey_link"] != nil && browser.cookies["__Host-latchkey_session"] == nil)
                let page = try await browser.follow(back)
                #expect(page.status == 200 && page.text.contains("An account with this email already exists"), "\(page.text)")
                #expect(page.text.contains(email))
                #expect(try await Upstream.identities(server, userID: account).isEmpty, "nothing linked before the account's own sign-in")
                // The user signs in to the account with its password; the identity is linked.
                let signedIn = try await browser.submit(page, ["username": email, "password": "correct horse battery staple"])
                #expect(signedIn.location?.hasPrefix(Upstream.redirectURI + "?code=") == true, "\(signedIn.status) \(signedIn.text)")
                #expect(try await Upstream.identities(server, userID: account).map(\.provider) == ["corp"])
                #expect(browser.cookies["__Host-latchkey_link"] == nil)
            }
            #expect(try await Upstream.audited(server, "identity.linked").map { $0.details["via"]?.stringValue } == ["sign_in", "sign_in"])
            #expect(try await Upstream.audited(server, "sign_in.provider").map { $0.details["reason"]?.stringValue } == ["link_required", "link_required"])
            #expect(try await Upstream.count(server, "SELECT count(*) AS n FROM users") == 2)
        }
    }

    @Test("link_by_email false never links by email, even when both are verified")
    func linkByEmailOff() async throws {
        try await Upstream.with(linkByEmail: false) { server, standIn, client in
            let account = try await Upstream.passwordAccount(server, email: "ada@example.com", verified: true)
            try await standIn.configure(reset: true, email: "ada@example.com", emailVerified: true)
            let browser = Upstream.browser(server)
            let back = try await browser.get(try await Upstream.toCallback(browser, client: client))
            #expect(back.status == 303 && browser.cookies["__Host-latchkey_link"] != nil)
            #expect(try await Upstream.identities(server, userID: account).isEmpty)
        }
    }

    @Test("linking while signed in: prompt=login with provider links the new identity to the browser's account")
    func linkWhileSignedIn() async throws {
        try await Upstream.with { server, standIn, client in
            let account = try await Upstream.passwordAccount(server, email: "ada@example.com", verified: false)
            let browser = Upstream.browser(server)
            let page = try await browser.get(Upstream.authorizePath(client, provider: nil))
            let signedIn = try await browser.submit(page, ["username": "ada@example.com", "password": "correct horse battery staple"])
            #expect(signedIn.location?.hasPrefix(Upstream.redirectURI) == true)
            try await standIn.configure(reset: true, sub: "corp-other", email: "someone.else@example.com", emailVerified: true)
            let callback = try await Upstream.toCallback(browser, client: client, extra: ["prompt": "login"])
            _ = try await Upstream.finish(browser, callback: callback, client: client)
            #expect(try await Upstream.identities(server, userID: account).map(\.subject) == ["corp-other"])
            #expect(try await Upstream.audited(server, "identity.linked").first?.details["via"] == "session")
        }
    }

    @Test("S37: an account with a second factor goes from the upstream to the second-factor page, and only its code lets the app have a code")
    func secondFactor() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true, sub: "corp-mfa", email: "mfa@example.com")
            let (tokens, userID) = try await Upstream.signIn(server, client: client)
            let bearer = ["Authorization": "Bearer " + (tokens["access_token"]?.stringValue ?? "")]
            let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
            let secret = TOTPTests.base32Decode(begin.secret)
            let confirm = try await server.request(
                .post, "/v1/totp/confirm", json: ["code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now) - 1))], headers: bearer)
            #expect(confirm.status == 200)

            let browser = Upstream.browser(server)
            let back = try await browser.get(try await Upstream.toCallback(browser, client: client))
            #expect(back.status == 303 && back.location?.hasPrefix("/oauth/authorize/second-factor?") == true, "\(back.status) \(back.location ?? "")")
            #expect(browser.cookies["__Host-latchkey_session"] == nil, "no browser session before the second factor")
            let page = try await browser.follow(back)
            let done = try await browser.submit(page, ["code": TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))])
            let location = try #require(done.location)
            #expect(location.hasPrefix(Upstream.redirectURI + "?code="), "\(done.status) \(done.text.prefix(300))")
            let sessions = try await server.database.read { try $0.query("SELECT amr FROM browser_sessions WHERE user_id = ?", [.text(userID)]) }
            #expect(try sessions.map { try $0.string("amr") }.contains { $0.contains("fed") && $0.contains("otp") && $0.contains("mfa") })
        }
    }

    @Test("GitHub: the numeric id is the subject; a private verified primary email is verified, an unverified primary is not")
    func github() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(
                reset: true, githubID: 4242, login: "octo", githubEmails: [.init(email: "octo@example.com", primary: true, verified: true)])
            let (_, first) = try await Upstream.signIn(server, client: client, provider: "github")
            let identity = try #require(try await Upstream.identities(server, userID: first).first)
            #expect(identity.provider == "github" && identity.subject == "4242" && identity.email == "octo@example.com" && identity.emailVerified)
            #expect(try #require(try await UserRepository(database: server.database).find(first)).emailVerified)
            // A renamed login is the same account.
            try await standIn.configure(login: "octo-renamed")
            #expect(try await Upstream.signIn(server, client: client, provider: "github").userID == first)

            try await standIn.configure(
                reset: true, githubID: 777, githubEmails: [.init(email: "new@example.com", primary: true, verified: false), .init(email: "x@example.com", primary: false, verified: true)])
            let (_, second) = try await Upstream.signIn(server, client: client, provider: "github")
            let user = try #require(try await UserRepository(database: server.database).find(second))
            #expect(second != first && user.email == "new@example.com" && !user.emailVerified)
            let token = try await standIn.requests().filter { $0.endpoint == "token" }
            #expect(token.allSatisfy { $0.codeVerifier && $0.shape == "github" })
        }
    }

    @Test("unlinking: 404 for a provider the account lacks, 409 for its last way to sign in, 403 with a stale sign-in, then 204 and identity.unlinked")
    func unlink() async throws {
        try await Upstream.with { server, standIn, client in
            try await standIn.configure(reset: true, email: "ada@example.com")
            let (tokens, userID) = try await Upstream.signIn(server, client: client)
            let bearer = ["Authorization": "Bearer " + (tokens["access_token"]?.stringValue ?? "")]
            #expect(try await server.request(.delete, "/v1/me/identities/github", headers: bearer).status == 404)
            let last = try await server.request(.delete, "/v1/me/identities/corp", headers: bearer)
            #expect(last.status == 409, "\(last.text)")
            #expect(try last.json["error"] == "conflict")
            try await server.database.write { connection in
                try PasswordCredentialRepository().insert(userID: userID, username: "ada@example.com", hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", now: Date(), on: connection)
            }
            server.clock.advance(by: 301)
            #expect(try await server.request(.delete, "/v1/me/identities/corp", headers: bearer).status == 403)
            server.clock.advance(by: -301)
            let unlinked = try await server.request(.delete, "/v1/me/identities/corp", headers: bearer)
            #expect(unlinked.status == 204, "\(unlinked.text)")
            #expect(try await Upstream.identities(server, userID: userID).isEmpty)
            #expect(try await Upstream.audited(server, "identity.unlinked").first?.details["provider"] == "corp")
        }
    }

    @Test("development mode: Continue with Sandbox walks the sandbox OpenID provider's page end to end, and the same email is the same account")
    func sandboxProvider() async throws {
        try await TestServer.with({ ConfigurationLoader.addSandboxProvider(&$0) }) { server in
            let (client, _) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example App", redirectURIs: [Upstream.redirectURI], firstParty: true))
            var users: [String] = []
            for _ in 0..<2 {
                let browser = Upstream.browser(server)
                let signInPage = try await browser.get(Upstream.authorizePath(client, provider: nil))
                let link = try #require(signInPage.text.firstMatch(of: /href="([^"]*)">Continue with Sandbox</)).output.1
                let toSandbox = try await browser.get(WebApple.unescape(String(link)))
                #expect(toSandbox.status == 303 && toSandbox.location?.hasPrefix(server.baseURL + "/sandbox/oidc/authorize?") == true)
                let page = try await browser.get(try #require(toSandbox.location))
                let form = try #require(page.form)
                let back = try await browser.post(
                    form.action, form: form.fields.merging(["email": "dev@example.com", "name": "Dev Eloper", "email_verified": "true", "action": "continue"]) { $1 })
                #expect(back.status == 303 && back.location?.hasPrefix(server.baseURL + "/oauth/providers/sandbox/callback?") == true, "\(back.text)")
                let tokens = try await Upstream.finish(browser, callback: try #require(back.location), client: client)
                let claims = try Insecure.unverifiedContents(of: try #require(tokens["id_token"]?.stringValue)).claims
                users.append(try #require(claims["sub"]?.stringValue))
            }
            #expect(users[0] == users[1])
            let user = try #require(try await UserRepository(database: server.database).find(users[0]))
            #expect(user.givenName == "Dev" && user.familyName == "Eloper" && user.email == "dev@example.com" && user.emailVerified)
        }
    }

    @Test("the sign-in page offers a Continue button per provider; an unknown provider is the client's invalid_request")
    func pageButtons() async throws {
        try await Upstream.with { server, _, client in
            let page = try await Upstream.browser(server).get(Upstream.authorizePath(client, provider: nil))
            #expect(page.text.contains("Continue with Corp") && page.text.contains("Continue with GitHub"))
            let unknown = try await Upstream.browser(server).get(Upstream.authorizePath(client, provider: "nope"))
            #expect(unknown.status == 303)
            let location = try #require(unknown.location)
            #expect(Upstream.query(location)["error"] == "invalid_request")
        }
    }
}
