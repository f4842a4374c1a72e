import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The provider over HTTP, as a relying party and a browser see it: the authorization endpoint
/// and its pages, the token endpoint, and what each writes. Each test states one rule of
/// docs/oauth.md; the S-numbers are the security requirements it proves.
@Suite("OAuth protocol")
struct OAuthProtocolTests {
    /// A server with a password user and one client, and a browser.
    static func with<T>(
        confidential: Bool = false, firstParty: Bool = false, redirectURI: String = "https://notes.example/cb",
        postLogoutRedirectURIs: [String] = [],
        _ body: (TestServer, TestOAuthClient, String, OAuthBrowser) async throws -> T
    ) async throws -> T {
        try await TestServer.with { server in
            let client = try await server.registerClient(
                redirectURI: redirectURI, confidential: confidential, firstParty: firstParty, postLogoutRedirectURIs: postLogoutRedirectURIs)
            let (userID, _) = try await server.passwordUser()
            let browser = OAuthBrowser(server)
            return try await body(server, client, userID, browser)
        }
    }

    /// Claims of a JWT, unverified (the signature is another suite's matter).
    static func claims(_ token: String) throws -> JSONValue { try Insecure.unverifiedContents(of: token).claims }

    /// The session an access token belongs to.
    static func session(of accessToken: String, on server: TestServer) async throws -> Session? {
        let sid = try #require(try claims(accessToken)["sid"]?.stringValue)
        return try await server.application.services.sessions.session(sid)
    }

    // MARK: S20

    @Test("S20: an unknown client, an unregistered or near-miss redirect URI get a 400 HTML error page, no Location, nothing to the client")
    func unregisteredRedirectURIsGetAnErrorPageS20() async throws {
        try await Self.with { server, client, _, browser in
            var unknown = AuthorizationAttempt(client)
            unknown.parameters["client_id"] = "cl_unknownunknownunknown"
            var missing = AuthorizationAttempt(client)
            missing.parameters["redirect_uri"] = nil
            var attempts = [unknown, missing]
            for nearMiss in [
                "https://notes.example/cb/", "https://notes.example/CB", "https://notes.example/cb?x=1", "https://notes.example:443/cb",
                "http://notes.example/cb", "https://notes.example/cb#f", "https://notes.example/%63b", "https://evil.example/cb",
                "https://notes.example.evil.example/cb",
            ] {
                var attempt = AuthorizationAttempt(client)
                attempt.parameters["redirect_uri"] = nearMiss
                attempts.append(attempt)
            }
            for attempt in attempts {
                let response = try await browser.send(attempt.path)
                #expect(response.status == 400, "\(attempt.parameters["redirect_uri"] ?? "none")")
                #expect(response.headers["Location"] == nil)
                #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
                #expect(response.text.contains("This sign-in link is not valid"))
                #expect(response.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
            }
            let codes = try await server.database.read { try $0.query("SELECT * FROM oauth_codes", []) }
            #expect(codes.isEmpty)
        }
    }

    @Test("S20: a loopback redirect URI registered without a port is accepted at any port, and the code goes there")
    func loopbackAnyPortS20() async throws {
        try await Self.with(redirectURI: "http://127.0.0.1/cb") { server, client, _, browser in
            for port in [49_152, 8080, 65_000] {
                var attempt = AuthorizationAttempt(client)
                attempt.parameters["redirect_uri"] = "http://127.0.0.1:\(port)/cb"
                let callback = try await browser.authorize(attempt)
                #expect(callback.location.hasPrefix("http://127.0.0.1:\(port)/cb?"))
                #expect(callback.code != nil)
                let exchanged = try await server.tokenRequest(
                    ["grant_type": "authorization_code", "code": callback.code ?? "", "code_verifier": attempt.verifier, "redirect_uri": "http://127.0.0.1:\(port)/cb"],
                    as: client)
                #expect(exchanged.status == 200, "\(exchanged.text)")
            }
            var otherPath = AuthorizationAttempt(client)
            otherPath.parameters["redirect_uri"] = "http://127.0.0.1:8080/other"
            #expect(try await browser.send(otherPath.path).status == 400)
        }
    }

    // MARK: S21

    @Test("S21: no code_challenge, plain, an unknown method or a malformed challenge go back to the client as invalid_request, with state and iss")
    func challengeRequiredS21() async throws {
        try await Self.with { server, client, _, browser in
            let bad: [[String: String?]] = [
                ["code_challenge": nil], ["code_challenge_method": nil], ["code_challenge_method": "plain"], ["code_challenge_method": "S512"],
                ["code_challenge": "too-short"], ["code_challenge": String(repeating: "*", count: 43)],
            ]
            for extra in bad {
                let attempt = AuthorizationAttempt(client, extra: extra)
                let callback = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)), "\(extra)")
                #expect(callback.error == "invalid_request", "\(extra)")
                #expect(callback.parameters["state"] == attempt.parameters["state"])
                #expect(callback.parameters["iss"] == server.baseURL)
                #expect(callback.code == nil)
            }
        }
    }

    @Test("S21: a missing, malformed or mismatched code_verifier is invalid_grant, and the code is spent by the try")
    func verifierMustMatchS21() async throws {
        try await Self.with { server, client, _, browser in
            for verifier in [nil, "short", String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "!", String(repeating: "b", count: 64)] {
                let attempt = AuthorizationAttempt(client)
                let callback = try await browser.authorize(attempt)
                var fields = ["grant_type": "authorization_code", "code": callback.code ?? "", "redirect_uri": client.redirectURI]
                fields["code_verifier"] = verifier
                let refused = try await server.tokenRequest(fields, as: client)
                #expect(refused.status == 400, "\(verifier ?? "nil")")
                #expect(refused.oauthError == "invalid_grant")
                let retried = try await server.exchange(callback, attempt, as: client)
                #expect(retried.oauthError == "invalid_grant", "a code tried with a wrong verifier is gone")
            }
        }
    }

    // MARK: S22

    @Test("S22: a code works once; the second exchange is invalid_grant and revokes the first one's session and refresh token, audited")
    func codeSingleUseRevokesS22() async throws {
        try await Self.with { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
            let callback = try await browser.authorize(attempt)
            let first = try await server.exchange(callback, attempt, as: client)
            #expect(first.status == 200, "\(first.text)")
            let tokens = try first.oauthTokens
            let refreshToken = try #require(tokens.refreshToken)
            let second = try await server.exchange(callback, attempt, as: client)
            #expect(second.status == 400)
            #expect(second.oauthError == "invalid_grant")
            let session = try #require(try await Self.session(of: tokens.accessToken, on: server))
            #expect(session.revokedAt != nil && session.revokedReason == "reused")
            #expect(try await server.refresh(refreshToken, as: client).oauthError == "invalid_grant")
            #expect(try await server.request(.get, "/oauth/userinfo", headers: ["Authorization": "Bearer \(tokens.accessToken)"]).status == 401)
            let events = try await server.auditEvents(userID)
            #expect(events.contains("oauth.code_replayed") && events.contains("oauth.code_exchanged") && events.contains("oauth.code_issued"))
        }
    }

    @Test("S22: a code expires 60 seconds after it is issued (test clock); it is stored as a hash, never in clear")
    func codeExpiresS22() async throws {
        try await Self.with { server, client, _, browser in
            let attempt = AuthorizationAttempt(client)
            let callback = try await browser.authorize(attempt)
            let code = try #require(callback.code)
            #expect(Base64URL.decode(code)?.count ?? 0 >= 16, "at least 128 bits")
            let row = try #require(try await server.database.read { try $0.queryOne("SELECT * FROM oauth_codes", []) })
            #expect(try row.blob("code_hash") == HashFunction.sha256.hash(Array(code.utf8)))
            #expect(try row.date("expires_at").timeIntervalSince(row.date("created_at")) <= 60)
            server.clock.advance(by: 61)
            let late = try await server.exchange(callback, attempt, as: client)
            #expect(late.oauthError == "invalid_grant")

            let fresh = AuthorizationAttempt(client)
            let inTime = try await browser.authorize(fresh)
            server.clock.advance(by: 59)
            #expect(try await server.exchange(inTime, fresh, as: client).status == 200)
        }
    }

    @Test("S22: a code is bound to its client and redirect URI: another client or another redirect_uri is invalid_grant")
    func codeBoundToClientAndRedirectURIS22() async throws {
        try await Self.with { server, client, _, browser in
            let other = try await server.registerClient(name: "Other", redirectURI: "https://other.example/cb")
            let attempt = AuthorizationAttempt(client)
            let stolen = try await browser.authorize(attempt)
            let byOther = try await server.tokenRequest(
                ["grant_type": "authorization_code", "code": stolen.code ?? "", "code_verifier": attempt.verifier, "redirect_uri": client.redirectURI],
                as: other)
            #expect(byOther.oauthError == "invalid_grant")

            let second = AuthorizationAttempt(client)
            let callback = try await browser.authorize(second)
            for redirectURI: String? in [nil, "https://notes.example/cb/"] {
                var fields = ["grant_type": "authorization_code", "code": callback.code ?? "", "code_verifier": second.verifier]
                fields["redirect_uri"] = redirectURI
                #expect(try await server.tokenRequest(fields, as: client).oauthError == "invalid_grant", "\(redirectURI ?? "nil")")
            }
        }
    }

    @Test("S22: no implicit or password grant: response_type token or id_token goes back as unsupported_response_type; grant_type password is unsupported_grant_type")
    func noImplicitOrPasswordGrantS22() async throws {
        try await Self.with { server, client, _, browser in
            for responseType in ["token", "id_token", "code id_token", "code token"] {
                let callback = try #require(try OAuthBrowser.callback(try await browser.send(AuthorizationAttempt(client, extra: ["response_type": responseType]).path)))
                #expect(callback.error == "unsupported_response_type", "\(responseType)")
                #expect(!callback.location.contains("#"), "nothing in a fragment")
            }
            let password = try await server.tokenRequest(
                ["grant_type": "password", "username": OAuthBrowser.username, "password": OAuthBrowser.password], as: client)
            #expect(password.status == 400 && password.oauthError == "unsupported_grant_type")
            #expect(!password.text.contains(OAuthBrowser.password))
        }
    }

    // MARK: S23

    @Test("S23: the sign-in page, the 303s after its forms and the error page carry frame-ancestors 'none' and X-Frame-Options DENY; no Location carries a token, only the code")
    func framingAndLocationsS23() async throws {
        try await Self.with { server, client, _, browser in
            let attempt = AuthorizationAttempt(client)
            let page = try await browser.send(attempt.path)
            let (action, hidden) = try OAuthBrowser.form(in: page.text)
            let posted = try await browser.send(action, form: hidden.merging(["username": OAuthBrowser.username, "password": OAuthBrowser.password]) { $1 })
            #expect(posted.status == 303)
            var unknown = attempt
            unknown.parameters["client_id"] = "nope"
            let errorPage = try await browser.send(unknown.path)
            var final = try await browser.follow(posted)
            if try OAuthBrowser.callback(final) == nil { final = try await browser.submit(final, ["decision": "allow"]) }
            #expect(final.status == 303)
            for response in [page, posted, errorPage, final] {
                #expect(response.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
                #expect(response.headers["X-Frame-Options"] == "DENY")
            }
            let callback = try #require(try OAuthBrowser.callback(final))
            #expect(Set(callback.parameters.keys) == ["code", "state", "iss"])
            for location in [posted, final].compactMap({ $0.headers["Location"] }) {
                for token in ["access_token", "id_token", "refresh_token", "password"] { #expect(!location.contains(token)) }
            }
            #expect(!posted.headers["Location"]!.contains(OAuthBrowser.password.replacingOccurrences(of: " ", with: "+")))
        }
    }

    // MARK: S29

    @Test("S29: a sign-in form without its CSRF token, with a foreign one, or without the cookie it is bound to signs nobody in")
    func csrfRequiredS29() async throws {
        try await Self.with { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client)
            let page = try await browser.send(attempt.path)
            let (action, hidden) = try OAuthBrowser.form(in: page.text)
            let credentials = ["username": OAuthBrowser.username, "password": OAuthBrowser.password]
            let other = OAuthBrowser(server)
            let otherPage = try await other.send(attempt.path)
            let foreign = try OAuthBrowser.form(in: otherPage.text).fields["csrf_token"] ?? ""
            let cookieless = OAuthBrowser(server)
            var forms: [(OAuthBrowser, [String: String])] = []
            var withoutToken = hidden
            withoutToken["csrf_token"] = nil
            forms.append((browser, withoutToken.merging(credentials) { $1 }))
            forms.append((browser, hidden.merging(credentials) { $1 }.merging(["csrf_token": foreign]) { $1 }))
            forms.append((cookieless, hidden.merging(credentials) { $1 }))
            for (sender, fields) in forms {
                let response = try await sender.send(action, form: fields)
                #expect(response.status == 303)
                #expect(response.headers["Location"]?.hasPrefix("/oauth/authorize?") == true)
                #expect(!response.headers.values("Set-Cookie").contains { $0.hasPrefix("__Host-latchkey_session=") && !$0.contains("Max-Age=0") })
                let again = try await sender.follow(response)
                #expect(again.text.contains("This page had expired"))
            }
            #expect(!(try await server.auditEvents(userID)).contains("browser_session.started"))
            let rows = try await server.database.read { try $0.query("SELECT id FROM browser_sessions", []) }
            #expect(rows.isEmpty)
        }
    }

    @Test("S29: the browser session and CSRF cookies of a real sign-in are __Host-, Path=/, Secure, HttpOnly, SameSite=Lax; the session is stored hashed")
    func cookieAttributesS29() async throws {
        try await Self.with { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client)
            let page = try await browser.send(attempt.path)
            let csrf = try #require(page.headers.values("Set-Cookie").first { $0.hasPrefix("__Host-latchkey_csrf=") })
            let (action, hidden) = try OAuthBrowser.form(in: page.text)
            let posted = try await browser.send(action, form: hidden.merging(["username": OAuthBrowser.username, "password": OAuthBrowser.password]) { $1 })
            let session = try #require(posted.headers.values("Set-Cookie").first { $0.hasPrefix("__Host-latchkey_session=") })
            for cookie in [csrf, session] {
                for attribute in ["Path=/", "Secure", "HttpOnly", "SameSite=Lax"] { #expect(cookie.contains("; \(attribute)"), "\(cookie.prefix(22))") }
                #expect(!cookie.contains("Domain="))
            }
            let token = try #require(browser.cookies["__Host-latchkey_session"])
            let stored = try await server.database.read { try $0.query("SELECT * FROM browser_sessions", []) }
            #expect(stored.count == 1)
            #expect(try stored.first?.string("user_id") == userID)
            #expect(try stored.first?.blob("token_hash") == HashFunction.sha256.hash(Array(token.utf8)))
            #expect(try await server.auditEvents(userID).contains("browser_session.started"))
        }
    }

    @Test("S29: a wrong password comes back to the sign-in page in words, the hostile username kept but escaped, and no browser session")
    func wrongPasswordKeepsEscapedUsernameS29() async throws {
        try await Self.with { server, client, userID, browser in
            let page = try await browser.open(AuthorizationAttempt(client))
            let hostile = HostedPagesTests.hostile
            let again = try await browser.submit(page, ["username": hostile, "password": "not the password at all"])
            #expect(again.status == 200)
            #expect(again.text.contains(#"role="alert">The username or password is not right."#))
            #expect(!again.text.contains(hostile) && !again.text.lowercased().contains("<script"))
            #expect(HostedPagesTests.tags("input", in: again.text).first { $0["name"] == "username" }?["value"] == HostedPagesTests.hostileEscaped)
            #expect(!again.text.contains("not the password at all"), "a password never comes back")
            #expect(browser.cookies["__Host-latchkey_session"] == nil)
            let retried = try await browser.submit(again, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            #expect(retried.text.contains(#"name="decision""#), "the kept form still works")
            #expect(try await server.auditEvents(userID).contains("browser_session.started"))
        }
    }

    @Test("S29: a consent form with a CSRF token of another browser session issues no code and asks again")
    func consentNeedsItsCSRFTokenS29() async throws {
        try await Self.with { server, client, userID, browser in
            let credentials = ["username": OAuthBrowser.username, "password": OAuthBrowser.password]
            let consent = try await browser.submit(try await browser.open(AuthorizationAttempt(client)), credentials)
            let other = OAuthBrowser(server)
            let otherConsent = try await other.submit(try await other.open(AuthorizationAttempt(client)), credentials)
            let foreign = try OAuthBrowser.form(in: otherConsent.text).fields["csrf_token"] ?? ""
            let (action, hidden) = try OAuthBrowser.form(in: consent.text)
            for token: String? in [nil, foreign, ""] {
                var fields = hidden.merging(["decision": "allow"]) { $1 }
                fields["csrf_token"] = token
                let answer = try await browser.send(action, form: fields)
                #expect(answer.status == 303 && answer.headers["Location"]?.hasPrefix("/oauth/authorize?") == true)
            }
            let codes = try await server.database.read { try $0.query("SELECT code_hash FROM oauth_codes", []) }
            #expect(codes.isEmpty)
            let consents = try await server.database.read { try $0.query("SELECT * FROM oauth_consents WHERE user_id = ?", [.text(userID)]) }
            #expect(consents.isEmpty)
        }
    }

    @Test("RFC 6749 §3.1: a parameter sent twice (redirect_uri, state) is an error page, not a redirect to either value")
    func repeatedParametersRefused() async throws {
        try await Self.with { _, client, _, browser in
            let attempt = AuthorizationAttempt(client)
            for repeated in ["&redirect_uri=" + PercentEncoding.encode("https://evil.example/cb"), "&state=second", "&client_id=" + client.id] {
                let response = try await browser.send(attempt.path + repeated)
                #expect(response.status == 400 && response.headers["Location"] == nil, "\(repeated.prefix(14))")
            }
        }
    }

    @Test("OpenID Connect Core §3.1.2.1: the authorization endpoint takes POST with form parameters and answers as for GET")
    func authorizationEndpointTakesPOST() async throws {
        try await Self.with(firstParty: true) { server, client, _, browser in
            let attempt = AuthorizationAttempt(client)
            let page = try await browser.send("/oauth/authorize", form: attempt.parameters)
            #expect(page.status == 200 && page.text.contains(#"autocomplete="current-password""#))
            let callback = try #require(try OAuthBrowser.callback(try await browser.submit(page, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])))
            #expect(callback.parameters["state"] == attempt.parameters["state"])
            #expect(try await server.exchange(callback, attempt, as: client).status == 200)
            var unknown = attempt.parameters
            unknown["client_id"] = "cl_nobody"
            let refused = try await browser.send("/oauth/authorize", form: unknown)
            #expect(refused.status == 400 && refused.headers["Location"] == nil)
        }
    }

    @Test("RFC 6749 §5.2: a client with a wrong Basic secret is 401 invalid_client with WWW-Authenticate: Basic at the token, revocation and introspection endpoints; the secret is not echoed")
    func wrongSecretIsInvalidClient() async throws {
        try await Self.with(confidential: true) { server, client, _, _ in
            let wrong = TestOAuthClient(id: client.id, secret: "not-the-secret", redirectURI: client.redirectURI)
            for path in ["/oauth/token", "/oauth/revoke", "/oauth/introspect"] {
                let response = try await server.tokenRequest(["grant_type": "client_credentials", "token": "x"], as: wrong, at: path)
                #expect(response.status == 401 && response.oauthError == "invalid_client", "\(path)")
                #expect(response.headers.values("WWW-Authenticate") == [#"Basic realm="latchkey""#], "\(path)")
                #expect(!response.text.contains("not-the-secret"))
            }
            // A scheme other than Basic hears the one it must use.
            let bearer = try await EventHTTPClient().send(
                OutboundRequest(
                    url: URL(string: server.requestURL + "/oauth/token")!, method: .post,
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer x"],
                    body: Array("grant_type=client_credentials".utf8)))
            #expect(bearer.status == 401 && bearer.headers["WWW-Authenticate"] == #"Basic realm="latchkey""#)
        }
    }

    @Test("RFC 6749 §5.2: a client that tried no Authorization header (a form secret, a public client's bare id) gets 401 invalid_client without a challenge")
    func invalidClientWithoutHeaderHasNoChallenge() async throws {
        try await Self.with(confidential: true) { server, client, _, _ in
            let posted = try await server.request(
                .post, "/oauth/token", body: Array(PercentEncoding.encodeForm(["grant_type": "client_credentials", "client_id": client.id, "client_secret": "wrong"]).utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(posted.status == 401 && posted.oauthError == "invalid_client")
            #expect(posted.headers["WWW-Authenticate"] == nil)
            let unknown = try await server.tokenRequest(["grant_type": "client_credentials"], as: TestOAuthClient(id: "no-such-client", secret: nil, redirectURI: ""))
            #expect(unknown.status == 401 && unknown.oauthError == "invalid_client")
            #expect(unknown.headers["WWW-Authenticate"] == nil)
        }
    }

    // MARK: prompt, max_age, consent

    @Test("prompt=none without a browser session is login_required; signed in without consent it is consent_required; both with state and iss")
    func promptNone() async throws {
        try await Self.with { server, client, _, browser in
            let attempt = AuthorizationAttempt(client, extra: ["prompt": "none"])
            let loggedOut = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))
            #expect(loggedOut.error == "login_required")
            #expect(loggedOut.parameters["state"] == attempt.parameters["state"] && loggedOut.parameters["iss"] == server.baseURL)
            // Sign in but leave the consent page unanswered.
            let page = try await browser.open(AuthorizationAttempt(client))
            let consent = try await browser.submit(page, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            #expect(consent.text.contains(#"name="decision""#))
            let noConsent = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))
            #expect(noConsent.error == "consent_required")
            #expect(noConsent.parameters["iss"] == server.baseURL)
            _ = try await browser.submit(consent, ["decision": "allow"])
            let silent = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))
            #expect(silent.code != nil && silent.error == nil)
        }
    }

    @Test("prompt=login and an exceeded max_age show the sign-in page again to a signed-in browser; a fresh sign-in satisfies them")
    func promptLoginAndMaxAge() async throws {
        try await Self.with(firstParty: true) { server, client, _, browser in
            _ = try await browser.authorize(AuthorizationAttempt(client))
            let silent = try await browser.open(AuthorizationAttempt(client))
            #expect(try OAuthBrowser.callback(silent)?.code != nil, "single sign-on without prompt")
            let login = try await browser.open(AuthorizationAttempt(client, extra: ["prompt": "login"]))
            #expect(login.status == 200 && login.text.contains(#"autocomplete="current-password""#))
            let afterLogin = try #require(try OAuthBrowser.callback(try await browser.submit(login, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])))
            #expect(afterLogin.code != nil)

            server.clock.advance(by: 120)
            let stale = try await browser.open(AuthorizationAttempt(client, extra: ["max_age": "60"]))
            #expect(stale.text.contains(#"autocomplete="current-password""#))
            let recent = try await browser.open(AuthorizationAttempt(client, extra: ["max_age": "600"]))
            #expect(try OAuthBrowser.callback(recent)?.code != nil)
            let signedInAgain = try #require(try OAuthBrowser.callback(try await browser.submit(stale, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])))
            #expect(signedInAgain.code != nil)
        }
    }

    @Test("consent is asked once, remembered (prompt=consent asks again), withdrawn with DELETE /v1/grants and then asked again; deny is access_denied")
    func consentRememberedAndWithdrawn() async throws {
        try await Self.with { server, client, userID, browser in
            let denied = try await browser.authorize(AuthorizationAttempt(client), decision: "deny")
            #expect(denied.error == "access_denied" && denied.parameters["iss"] == server.baseURL)
            let attempt = AuthorizationAttempt(client)
            let first = try await browser.authorize(attempt)
            #expect(first.code != nil)
            let stored = try await server.database.read { try $0.query("SELECT * FROM oauth_consents WHERE user_id = ?", [.text(userID)]) }
            #expect(stored.count == 1)
            #expect(try await server.auditEvents(userID).contains("consent.granted"))
            #expect(try OAuthBrowser.callback(try await browser.open(AuthorizationAttempt(client)))?.code != nil, "remembered")
            let again = try await browser.open(AuthorizationAttempt(client, extra: ["prompt": "consent"]))
            #expect(again.text.contains(#"name="decision""#))
            let wider = try await browser.open(AuthorizationAttempt(client, scope: "openid offline_access"))
            #expect(wider.text.contains(#"name="decision""#), "a scope not granted yet is asked for")

            let token = try await server.exchange(first, attempt, as: client).oauthTokens
            let v1 = try await server.request(.post, "/v1/auth/password/login", json: ["username": .string(OAuthBrowser.username), "password": .string(OAuthBrowser.password)])
            let withdrawn = try await server.request(.delete, "/v1/grants/\(client.id)", headers: try v1.bearer)
            #expect(withdrawn.status == 204)
            #expect(try await Self.session(of: token.accessToken, on: server)?.revokedAt != nil)
            #expect(try await server.auditEvents(userID).contains("consent.withdrawn"))
            let asked = try await browser.open(AuthorizationAttempt(client))
            #expect(asked.text.contains(#"name="decision""#), "asked again after withdrawal")
        }
    }

    @Test("RFC 9207: iss is on every authorization response, success and error; state is echoed exactly")
    func issAndStateOnEveryResponse() async throws {
        try await Self.with { server, client, _, browser in
            let state = "a state & with = odd chars/é"
            let ok = try await browser.authorize(AuthorizationAttempt(client, extra: ["state": state]))
            let errors = [
                AuthorizationAttempt(client, extra: ["state": state, "response_type": "token"]),
                AuthorizationAttempt(client, extra: ["state": state, "scope": "openid admin"]),
                AuthorizationAttempt(client, extra: ["state": state, "prompt": "bogus"]),
            ]
            var answers = [ok]
            for attempt in errors { answers.append(try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))) }
            #expect(answers.map(\.error) == [nil, "unsupported_response_type", "invalid_scope", "invalid_request"])
            for answer in answers {
                #expect(answer.parameters["iss"] == server.baseURL)
                #expect(answer.parameters["state"] == state)
            }
            var stateless = AuthorizationAttempt(client)
            stateless.parameters["state"] = nil
            #expect(try await browser.authorize(stateless).parameters["state"] == nil)
        }
    }

    @Test("response_mode=form_post: the answer is a page whose form posts code, state and iss to the redirect URI")
    func formPostMode() async throws {
        try await Self.with(firstParty: true) { server, client, _, browser in
            let attempt = AuthorizationAttempt(client, extra: ["response_mode": "form_post"])
            let callback = try await browser.authorize(attempt)
            #expect(callback.status == 200)
            #expect(callback.location == client.redirectURI)
            #expect(Set(callback.parameters.keys) == ["code", "state", "iss"])
            #expect(callback.parameters["state"] == attempt.parameters["state"] && callback.parameters["iss"] == server.baseURL)
            #expect(callback.headers["Location"] == nil)
            #expect(callback.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
            #expect(try await server.exchange(callback, attempt, as: client).status == 200)
        }
    }

    // MARK: The token endpoint

    @Test("client_credentials: a confidential client gets an access token with no refresh or ID token, which /v1 refuses; a public client is refused")
    func clientCredentials() async throws {
        try await TestServer.with { server in
            let web = try await server.registerClient(name: "Web", confidential: true)
            let app = try await server.registerClient(name: "App")
            let issued = try await server.tokenRequest(["grant_type": "client_credentials"], as: web)
            #expect(issued.status == 200, "\(issued.text)")
            let tokens = try issued.oauthTokens
            #expect(tokens.refreshToken == nil && tokens.idToken == nil)
            let claims = try Self.claims(tokens.accessToken)
            #expect(claims["client_id"]?.stringValue == web.id)
            #expect(claims["sub"]?.stringValue == web.id, "a client's own token names the client, never a user")
            #expect(try await AuditLog(database: server.database).entries(event: AuditEvent.oauthClientCredentials.rawValue, limit: 10).count == 1)
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(tokens.accessToken)"]).status == 401)
            let publicClient = try await server.tokenRequest(["grant_type": "client_credentials"], as: app)
            #expect(publicClient.status == 400 || publicClient.status == 401)
            #expect(["unauthorized_client", "invalid_client"].contains(publicClient.oauthError))
            let wrongSecret = TestOAuthClient(id: web.id, secret: "wrong", redirectURI: web.redirectURI)
            #expect(try await server.tokenRequest(["grant_type": "client_credentials"], as: wrongSecret).status == 401)
        }
    }

    @Test("refresh binding: another client's refresh token and a /v1 refresh token are refused at /oauth/token; rotation works for the owner")
    func refreshBoundToClient() async throws {
        try await Self.with { server, client, _, browser in
            let other = try await server.registerClient(name: "Other", redirectURI: "https://other.example/cb")
            let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
            let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
            let refreshToken = try #require(tokens.refreshToken)
            #expect(try await server.refresh(refreshToken, as: other).oauthError == "invalid_grant")
            let v1 = try await server.request(.post, "/v1/auth/password/login", json: ["username": .string(OAuthBrowser.username), "password": .string(OAuthBrowser.password)])
            let v1Refresh = try v1.tokens.refreshToken
            #expect(try await server.refresh(v1Refresh, as: client).oauthError == "invalid_grant")
            let rotated = try await server.refresh(refreshToken, as: client)
            #expect(rotated.status == 200)
            #expect(try rotated.oauthTokens.refreshToken != refreshToken)
        }
    }

    @Test("refresh binding at /v1/token: a third-party grant's refresh token is refused; a first-party public grant's is accepted")
    func v1TokenRefreshBinding() async throws {
        try await TestServer.with { server in
            _ = try await server.passwordUser()
            let third = try await server.registerClient(name: "Third")
            let first = try await server.registerClient(name: "Ours", redirectURI: "com.example.app:/cb", firstParty: true)
            let browser = OAuthBrowser(server)
            var answers: [TestResponse] = []
            for client in [third, first] {
                let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
                let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
                answers.append(
                    try await server.request(
                        .post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(try #require(tokens.refreshToken))]))
            }
            #expect(answers[0].status == 400 && answers[0].oauthError == "invalid_grant")
            #expect(answers[1].status == 200)
            #expect(try answers[1].tokens.refreshToken.isEmpty == false)
        }
    }

    @Test("userinfo: claims follow the scope; a /v1 token is 403 insufficient_scope; a third-party token works there but /v1/me says 401")
    func userinfo() async throws {
        try await Self.with { server, client, userID, browser in
            let openidOnly = AuthorizationAttempt(client, scope: "openid")
            let narrow = try await server.exchange(try await browser.authorize(openidOnly), openidOnly, as: client).oauthTokens
            let narrowInfo = try await server.request(.get, "/oauth/userinfo", headers: ["Authorization": "Bearer \(narrow.accessToken)"])
            #expect(narrowInfo.status == 200)
            #expect(try narrowInfo.json.objectValue?.keys.sorted() == ["sub"])
            #expect(try narrowInfo.json["sub"]?.stringValue == userID)

            let wide = AuthorizationAttempt(client, scope: "openid email profile")
            let tokens = try await server.exchange(try await browser.authorize(wide), wide, as: client).oauthTokens
            let info = try await server.request(.post, "/oauth/userinfo", headers: ["Authorization": "Bearer \(tokens.accessToken)"])
            #expect(info.status == 200)
            #expect(try info.json["email"]?.stringValue == OAuthBrowser.username)
            #expect(try info.json["email_verified"] != nil)
            #expect(try Self.claims(tokens.accessToken)["aud"]?.stringValue == server.baseURL + "/oauth/userinfo")
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(tokens.accessToken)"]).status == 401)

            let v1 = try await server.request(.post, "/v1/auth/password/login", json: ["username": .string(OAuthBrowser.username), "password": .string(OAuthBrowser.password)])
            let refused = try await server.request(.get, "/oauth/userinfo", headers: try v1.bearer)
            #expect(refused.status == 403)
            #expect(refused.headers["WWW-Authenticate"]?.contains("insufficient_scope") == true)
            #expect(try await server.request(.get, "/oauth/userinfo").status == 401)
        }
    }

    @Test("revocation (RFC 7009): revoking the refresh token ends the grant; revoking an access token ends its session; unknown tokens are 200")
    func revokeAccessAndRefresh() async throws {
        try await Self.with(confidential: true) { server, client, userID, browser in
            for revokeRefresh in [true, false] {
                let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
                let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
                let refreshToken = try #require(tokens.refreshToken)
                let revoked = try await server.tokenRequest(["token": revokeRefresh ? refreshToken : tokens.accessToken], as: client, at: "/oauth/revoke")
                #expect(revoked.status == 200)
                #expect(try await Self.session(of: tokens.accessToken, on: server)?.revokedAt != nil)
                #expect(try await server.refresh(refreshToken, as: client).oauthError == "invalid_grant")
                let info = try await server.tokenRequest(["token": tokens.accessToken], as: client, at: "/oauth/introspect")
                #expect(try info.json["active"] == false)
            }
            #expect(try await server.tokenRequest(["token": "not-a-token"], as: client, at: "/oauth/revoke").status == 200)
            #expect(try await server.auditEvents(userID).contains("session.revoked"))
        }
    }

    @Test("introspection (RFC 7662): active with client_id and sub for a confidential client; a public client is refused; inactive after revoke")
    func introspection() async throws {
        try await Self.with(confidential: true) { server, client, userID, browser in
            let app = try await server.registerClient(name: "App", redirectURI: "com.example.app:/cb")
            let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
            let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
            let info = try await server.tokenRequest(["token": tokens.accessToken], as: client, at: "/oauth/introspect")
            #expect(info.status == 200)
            #expect(try info.json["active"] == true)
            #expect(try info.json["client_id"]?.stringValue == client.id)
            #expect(try info.json["sub"]?.stringValue == userID)
            #expect(info.headers["Cache-Control"] == "no-store")
            let byPublic = try await server.tokenRequest(["token": tokens.accessToken], as: app, at: "/oauth/introspect")
            #expect(byPublic.status == 401 && byPublic.oauthError == "invalid_client")
            _ = try await server.tokenRequest(["token": try #require(tokens.refreshToken)], as: client, at: "/oauth/revoke")
            for token in [tokens.accessToken, tokens.refreshToken ?? ""] {
                let after = try await server.tokenRequest(["token": token], as: client, at: "/oauth/introspect")
                #expect(try after.json == ["active": false])
            }
        }
    }

    @Test("RFC 7662 §2.2, §4: introspection answers active: false for a token not issued to the caller nor naming it in aud: another client's, a /v1 one, another client's client_credentials token")
    func introspectionOnlyOfOwnTokens() async throws {
        try await Self.with(confidential: true) { server, client, userID, browser in
            let other = try await server.registerClient(name: "Reports", redirectURI: "https://reports.example/cb", confidential: true)
            let (backend, backendSecret) = try await server.application.clients.register(
                ClientRegistration(name: "Backend", redirectURIs: ["https://backend.example/cb"], confidential: true, scopes: ["reports"]))
            let service = TestOAuthClient(id: backend.id, secret: backendSecret, redirectURI: "https://backend.example/cb")
            let attempt = AuthorizationAttempt(client, scope: "openid offline_access")
            let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
            let v1 = try await server.request(
                .post, "/v1/auth/password/login", json: ["username": .string(OAuthBrowser.username), "password": .string(OAuthBrowser.password)])
            let v1Token = try v1.tokens.accessToken
            let machine = try await server.tokenRequest(["grant_type": "client_credentials"], as: service)
            let machineToken = try machine.oauthTokens.accessToken

            for (token, what) in [(tokens.accessToken, "another client's access token"), (v1Token, "a /v1 token"),
                                  (machineToken, "another client's client_credentials token"), (try #require(tokens.refreshToken), "another client's refresh token")] {
                let info = try await server.tokenRequest(["token": token], as: other, at: "/oauth/introspect")
                #expect(info.status == 200, "\(what)")
                #expect(try info.json == ["active": false], "\(what): \(info.text)")
                #expect(!info.text.contains(userID), "\(what)")
            }
            // Each token is still active for the client it was issued to.
            let own = try await server.tokenRequest(["token": tokens.accessToken], as: client, at: "/oauth/introspect")
            #expect(try own.json["active"] == true && own.json["sub"]?.stringValue == userID)
            let ownMachine = try await server.tokenRequest(["token": machineToken], as: service, at: "/oauth/introspect")
            #expect(try ownMachine.json["active"] == true && ownMachine.json["client_id"]?.stringValue == backend.id)
            let v1ByClient = try await server.tokenRequest(["token": v1Token], as: client, at: "/oauth/introspect")
            #expect(try v1ByClient.json == ["active": false], "a /v1 token was issued to no client")
        }
    }

    @Test("RFC 6749 §5.1: every answer of /oauth/token is no-store, refusals as well as tokens; /v1/token's refusals too")
    func tokenEndpointNeverCached() async throws {
        try await Self.with(confidential: true) { server, client, _, _ in
            let wrongSecret = TestOAuthClient(id: client.id, secret: "wrong", redirectURI: client.redirectURI)
            let answers: [(TestResponse, String)] = [
                (try await server.tokenRequest(["grant_type": "authorization_code", "code": "nope", "code_verifier": "v"], as: wrongSecret), "invalid_client"),
                (try await server.tokenRequest(["grant_type": "authorization_code", "code": "nope", "code_verifier": String(repeating: "v", count: 43), "redirect_uri": client.redirectURI], as: client), "invalid_grant"),
                (try await server.tokenRequest(["grant_type": "password"], as: client), "unsupported_grant_type"),
                (try await server.tokenRequest([:], as: client), "invalid_request"),
                (try await server.tokenRequest(["grant_type": "refresh_token", "refresh_token": "unknown"], as: client), "invalid_grant"),
            ]
            for (answer, error) in answers {
                #expect(answer.oauthError == error, "\(answer.text)")
                #expect(answer.headers["Cache-Control"] == "no-store", "\(error)")
                #expect(answer.headers["Pragma"] == "no-cache", "\(error)")
            }
            let v1 = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": "unknown"])
            #expect(v1.status == 400 && (try? v1.wireError.error) == .invalidGrant)
            #expect(v1.headers["Cache-Control"] == "no-store")
        }
    }

    @Test("RFC 6750 §3.1: userinfo without any credentials is 401 with a bare Bearer challenge, no error code; a bad token keeps error=invalid_token")
    func userinfoChallenge() async throws {
        try await Self.with { server, _, _, _ in
            for method in [HTTPMethod.get, .post] {
                let bare = try await server.request(method, "/oauth/userinfo")
                #expect(bare.status == 401)
                #expect(bare.headers.values("WWW-Authenticate") == [#"Bearer realm="latchkey""#], "\(method)")
            }
            let bad = try await server.request(.get, "/oauth/userinfo", headers: ["Authorization": "Bearer not-a-jwt"])
            #expect(bad.status == 401)
            #expect(bad.headers["WWW-Authenticate"] == #"Bearer error="invalid_token""#)
            #expect(try bad.wireError.error == .invalidToken)
        }
    }

    // MARK: Logout

    @Test("logout: a registered post_logout_redirect_uri gets a 303 with state and the browser session ends; an unregistered one or a foreign id_token_hint gets the error page")
    func logout() async throws {
        try await Self.with(postLogoutRedirectURIs: ["https://notes.example/bye"]) { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client)
            let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
            let idToken = try #require(tokens.idToken)
            func logoutPath(_ fields: [String: String]) -> String { "/oauth/logout?" + PercentEncoding.encodeForm(fields) }

            let unregistered = try await browser.send(logoutPath(["id_token_hint": idToken, "post_logout_redirect_uri": "https://evil.example/bye"]))
            #expect(unregistered.status == 400 && unregistered.headers["Location"] == nil)
            // An ID token of another issuer: signed by another key, naming another iss.
            let foreignHint = try JWSSigner.es256(P256.Signing.PrivateKey(), keyID: "other").sign(
                JWTClaims(["iss": "https://other.example", "aud": .string(client.id), "sub": "x", "exp": .integer(Int(server.clock.now.timeIntervalSince1970) + 600)]))
            let foreign = try await browser.send(logoutPath(["id_token_hint": foreignHint, "post_logout_redirect_uri": "https://notes.example/bye"]))
            #expect(foreign.status == 400 && foreign.headers["Location"] == nil)
            #expect(browser.cookies["__Host-latchkey_session"] != nil, "a refused logout keeps the browser session")

            let ok = try await browser.send(logoutPath(["id_token_hint": idToken, "post_logout_redirect_uri": "https://notes.example/bye", "state": "bye-1"]))
            #expect(ok.status == 303)
            #expect(ok.headers["Location"] == "https://notes.example/bye?state=bye-1")
            #expect(browser.cookies["__Host-latchkey_session"] == nil)
            #expect(try await server.auditEvents(userID).contains("browser_session.ended"))
            let page = try await browser.open(AuthorizationAttempt(client))
            #expect(page.text.contains(#"autocomplete="current-password""#), "signed out: the sign-in page again")
            let plain = try await browser.send("/oauth/logout")
            #expect(plain.status == 200 && plain.text.contains("You are signed out"))
        }
    }

    /// The audit entries of one event for a user.
    static func audit(_ server: TestServer, userID: String, event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(userID: userID, event: event, limit: 1000)
    }

    /// The ended time and reason of every browser session of a user.
    static func browserSessions(_ server: TestServer, userID: String) async throws -> [(id: String, endedReason: String?)] {
        try await server.database.read { connection in
            try connection.query("SELECT id, ended_reason FROM browser_sessions WHERE user_id = ? ORDER BY created_at, id", [.text(userID)])
                .map { (try $0.string("id"), $0.optionalString("ended_reason")) }
        }
    }

    @Test("S29, RP-Initiated Logout 1.0 §6: a logout link without the signed-in user's id_token_hint ends nothing but asks; a forged POST asks again; only the page's own POST ends the session")
    func logoutAsksFirstS29() async throws {
        try await Self.with(postLogoutRedirectURIs: ["https://notes.example/bye"]) { server, client, userID, browser in
            _ = try await browser.authorize(AuthorizationAttempt(client))
            let (graceID, _) = try await server.passwordUser(username: "grace@example.com")
            let grace = OAuthBrowser(server)
            let graceAttempt = AuthorizationAttempt(client)
            let graceTokens = try await server.exchange(
                try await grace.authorize(graceAttempt, username: "grace@example.com"), graceAttempt, as: client).oauthTokens
            let graceHint = try #require(graceTokens.idToken)
            let cookie = try #require(browser.cookies["__Host-latchkey_session"])

            func expectStillSignedIn(_ response: TestResponse, _ comment: Comment) async throws {
                #expect(response.status == 200, comment)
                #expect(response.text.contains("Sign out?") && response.text.contains(#"action="/oauth/logout""#), comment)
                #expect(response.headers["Location"] == nil, comment)
                #expect(response.headers["Content-Security-Policy"]?.contains("default-src 'none'") == true, comment)
                #expect(!response.text.contains("<script"), comment)
                #expect(browser.cookies["__Host-latchkey_session"] == cookie, comment)
                #expect(try await Self.browserSessions(server, userID: userID).map(\.endedReason) == [nil], comment)
                #expect(try await Self.audit(server, userID: userID, event: "browser_session.ended").isEmpty, comment)
            }
            try await expectStillSignedIn(try await browser.send("/oauth/logout"), "a bare GET")
            let foreign = try await browser.send(
                "/oauth/logout?" + PercentEncoding.encodeForm(["id_token_hint": graceHint, "post_logout_redirect_uri": "https://notes.example/bye", "state": "s-1"]))
            try await expectStillSignedIn(foreign, "another user's id_token_hint")
            #expect(!foreign.text.contains(graceHint), "the page carries the client, not the ID token")
            try await expectStillSignedIn(try await browser.send("/oauth/logout", form: [:]), "a POST without a CSRF token")
            try await expectStillSignedIn(try await browser.send("/oauth/logout", form: ["csrf_token": "forged"]), "a POST with a forged one")
            #expect(try await Self.browserSessions(server, userID: graceID).map(\.endedReason) == [nil], "grace's session is not touched")

            // The page's own button: the session ends, and the browser goes where the request said.
            let confirmed = try await browser.submit(foreign)
            #expect(confirmed.status == 303)
            #expect(confirmed.headers["Location"] == "https://notes.example/bye?state=s-1")
            #expect(browser.cookies["__Host-latchkey_session"] == nil)
            #expect(try await Self.browserSessions(server, userID: userID).map(\.endedReason) == ["logout"])
            let ended = try await Self.audit(server, userID: userID, event: "browser_session.ended")
            #expect(ended.count == 1 && ended.first?.details["reason"] == "logout")
            #expect(try await Self.browserSessions(server, userID: graceID).map(\.endedReason) == [nil])
        }
    }

    @Test("S27: the logout's browser_session.ended entry has the browser's ip and the request id, as every hosted-page event does")
    func logoutAuditedWithIPAndRequestIDS27() async throws {
        try await Self.with { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client)
            let tokens = try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens
            let hint = try #require(tokens.idToken)
            let out = try await browser.send("/oauth/logout?" + PercentEncoding.encodeForm(["id_token_hint": hint]))
            #expect(out.status == 200 && out.text.contains("You are signed out"))
            #expect(try await Self.browserSessions(server, userID: userID).map(\.endedReason) == ["logout"])
            let ended = try await Self.audit(server, userID: userID, event: "browser_session.ended")
            #expect(ended.count == 1)
            #expect(ended.first?.details["reason"] == "logout")
            #expect(ended.first?.ip == "127.0.0.1")
            #expect(ended.first?.requestID?.isEmpty == false)
            let started = try #require(try await Self.audit(server, userID: userID, event: "browser_session.started").first)
            #expect(started.ip == ended.first?.ip)
        }
    }

    @Test("S29, ASVS V7.2.4: signing in again in the same browser (prompt=login, another user) ends the browser session it replaces, in the sign-in's transaction, audited as replaced")
    func reSignInEndsReplacedSessionS29() async throws {
        try await Self.with(firstParty: true) { server, client, userID, browser in
            _ = try await browser.authorize(AuthorizationAttempt(client))
            let first = try #require(browser.cookies["__Host-latchkey_session"])
            let (graceID, _) = try await server.passwordUser(username: "grace@example.com")

            // prompt=login, then another user in the same browser.
            let again = try await browser.authorize(AuthorizationAttempt(client, extra: ["prompt": "login"]))
            #expect(again.code != nil)
            let second = try #require(browser.cookies["__Host-latchkey_session"])
            #expect(second != first)
            let asGrace = try await browser.authorize(AuthorizationAttempt(client, extra: ["prompt": "login"]), username: "grace@example.com")
            #expect(asGrace.code != nil)
            let third = try #require(browser.cookies["__Host-latchkey_session"])

            let sessions = server.application.services.browserSessions
            #expect(try await sessions.current(token: first) == nil, "the replaced session is over")
            #expect(try await sessions.current(token: second) == nil)
            #expect(try await sessions.current(token: third)?.userID == graceID)
            let adas = try await Self.browserSessions(server, userID: userID)
            #expect(adas.map(\.endedReason) == ["replaced", "replaced"])
            #expect(try await Self.browserSessions(server, userID: graceID).map(\.endedReason) == [nil])

            let ended = try await Self.audit(server, userID: userID, event: "browser_session.ended")
            #expect(Set(ended.compactMap { $0.details["browser_session_id"] }) == Set(adas.map(\.id)))
            #expect(ended.allSatisfy { $0.details["reason"] == "replaced" && $0.ip == "127.0.0.1" && $0.requestID != nil })
            #expect(try await Self.audit(server, userID: userID, event: "browser_session.started").count == 2)

            // The old cookie gets no code with prompt=none any more: ada is signed out everywhere.
            let stale = OAuthBrowser(server)
            stale.hosted.setCookie("__Host-latchkey_session", first)
            let silent = try await stale.authorize(AuthorizationAttempt(client, extra: ["prompt": "none"]))
            #expect(silent.error == "login_required" && silent.code == nil)
        }
    }

    @Test("OpenID Connect Core §3.1.2.1: id_token_hint at the authorization endpoint: another user's is login_required, a malformed or foreign one invalid_request, the user's own (even expired) gets a code")
    func idTokenHintAtAuthorize() async throws {
        try await Self.with(firstParty: true) { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client)
            let adaHint = try #require(try await server.exchange(try await browser.authorize(attempt), attempt, as: client).oauthTokens.idToken)
            _ = try await server.passwordUser(username: "grace@example.com")
            let grace = OAuthBrowser(server)
            let graceAttempt = AuthorizationAttempt(client)
            let graceHint = try #require(
                try await server.exchange(try await grace.authorize(graceAttempt, username: "grace@example.com"), graceAttempt, as: client)
                    .oauthTokens.idToken)
            let foreignHint = try JWSSigner.es256(P256.Signing.PrivateKey(), keyID: "other").sign(
                JWTClaims(["iss": .string(server.baseURL), "aud": .string(client.id), "sub": .string(userID),
                           "exp": .integer(Int(server.clock.now.timeIntervalSince1970) + 600)]))
            let codes = try await Self.audit(server, userID: userID, event: "oauth.code_issued").count
            let stored = try await server.database.read { try $0.query("SELECT client_id FROM oauth_codes", []) }.count

            for (hint, expected) in [(graceHint, "login_required"), ("not-a-jwt", "invalid_request"), (foreignHint, "invalid_request")] {
                for prompt in ["none", nil] as [String?] {
                    let refused = AuthorizationAttempt(client, extra: ["prompt": prompt, "id_token_hint": hint])
                    let callback = try await browser.authorize(refused)
                    #expect(callback.error == expected && callback.code == nil, "\(expected), prompt \(prompt ?? "-")")
                    #expect(callback.parameters["state"] == refused.parameters["state"])
                    #expect(callback.location.hasPrefix(client.redirectURI + "?"), "the client hears of it at its redirect URI")
                }
            }
            #expect(try await Self.audit(server, userID: userID, event: "oauth.code_issued").count == codes, "no code for ada")
            #expect(try await server.database.read { try $0.query("SELECT client_id FROM oauth_codes", []) }.count == stored)

            // The user's own ID token names them, expired or not.
            server.clock.advance(by: TimeInterval(server.application.services.accessTokens.ttl + 60))
            let own = try await browser.authorize(AuthorizationAttempt(client, extra: ["prompt": "none", "id_token_hint": adaHint]))
            #expect(own.code != nil && own.error == nil)
            #expect(try await Self.audit(server, userID: userID, event: "oauth.code_issued").count == codes + 1)
        }
    }

    // MARK: MFA on the hosted pages

    @Test("MFA on the hosted page: TOTP, then a recovery code; a wrong code keeps the page with an error; the ID token's amr has otp and mfa")
    func hostedSecondFactor() async throws {
        try await Self.with(firstParty: true) { server, client, userID, browser in
            let login = try await server.request(.post, "/v1/auth/password/login", json: ["username": .string(OAuthBrowser.username), "password": .string(OAuthBrowser.password)])
            let bearer = try login.bearer
            let begin = try await server.request(.post, "/v1/totp", headers: bearer).decode(WireTOTPEnrollment.self)
            let secret = TOTPTests.base32Decode(begin.secret)
            let confirm = try await server.request(.post, "/v1/totp/confirm", json: ["code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)))], headers: bearer)
            let recoveryCodes = try confirm.decode(WireRecoveryCodes.self).recoveryCodes
            server.clock.advance(by: 60)

            func toSecondFactor(_ browser: OAuthBrowser) async throws -> TestResponse {
                let page = try await browser.open(AuthorizationAttempt(client))
                return try await browser.submit(page, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            }
            let secondFactor = try await toSecondFactor(browser)
            #expect(secondFactor.text.contains(#"autocomplete="one-time-code""#))
            let wrong = try await browser.submit(secondFactor, ["code": "000000"])
            #expect(wrong.text.contains(#"autocomplete="one-time-code""#) && wrong.text.contains(#"role="alert""#))
            let attempt = AuthorizationAttempt(client)
            // Answer the page for the attempt the test will exchange.
            let fresh = OAuthBrowser(server)
            let page = try await fresh.open(attempt)
            let otpPage = try await fresh.submit(page, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            let done = try #require(try OAuthBrowser.callback(try await fresh.submit(otpPage, ["code": TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))])))
            let idToken = try #require(try await server.exchange(done, attempt, as: client).oauthTokens.idToken)
            let amr = try Self.claims(idToken)["amr"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(amr.contains("otp") && amr.contains("mfa"))

            let third = OAuthBrowser(server)
            let recovery = AuthorizationAttempt(client)
            let recoveryPage = try await third.submit(try await third.open(recovery), ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            let byRecovery = try #require(try OAuthBrowser.callback(try await third.submit(recoveryPage, ["code": recoveryCodes[0]])))
            #expect(byRecovery.code != nil)
            let events = try await server.auditEvents(userID)
            #expect(events.contains("totp.used") && events.contains("totp.failed") && events.contains("recovery_code.used"))
        }
    }
}
