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

/// Walks web Sign in with Apple against a test server and its sandbox Apple.
enum WebApple {
    static let servicesID = "com.example.web"
    static let redirectURI = "http://127.0.0.1/cb"
    static let verifier = "v" + String(repeating: "0123456789", count: 5)

    static func browser(_ server: TestServer) -> HostedBrowser { HostedBrowser(base: URL(string: server.baseURL)!) }

    /// The query of a URL as a dictionary.
    static func query(_ url: String) -> [String: String] {
        URLComponents(string: url)?.queryItems?.reduce(into: [:]) { $0[$1.name] = $1.value ?? "" } ?? [:]
    }

    /// An attribute value as the page wrote it, unescaped.
    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// A development server with web sign-in on (the sandbox plays Apple's authorize page).
    static func with<T>(_ body: (TestServer, OAuthClient) async throws -> T) async throws -> T {
        try await TestServer.with({ $0.apple.webClientID = servicesID }) { server in
            let (client, _) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example App", redirectURIs: [redirectURI], firstParty: true))
            return try await body(server, client)
        }
    }

    static func authorizePath(_ client: OAuthClient, state: String = "rp-state") -> String {
        let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
        return "/oauth/authorize?" + PercentEncoding.encodeForm([
            "response_type": "code", "client_id": client.id, "redirect_uri": redirectURI, "scope": "openid profile email", "state": state,
            "nonce": "rp-nonce", "code_challenge": challenge, "code_challenge_method": "S256",
        ])
    }

    /// Where one walk got to.
    struct AtApple {
        /// The redirect to Apple's authorize URL.
        var appleURL: String
        /// Apple's page's form, its hidden fields as Apple got them.
        var pageForm: (action: String, fields: [String: String])
    }

    /// The client's authorization request → the sign-in page → its Apple link → the sandbox's page.
    static func toApple(_ browser: HostedBrowser, client: OAuthClient) async throws -> AtApple {
        let signInPage = try await browser.get(authorizePath(client))
        #expect(signInPage.status == 200)
        let link = try #require(signInPage.text.firstMatch(of: /href="([^"]*)">Sign in with Apple</)).output.1
        #expect(link.hasPrefix("/oauth/authorize/apple?"))
        let toApple = try await browser.get(unescape(String(link)))
        #expect(toApple.status == 303)
        let appleURL = try #require(toApple.location)
        let applePage = try await browser.get(appleURL)
        #expect(applePage.status == 200, "\(applePage.text)")
        return AtApple(appleURL: appleURL, pageForm: try #require(applePage.form))
    }

    /// Apple's page, filled in: the form post it answers with (action and fields).
    static func continueAtApple(
        _ browser: HostedBrowser, _ at: AtApple, email: String = "ada@example.com", hideEmail: Bool = false,
        names: (String, String) = ("Ada", "Lovelace"), changing: [String: String] = [:]
    ) async throws -> (action: String, fields: [String: String]) {
        var fields = at.pageForm.fields.merging(["email": email, "first_name": names.0, "last_name": names.1, "action": "continue"]) { $1 }
        if hideEmail { fields["hide_email"] = "true" }
        fields.merge(changing) { $1 }
        let answer = try await browser.post(at.pageForm.action, form: fields)
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(answer.form)
    }

    /// Posts Apple's answer to the callback as the cross-site POST it is.
    static func callback(_ browser: HostedBrowser, _ post: (action: String, fields: [String: String])) async throws -> HostedBrowser.Page {
        try await browser.post(post.action, form: post.fields, crossSite: true)
    }

    /// The whole walk to the client's redirect URI and the token exchange; returns the token
    /// response and Apple's form post.
    static func signIn(
        _ server: TestServer, client: OAuthClient, browser: HostedBrowser? = nil, email: String = "ada@example.com",
        names: (String, String) = ("Ada", "Lovelace")
    ) async throws -> (tokens: JSONValue, applePost: [String: String]) {
        let browser = browser ?? Self.browser(server)
        let at = try await toApple(browser, client: client)
        let post = try await continueAtApple(browser, at, email: email, names: names)
        let back = try await callback(browser, post)
        #expect(back.status == 303, "\(back.text)")
        let atClient = try await browser.follow(back)
        let location = try #require(atClient.location)
        #expect(location.hasPrefix(redirectURI + "?"))
        let query = WebApple.query(location)
        #expect(query["state"] == "rp-state" && query["iss"] == server.baseURL)
        let exchange = try await browser.post("/oauth/token", form: [
            "grant_type": "authorization_code", "code": try #require(query["code"]), "redirect_uri": redirectURI, "client_id": client.id,
            "code_verifier": verifier,
        ])
        #expect(exchange.status == 200, "\(exchange.text)")
        return (try JSONValue(parsing: Array(exchange.text.utf8)), post.fields)
    }

    static func claims(_ jwt: String) throws -> JSONValue { try Insecure.unverifiedContents(of: jwt).claims }

    /// The `check` of each refused web sign-in in the audit log, oldest first.
    static func refusedChecks(_ server: TestServer) async throws -> [String] {
        let rows = try await server.database.read {
            try $0.query("SELECT details FROM audit_log WHERE event = 'sign_in' AND outcome = 'failure' ORDER BY id", [])
        }
        return try rows.compactMap { row in
            let details = try JSONValue(parsing: Array(row.string("details").utf8))
            return details["flow"]?.stringValue == "web" ? details["check"]?.stringValue : nil
        }
    }

    static func user(_ server: TestServer, _ id: String) async throws -> User {
        try #require(try await server.database.read { try UserRepository(database: server.database).find(id, on: $0) })
    }
}

@Suite("Web Sign in with Apple from the hosted sign-in page")
struct WebAppleSignInTests {
    @Test("the whole walk: sign-in page → Apple link → sandbox page → form_post callback → code → tokens; native /v1/auth/apple with the same sub is the same user")
    func webSignInEndToEnd() async throws {
        try await WebApple.with { server, client in
            let browser = WebApple.browser(server)
            let at = try await WebApple.toApple(browser, client: client)
            // The redirect to Apple carries Apple's parameters, and the binding cookie is SameSite=None.
            #expect(at.appleURL.hasPrefix(server.baseURL + "/sandbox/apple/auth/authorize?"))
            let apple = WebApple.query(at.appleURL)
            #expect(apple["response_type"] == "code id_token" && apple["response_mode"] == "form_post" && apple["scope"] == "name email")
            #expect(apple["client_id"] == WebApple.servicesID && apple["redirect_uri"] == server.baseURL + "/oauth/apple/callback")
            let nonce = try #require(apple["nonce"])
            #expect(nonce.count == 64 && nonce.allSatisfy(\.isHexDigit), "the nonce is a SHA-256 in hex")
            #expect(apple["state"]?.isEmpty == false)
            #expect(browser.sameSiteNoneCookies.contains("__Host-latchkey_apple"))

            let post = try await WebApple.continueAtApple(browser, at)
            #expect(post.action == server.baseURL + "/oauth/apple/callback")
            #expect(Set(post.fields.keys) == ["code", "id_token", "state", "user"])
            let appleClaims = try WebApple.claims(try #require(post.fields["id_token"]))
            #expect(appleClaims["aud"] == .string(WebApple.servicesID) || appleClaims["aud"] == [.string(WebApple.servicesID)])
            #expect(appleClaims["nonce"]?.stringValue == nonce)
            let appleSub = try #require(appleClaims["sub"]?.stringValue)

            // The callback is a cross-site POST: only the SameSite=None cookie goes with it.
            let back = try await WebApple.callback(browser, post)
            #expect(back.status == 303, "\(back.text)")
            #expect(back.location?.hasPrefix("/oauth/authorize?") == true)
            #expect(browser.cookies["__Host-latchkey_apple"] == nil, "the binding cookie is deleted")
            #expect(browser.cookies["__Host-latchkey_session"] != nil, "a browser session")
            let atClient = try await browser.follow(back)
            let query = WebApple.query(try #require(atClient.location))
            let exchange = try await browser.post("/oauth/token", form: [
                "grant_type": "authorization_code", "code": try #require(query["code"]), "redirect_uri": WebApple.redirectURI,
                "client_id": client.id, "code_verifier": WebApple.verifier,
            ])
            #expect(exchange.status == 200, "\(exchange.text)")
            let tokens = try JSONValue(parsing: Array(exchange.text.utf8))
            let idClaims = try WebApple.claims(try #require(tokens["id_token"]?.stringValue))
            let userID = try #require(idClaims["sub"]?.stringValue)
            #expect(idClaims["amr"] == ["apple"] && idClaims["nonce"] == "rp-nonce")

            let user = try await WebApple.user(server, userID)
            #expect(user.givenName == "Ada" && user.familyName == "Lovelace" && user.email == "ada@example.com")
            let entries = try await AuditLog(database: server.database).entries(userID: userID, limit: 20)
            let signIn = try #require(entries.first { $0.event.rawValue == "sign_in" })
            #expect(signIn.outcome == .success && signIn.details["method"] == "apple" && signIn.details["flow"] == "web")
            #expect(signIn.details["created"] == "true" && signIn.details["code_exchanged"] == "true")

            // Same team, same sub: the app's native sign-in lands in the same account.
            let sandbox = try #require(server.application.sandbox)
            let (native, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: appleSub, email: "ada@example.com")
            #expect(native.status == 200, "\(native.text)")
            #expect(try native.tokens.user.id == userID && native.tokens.created == false)
        }
    }

    @Test("the name from Apple's user JSON is stored on the first authorization only; a later user field changes nothing")
    func nameStoredOnFirstAuthorizationOnly() async throws {
        try await WebApple.with { server, client in
            let (first, firstPost) = try await WebApple.signIn(server, client: client)
            #expect(firstPost["user"] != nil)
            let firstToken = try #require(first["id_token"]?.stringValue)
            let userID = try #require(try WebApple.claims(firstToken)["sub"]?.stringValue)

            // Apple sends the user JSON once: the second authorization has none.
            let (second, secondPost) = try await WebApple.signIn(server, client: client, names: ("Eve", "Mallory"))
            #expect(secondPost["user"] == nil)
            let secondToken = try #require(second["id_token"]?.stringValue)
            #expect(try WebApple.claims(secondToken)["sub"]?.stringValue == userID)

            // A user field on a later sign-in (not from Apple) does not rename the account.
            let browser = WebApple.browser(server)
            let at = try await WebApple.toApple(browser, client: client)
            var post = try await WebApple.continueAtApple(browser, at)
            post.fields["user"] = #"{"name":{"firstName":"Eve","lastName":"Mallory"}}"#
            #expect(try await WebApple.callback(browser, post).status == 303)

            let user = try await WebApple.user(server, userID)
            #expect(user.givenName == "Ada" && user.familyName == "Lovelace")
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 1)
        }
    }

    @Test("S29: a bad state, a state without its browser's cookie, a replayed id_token, a wrong nonce and another aud are refused with an error page, audited")
    func refusalsAreErrorPagesS29() async throws {
        try await WebApple.with { server, client in
            func expectRefused(_ page: HostedBrowser.Page, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(page.status == 400, comment, sourceLocation: sourceLocation)
                #expect(page.headers["content-type"] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
                #expect(page.text.contains("Sign in with Apple did not complete"), sourceLocation: sourceLocation)
                #expect(page.headers["x-frame-options"] == "DENY", sourceLocation: sourceLocation)
                #expect(!page.text.contains("eyJ"), "no token on the page", sourceLocation: sourceLocation)
            }

            // A state whose request was changed.
            let browser = WebApple.browser(server)
            let post = try await WebApple.continueAtApple(browser, try await WebApple.toApple(browser, client: client))
            var tampered = post
            let parts = try #require(post.fields["state"]).split(separator: ".").map(String.init)
            let forged = Base64URL.encode(Array(WebApple.authorizePath(client, state: "forged").utf8))
            tampered.fields["state"] = [parts[0], forged, parts[2]].joined(separator: ".")
            expectRefused(try await WebApple.callback(browser, tampered), "a changed request")
            tampered.fields["state"] = "not-a-state"
            expectRefused(try await WebApple.callback(browser, tampered), "a malformed state")

            // Apple's genuine answer posted into another browser (login CSRF): no binding cookie.
            let victim = WebApple.browser(server)
            expectRefused(try await WebApple.callback(victim, post), "another browser")
            #expect(victim.cookies["__Host-latchkey_session"] == nil)

            // The genuine answer works once; replayed with the cookie kept, it is refused.
            let kept = try #require(browser.cookies["__Host-latchkey_apple"])
            #expect(try await WebApple.callback(browser, post).status == 303)
            browser.setCookie("__Host-latchkey_apple", kept, sameSiteNone: true)
            expectRefused(try await WebApple.callback(browser, post), "a replayed id_token")

            // An identity token minted for another nonce.
            let other = WebApple.browser(server)
            let wrongNonce = try await WebApple.continueAtApple(
                other, try await WebApple.toApple(other, client: client), changing: ["nonce": AppleFlow.nonce().hashed])
            expectRefused(try await WebApple.callback(other, wrongNonce), "a wrong nonce")

            // An identity token for the app's bundle id instead of the Services ID.
            let third = WebApple.browser(server)
            let wrongAudience = try await WebApple.continueAtApple(
                third, try await WebApple.toApple(third, client: client), changing: ["client_id": "com.example.app"])
            expectRefused(try await WebApple.callback(third, wrongAudience), "aud of the native app")

            // A state older than ten minutes.
            let late = WebApple.browser(server)
            let latePost = try await WebApple.continueAtApple(late, try await WebApple.toApple(late, client: client))
            server.clock.advance(by: AppleWebSignIn.lifetime + 1)
            expectRefused(try await WebApple.callback(late, latePost), "an expired state")

            let checks = try await WebApple.refusedChecks(server)
            #expect(checks == ["state", "state", "state", "replay", "nonce", "aud", "state"], "\(checks)")
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'sign_in' AND outcome = 'success'") == 1)
        }
    }

    @Test("a user who signed in on the web only gets Apple's notifications, whose aud is the Services ID")
    func notificationForServicesID() async throws {
        try await WebApple.with { server, client in
            let (_, post) = try await WebApple.signIn(server, client: client)
            let identityToken = try #require(post["id_token"])
            let subject = try #require(try WebApple.claims(identityToken)["sub"]?.stringValue)
            let sandbox = try #require(server.application.sandbox)
            #expect(try await sandbox.notify(subject: subject, type: "email-disabled") == 200)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'apple.notification' AND outcome = 'applied'") == 1)
        }
    }

    @Test("MFA is inherited: an Apple user with TOTP goes to the second-factor page, then on to the client")
    func secondFactorAfterAppleS19() async throws {
        try await WebApple.with { server, client in
            let sandbox = try #require(server.application.sandbox)
            let subject = AppleSandbox.subject(forEmail: "ada@example.com")
            let (native, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: subject, email: "ada@example.com")
            let bearer = ["Authorization": "Bearer " + (try native.tokens.accessToken)]
            let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
            let secret = TOTPTests.base32Decode(begin.secret)
            let confirm = try await server.request(
                .post, "/v1/totp/confirm", json: ["code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)))], headers: bearer)
            #expect(confirm.status == 200, "\(confirm.text)")
            server.clock.advance(by: 30)

            let browser = WebApple.browser(server)
            let post = try await WebApple.continueAtApple(browser, try await WebApple.toApple(browser, client: client))
            let back = try await WebApple.callback(browser, post)
            #expect(back.status == 303)
            #expect(back.location?.hasPrefix("/oauth/authorize/second-factor?") == true)
            #expect(browser.cookies["__Host-latchkey_session"] == nil, "no browser session before the second factor")
            let codePage = try await browser.get(try #require(back.location))
            #expect(codePage.status == 200 && codePage.text.contains("one-time-code"))
            var form = try #require(codePage.form)
            form.fields["code"] = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
            let signedIn = try await browser.post(form.action, form: form.fields)
            #expect(signedIn.status == 303)
            let atClient = try await browser.follow(signedIn)
            #expect(atClient.location?.hasPrefix(WebApple.redirectURI + "?code=") == true)
        }
    }

    @Test("cancelling at Apple goes back to the sign-in page, which says so")
    func cancelledAtApple() async throws {
        try await WebApple.with { server, client in
            let browser = WebApple.browser(server)
            let at = try await WebApple.toApple(browser, client: client)
            let answer = try await browser.post(at.pageForm.action, form: at.pageForm.fields.merging(["action": "cancel"]) { $1 })
            let post = try #require(answer.form)
            #expect(post.fields["error"] == "user_cancelled_authorize" && post.fields["code"] == nil)
            let back = try await WebApple.callback(browser, post)
            #expect(back.status == 303 && back.location?.hasPrefix("/oauth/authorize?") == true)
            let page = try await browser.follow(back)
            #expect(page.status == 200 && page.text.contains("Sign in with Apple was cancelled."))
        }
    }

    @Test("without apple.web_client_id the sign-in page has no Apple link and the start route is an error page")
    func offWithoutServicesID() async throws {
        try await TestServer.with { server in
            let (client, _) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example App", redirectURIs: [WebApple.redirectURI], firstParty: true))
            let browser = WebApple.browser(server)
            let page = try await browser.get(WebApple.authorizePath(client))
            #expect(page.status == 200 && !page.text.contains("Sign in with Apple"))
            let start = try await browser.get(WebApple.authorizePath(client).replacingOccurrences(of: "/oauth/authorize?", with: "/oauth/authorize/apple?"))
            #expect(start.status == 400 && start.text.contains("Sign in with Apple is not set up"))
        }
    }

    @Test("the sandbox's authorize page: Apple's parameters checked, labelled fields, Hide My Email gives a relay address")
    func sandboxAuthorizePage() async throws {
        try await WebApple.with { server, client in
            let browser = WebApple.browser(server)
            let at = try await WebApple.toApple(browser, client: client)
            var bad = WebApple.query(at.appleURL)
            bad["client_id"] = "com.unknown.web"
            #expect(try await browser.get("/sandbox/apple/auth/authorize?" + PercentEncoding.encodeForm(bad)).status == 400)
            bad["client_id"] = WebApple.servicesID
            bad["response_mode"] = "query"
            #expect(try await browser.get("/sandbox/apple/auth/authorize?" + PercentEncoding.encodeForm(bad)).status == 400)
            let page = try await browser.get(at.appleURL)
            for id in ["email", "hide_email", "first_name", "last_name"] {
                #expect(page.text.contains("<label for=\"\(id)\">"), "\(id) has a label")
            }
            let post = try await WebApple.continueAtApple(browser, at, email: "grace@example.com", hideEmail: true)
            let claims = try WebApple.claims(try #require(post.fields["id_token"]))
            #expect(claims["sub"]?.stringValue == AppleSandbox.subject(forEmail: "grace@example.com"))
            #expect(claims["email"]?.stringValue?.hasSuffix("@privaterelay.appleid.com") == true && claims["is_private_email"] == "true")
            #expect(AppleWebSignIn.name(fromUser: post.fields["user"]) == ("Ada", "Lovelace"))
        }
    }

    @Test("apple.web_client_id and apple.authorize_url: read from the environment, checked, defaulted in development mode without a team")
    func configuration() throws {
        let plain = try ConfigurationLoader.load(file: nil, environment: [:])
        #expect(plain.apple.webClientID.isEmpty && plain.apple.authorizeURL == "https://appleid.apple.com/auth/authorize")
        #expect(try ConfigurationLoader.load(file: nil, environment: [:], dev: true).apple.webClientID == "com.example.web")
        let set = try ConfigurationLoader.load(file: nil, environment: [
            "LATCHKEY_APPLE_WEB_CLIENT_ID": "com.a.web", "LATCHKEY_APPLE_AUTHORIZE_URL": "http://127.0.0.1:9/auth/authorize",
        ], dev: true)
        #expect(set.apple.webClientID == "com.a.web" && set.apple.authorizeURL == "http://127.0.0.1:9/auth/authorize")
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_APPLE_AUTHORIZE_URL": "http://apple.example/auth/authorize"])
        }
        #expect(throws: ConfigurationError.self, "a Services ID needs the team's key outside development mode") {
            try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_APPLE_WEB_CLIENT_ID": "com.a.web"])
        }
    }

    @Test("Apple's user JSON: name parts kept when they are non-blank strings of sensible length")
    func userJSON() {
        #expect(AppleWebSignIn.name(fromUser: #"{"name":{"firstName":" Ada ","lastName":"Lovelace"},"email":"a@b.c"}"#) == ("Ada", "Lovelace"))
        #expect(AppleWebSignIn.name(fromUser: #"{"name":{"firstName":"","lastName":7}}"#) == (nil, nil))
        #expect(AppleWebSignIn.name(fromUser: "not json") == (nil, nil))
        #expect(AppleWebSignIn.name(fromUser: nil) == (nil, nil))
        #expect(AppleWebSignIn.name(fromUser: #"{"name":{"firstName":"\#(String(repeating: "x", count: 101))"}}"#) == (nil, nil))
    }
}
