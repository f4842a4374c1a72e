import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeySandbox
@testable import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Walks the sandbox OpenID provider (`/sandbox/oidc`) as a broker and a developer would.
enum SandboxOIDC {
    static let clientID = OIDCSandboxTestMount.clientID
    static let clientSecret = OIDCSandboxTestMount.clientSecret
    static let redirectURI = "http://127.0.0.1/cb"
    static let verifier = "v" + String(repeating: "0123456789", count: 5)
    /// Computed here, not with the sandbox's own helper.
    static let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))

    /// A test server with the sandbox provider mounted and its issuer set.
    static func with<T>(_ body: (TestServer, OIDCSandbox) async throws -> T) async throws -> T {
        let clock = TestClock()
        let mount = OIDCSandboxTestMount(clock: clock)
        return try await TestServer.with(clock: clock, mounts: [mount]) { server in
            mount.sandbox.setIssuer(server.baseURL + "/sandbox/oidc")
            return try await body(server, mount.sandbox)
        }
    }

    static func issuer(_ server: TestServer) -> String { server.baseURL + "/sandbox/oidc" }

    static func browser(_ server: TestServer) -> HostedBrowser { HostedBrowser(base: URL(string: server.baseURL)!) }

    /// The broker's authorization request; a `nil` in `changing` leaves the parameter out.
    static func authorizePath(changing: [String: String?] = [:]) -> String {
        var parameters = [
            "client_id": clientID, "redirect_uri": redirectURI, "response_type": "code", "scope": "openid email profile", "state": "st-1",
            "nonce": "n-1", "code_challenge": challenge, "code_challenge_method": "S256",
        ]
        for (name, value) in changing { parameters[name] = value }
        return "/sandbox/oidc/authorize?" + PercentEncoding.encodeForm(parameters)
    }

    /// The query of a URL as a dictionary.
    static func query(_ url: String) -> [String: String] {
        URLComponents(string: url)?.queryItems?.reduce(into: [:]) { $0[$1.name] = $1.value ?? "" } ?? [:]
    }

    /// GET authorize → the page → its form posted with what the developer typed: the answer.
    static func submitPage(
        _ browser: HostedBrowser, email: String = "ada@example.com", name: String? = "Ada Lovelace", verified: Bool = true,
        action: String = "continue", changing: [String: String] = [:], authorize: String = authorizePath()
    ) async throws -> HostedBrowser.Page {
        let page = try await browser.get(authorize)
        #expect(page.status == 200, "\(page.text)")
        let form = try #require(page.form)
        var fields = form.fields.merging(["email": email, "action": action]) { $1 }
        if let name { fields["name"] = name }
        if verified { fields["email_verified"] = "true" }
        fields.merge(changing) { $1 }
        return try await browser.post(form.action, form: fields)
    }

    /// The whole page walk: the query of the 303 back to `redirect_uri`.
    static func signIn(
        _ browser: HostedBrowser, email: String = "ada@example.com", name: String? = "Ada Lovelace", verified: Bool = true
    ) async throws -> [String: String] {
        let answer = try await submitPage(browser, email: email, name: name, verified: verified)
        #expect(answer.status == 303, "\(answer.text)")
        let location = try #require(answer.location)
        #expect(location.hasPrefix(redirectURI + "?"))
        return query(location)
    }

    enum ClientAuthentication {
        case basic(id: String, secret: String)
        case post(id: String, secret: String)
        case none
    }

    /// `POST token`.
    static func exchange(
        _ server: TestServer, code: String, authentication: ClientAuthentication = .basic(id: clientID, secret: clientSecret),
        verifier: String? = SandboxOIDC.verifier, redirectURI: String? = SandboxOIDC.redirectURI, extra: [String: String] = [:]
    ) async throws -> TestResponse {
        var form = ["grant_type": "authorization_code", "code": code]
        if let verifier { form["code_verifier"] = verifier }
        if let redirectURI { form["redirect_uri"] = redirectURI }
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        switch authentication {
        case .basic(let id, let secret):
            let pair = PercentEncoding.encode(id) + ":" + PercentEncoding.encode(secret)
            headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
        case .post(let id, let secret):
            form["client_id"] = id
            form["client_secret"] = secret
        case .none: break
        }
        form.merge(extra) { $1 }
        return try await server.request(.post, "/sandbox/oidc/token", body: Array(PercentEncoding.encodeForm(form).utf8), headers: headers)
    }

    /// Verifies an ID token against the sandbox's published JWK Set.
    static func verify(_ idToken: String, _ server: TestServer) async throws -> VerifiedJWT {
        let jwks = try await server.request(.get, "/sandbox/oidc/jwks")
        #expect(jwks.status == 200)
        let keys = try JWSKeySet(jwks: try JWKSet(parsing: jwks.body))
        let verifier = JWTVerifier(
            keys: keys,
            policy: JWTValidationPolicy(
                issuer: issuer(server), audiences: [clientID], algorithms: [.es256], leeway: 0,
                requiredClaims: ["iss", "sub", "aud", "exp", "iat", "nonce", "auth_time"]))
        return try verifier.verify(idToken, now: server.clock.now)
    }

    static func userinfo(_ server: TestServer, _ authorization: String?) async throws -> TestResponse {
        try await server.request(.get, "/sandbox/oidc/userinfo", headers: authorization.map { ["Authorization": $0] } ?? [:])
    }
}

@Suite("Sandbox OpenID provider")
struct OIDCSandboxTests {
    @Test("the discovery document names every endpoint under the issuer, ES256, S256, the two client secret methods and RFC 9207's iss")
    func discoveryDocument() async throws {
        try await SandboxOIDC.with { server, _ in
            let issuer = SandboxOIDC.issuer(server)
            let response = try await server.request(.get, "/sandbox/oidc/.well-known/openid-configuration")
            #expect(response.status == 200)
            let document = try response.json
            #expect(document["issuer"]?.stringValue == issuer)
            #expect(document["authorization_endpoint"]?.stringValue == issuer + "/authorize")
            #expect(document["token_endpoint"]?.stringValue == issuer + "/token")
            #expect(document["userinfo_endpoint"]?.stringValue == issuer + "/userinfo")
            #expect(document["jwks_uri"]?.stringValue == issuer + "/jwks")
            #expect(document["response_types_supported"] == ["code"])
            #expect(document["grant_types_supported"] == ["authorization_code"])
            #expect(document["subject_types_supported"] == ["public"])
            #expect(document["id_token_signing_alg_values_supported"] == ["ES256"])
            #expect(document["scopes_supported"] == ["openid", "email", "profile"])
            #expect(document["token_endpoint_auth_methods_supported"] == ["client_secret_basic", "client_secret_post"])
            #expect(document["code_challenge_methods_supported"] == ["S256"])
            #expect(document["authorization_response_iss_parameter_supported"] == true)
            let claims = try #require(document["claims_supported"]?.arrayValue).compactMap(\.stringValue)
            #expect(Set(["sub", "iss", "aud", "nonce", "email", "email_verified", "name"]).isSubset(of: claims))

            // The JWK Set: one P-256 key for ES256 signatures.
            let jwks = try await server.request(.get, "/sandbox/oidc/jwks")
            let set = try JWKSet(parsing: jwks.body)
            #expect(set.keys.count == 1 && set.skipped.isEmpty)
            let key = try #require(try jwks.json["keys"]?.arrayValue?.first)
            #expect(key["kty"] == "EC" && key["crv"] == "P-256" && key["alg"] == "ES256" && key["use"] == "sig")
            #expect(key["kid"] == .string(OIDCSandbox.keyID) && key["d"] == nil)
        }
    }

    @Test("before the issuer is set every endpoint answers 503 temporarily_unavailable")
    func noIssuerYet() throws {
        let sandbox = OIDCSandbox(clientID: "c", clientSecret: "s")
        #expect(sandbox.issuer == nil)
        #expect(throws: OIDCSandbox.EndpointError.self) { try sandbox.discovery() }
        do throws(OIDCSandbox.EndpointError) {
            _ = try sandbox.discovery()
        } catch {
            #expect(error.status == 503 && error.code == "temporarily_unavailable")
        }
        sandbox.setIssuer("https://id.example/sandbox/oidc")
        #expect(try sandbox.discovery()["issuer"] == "https://id.example/sandbox/oidc")
    }

    @Test("the whole code flow: the page → Continue → 303 with code, state and iss → client_secret_basic exchange → an ID token that verifies against the JWKS → userinfo")
    func codeFlowWithBasicAuthentication() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            let page = try await browser.get(SandboxOIDC.authorizePath())
            #expect(page.status == 200)
            #expect(page.text.contains("<title>Sandbox sign-in</title>"))
            #expect(page.text.contains(#"value="dev@example.com""#), "a default address is prefilled")
            #expect(page.text.contains(#"name="email_verified" value="true" checked"#), "verified by default")
            #expect(page.text.contains(">Continue</button>") && page.text.contains(">Cancel</button>"))
            #expect(page.headers["cache-control"] == "no-store")
            #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
            let form = try #require(page.form)
            #expect(form.action == "/sandbox/oidc/authorize")
            #expect(form.fields["client_id"] == SandboxOIDC.clientID && form.fields["redirect_uri"] == SandboxOIDC.redirectURI)
            #expect(form.fields["nonce"] == "n-1" && form.fields["state"] == "st-1" && form.fields["code_challenge"] == SandboxOIDC.challenge)

            let back = try await SandboxOIDC.signIn(browser, email: "Ada@Example.com")
            #expect(back["state"] == "st-1" && back["iss"] == SandboxOIDC.issuer(server))
            let code = try #require(back["code"])
            #expect(Base64URL.decode(code).map { $0.count >= 16 } == true, "at least 128 random bits")

            let exchange = try await SandboxOIDC.exchange(server, code: code)
            #expect(exchange.status == 200, "\(exchange.text)")
            #expect(exchange.headers["Cache-Control"] == "no-store")
            let tokens = try exchange.json
            #expect(tokens["token_type"] == "Bearer" && tokens["expires_in"] == 300 && tokens["scope"] == "openid email profile")
            let accessToken = try #require(tokens["access_token"]?.stringValue)

            let verified = try await SandboxOIDC.verify(try #require(tokens["id_token"]?.stringValue), server)
            #expect(verified.keyID == OIDCSandbox.keyID && verified.header["typ"] == "JWT" && verified.header["alg"] == "ES256")
            let claims = verified.claims
            #expect(claims.subject == OIDCSandbox.subject(forEmail: "ada@example.com"))
            #expect(claims.audience == [SandboxOIDC.clientID] && claims["azp"] == .string(SandboxOIDC.clientID))
            #expect(claims["nonce"] == "n-1" && claims["email"] == "Ada@Example.com" && claims["email_verified"] == true)
            #expect(claims["name"] == "Ada Lovelace")
            let issuedAt = try #require(claims.issuedAt)
            #expect(claims.expiresAt == issuedAt.addingTimeInterval(300))
            #expect(claims["auth_time"]?.numberValue == server.clock.now.timeIntervalSince1970.rounded(.down))
            #expect(claims["at_hash"]?.stringValue == Base64URL.encode(HashFunction.sha256.hash(Array(accessToken.utf8)).prefix(16)))

            let info = try await SandboxOIDC.userinfo(server, "Bearer " + accessToken)
            #expect(info.status == 200, "\(info.text)")
            #expect(try info.json == [
                "sub": .string(OIDCSandbox.subject(forEmail: "ada@example.com")), "email": "Ada@Example.com", "email_verified": true,
                "name": "Ada Lovelace",
            ])
            let unknown = try await SandboxOIDC.userinfo(server, "Bearer not-a-token")
            #expect(unknown.status == 401)
            #expect(try unknown.json["error"] == "invalid_token")
            #expect(unknown.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
            #expect(try await SandboxOIDC.userinfo(server, nil).status == 401)

            // An access token lives 300 s.
            server.clock.advance(by: 301)
            #expect(try await SandboxOIDC.userinfo(server, "Bearer " + accessToken).status == 401)
        }
    }

    @Test("client_secret_post works too; an unchecked box gives email_verified false, no name no name claim, and scope limits the claims")
    func clientSecretPostAndUnverifiedEmail() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            let back = try await SandboxOIDC.signIn(browser, email: "eve@example.com", name: nil, verified: false)
            let exchange = try await SandboxOIDC.exchange(
                server, code: try #require(back["code"]), authentication: .post(id: SandboxOIDC.clientID, secret: SandboxOIDC.clientSecret))
            #expect(exchange.status == 200, "\(exchange.text)")
            let claims = try await SandboxOIDC.verify(try #require(try exchange.json["id_token"]?.stringValue), server).claims
            #expect(claims["nonce"] == "n-1" && claims["email"] == "eve@example.com" && claims["email_verified"] == false)
            #expect(claims["name"] == nil)

            // Without the email scope, no address: the sandbox grants what was asked, as a real provider does.
            let openidOnly = try await SandboxOIDC.submitPage(browser, authorize: SandboxOIDC.authorizePath(changing: ["scope": "openid"]))
            let openidOnlyLocation = try #require(openidOnly.location)
            let code = try #require(SandboxOIDC.query(openidOnlyLocation)["code"])
            let tokens = try await SandboxOIDC.exchange(server, code: code).json
            #expect(tokens["scope"] == "openid")
            let bare = try await SandboxOIDC.verify(try #require(tokens["id_token"]?.stringValue), server).claims
            #expect(bare["email"] == nil && bare["email_verified"] == nil && bare["name"] == nil && bare.subject != nil)
        }
    }

    @Test("authorization requests without PKCE S256 or without a nonce go back to redirect_uri with invalid_request, state and iss; no page is shown")
    func authorizeRefusesWithoutPKCEOrNonce() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            let cases: [(String, [String: String?], String)] = [
                ("no code_challenge", ["code_challenge": nil], "invalid_request"),
                ("no code_challenge_method", ["code_challenge_method": nil], "invalid_request"),
                ("plain PKCE", ["code_challenge_method": "plain"], "invalid_request"),
                ("a challenge that is no SHA-256", ["code_challenge": "short"], "invalid_request"),
                ("no nonce", ["nonce": nil], "invalid_request"),
                ("an empty nonce", ["nonce": ""], "invalid_request"),
                ("no openid scope", ["scope": "email"], "invalid_scope"),
                ("an implicit flow", ["response_type": "id_token"], "unsupported_response_type"),
                ("form_post", ["response_mode": "form_post"], "invalid_request"),
            ]
            for (label, changing, error) in cases {
                let answer = try await browser.get(SandboxOIDC.authorizePath(changing: changing))
                #expect(answer.status == 303, "\(label)")
                let location = try #require(answer.location, "\(label)")
                #expect(location.hasPrefix(SandboxOIDC.redirectURI + "?"), "\(label)")
                let query = SandboxOIDC.query(location)
                #expect(query["error"] == error && query["state"] == "st-1" && query["iss"] == SandboxOIDC.issuer(server), "\(label)")
                #expect(query["code"] == nil, "\(label)")
            }
        }
    }

    @Test("a wrong client_id or an unusable redirect_uri gets a 400 page and never a redirect")
    func untrustedClientOrRedirectURIGetsAPage() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            let cases: [(String, [String: String?])] = [
                ("another client", ["client_id": "someone-else"]),
                ("no client", ["client_id": nil]),
                ("no redirect_uri", ["redirect_uri": nil]),
                ("a javascript: URI", ["redirect_uri": "javascript:alert(1)"]),
                ("a relative URI", ["redirect_uri": "/cb"]),
                ("a fragment", ["redirect_uri": "https://app.example/cb#x"]),
                ("an oversized URI", ["redirect_uri": "https://app.example/" + String(repeating: "a", count: 3000)]),
            ]
            for (label, changing) in cases {
                let answer = try await browser.get(SandboxOIDC.authorizePath(changing: changing))
                #expect(answer.status == 400, "\(label)")
                #expect(answer.location == nil, "\(label)")
                #expect(answer.headers["content-type"] == "text/html; charset=utf-8", "\(label)")
                #expect(answer.text.contains("role=\"alert\""), "\(label)")
            }
        }
    }

    @Test("a wrong, missing or doubled client authentication is refused (401 invalid_client, 400 for two methods) and leaves the code usable")
    func wrongClientSecret() async throws {
        try await SandboxOIDC.with { server, _ in
            let code = try #require(try await SandboxOIDC.signIn(SandboxOIDC.browser(server))["code"])
            let refusals: [(String, SandboxOIDC.ClientAuthentication, [String: String], Int, String)] = [
                ("basic, wrong secret", .basic(id: SandboxOIDC.clientID, secret: "wrong"), [:], 401, "invalid_client"),
                ("post, wrong secret", .post(id: SandboxOIDC.clientID, secret: "wrong"), [:], 401, "invalid_client"),
                ("basic, unknown client", .basic(id: "other", secret: SandboxOIDC.clientSecret), [:], 401, "invalid_client"),
                ("none", .none, [:], 401, "invalid_client"),
                ("post without secret", .none, ["client_id": SandboxOIDC.clientID], 401, "invalid_client"),
                ("both methods", .basic(id: SandboxOIDC.clientID, secret: SandboxOIDC.clientSecret), ["client_secret": SandboxOIDC.clientSecret], 400, "invalid_request"),
            ]
            for (label, authentication, extra, status, error) in refusals {
                let response = try await SandboxOIDC.exchange(server, code: code, authentication: authentication, extra: extra)
                #expect(response.status == status, "\(label): \(response.text)")
                #expect(try response.json["error"]?.stringValue == error, "\(label)")
                #expect(response.headers["Cache-Control"] == "no-store", "\(label)")
                if status == 401 { #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true, "\(label)") }
            }
            let garbage = try await server.request(
                .post, "/sandbox/oidc/token", body: Array("grant_type=authorization_code&code=\(code)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic !!!not-base64"])
            #expect(garbage.status == 401)
            #expect(try await SandboxOIDC.exchange(server, code: code).status == 200, "client authentication comes before the code is looked at")
        }
    }

    @Test("the code's checks: a wrong or missing code_verifier, a wrong redirect_uri, reuse (which revokes the first access token) and expiry are invalid_grant")
    func codeChecks() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            func freshCode() async throws -> String { try #require(try await SandboxOIDC.signIn(browser)["code"]) }
            func expectInvalidGrant(_ response: TestResponse, _ label: String) throws {
                #expect(response.status == 400, "\(label): \(response.text)")
                #expect(try response.json["error"] == "invalid_grant", "\(label)")
            }

            let wrongVerifier = try await freshCode()
            try expectInvalidGrant(
                try await SandboxOIDC.exchange(server, code: wrongVerifier, verifier: "w" + String(repeating: "0123456789", count: 5)),
                "wrong verifier")
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: wrongVerifier), "a failed presentation uses the code up")
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: try await freshCode(), verifier: nil), "no verifier")
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: try await freshCode(), verifier: "short"), "malformed verifier")
            try expectInvalidGrant(
                try await SandboxOIDC.exchange(server, code: try await freshCode(), redirectURI: "http://127.0.0.1/other"), "wrong redirect_uri")
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: try await freshCode(), redirectURI: nil), "no redirect_uri")
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: "never-issued"), "unknown code")

            let reused = try await freshCode()
            let first = try await SandboxOIDC.exchange(server, code: reused)
            #expect(first.status == 200)
            let accessToken = try #require(try first.json["access_token"]?.stringValue)
            #expect(try await SandboxOIDC.userinfo(server, "Bearer " + accessToken).status == 200)
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: reused), "reuse")
            #expect(try await SandboxOIDC.userinfo(server, "Bearer " + accessToken).status == 401, "reuse revokes what the code gave")

            let expiring = try await freshCode()
            server.clock.advance(by: 61)
            try expectInvalidGrant(try await SandboxOIDC.exchange(server, code: expiring), "expired")

            let wrongGrant = try await SandboxOIDC.exchange(server, code: try await freshCode(), extra: ["grant_type": "refresh_token"])
            #expect(wrongGrant.status == 400)
            #expect(try wrongGrant.json["error"] == "unsupported_grant_type")
        }
    }

    @Test("Cancel goes back with error=access_denied, state and iss, and no code")
    func cancel() async throws {
        try await SandboxOIDC.with { server, _ in
            let answer = try await SandboxOIDC.submitPage(SandboxOIDC.browser(server), action: "cancel")
            #expect(answer.status == 303)
            let query = SandboxOIDC.query(try #require(answer.location))
            #expect(query["error"] == "access_denied" && query["state"] == "st-1" && query["iss"] == SandboxOIDC.issuer(server))
            #expect(query["code"] == nil)
        }
    }

    @Test("the same address, in any case, is the same sub in every flow; another address another sub")
    func sameEmailSameSubject() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            func subject(_ email: String) async throws -> String {
                let code = try #require(try await SandboxOIDC.signIn(browser, email: email)["code"])
                let tokens = try await SandboxOIDC.exchange(server, code: code).json
                let idToken = try #require(tokens["id_token"]?.stringValue)
                return try #require(try await SandboxOIDC.verify(idToken, server).claims.subject)
            }
            let first = try await subject("grace@example.com")
            #expect(try await subject("grace@example.com") == first)
            #expect(try await subject("Grace@EXAMPLE.com") == first)
            #expect(try await subject("ada@example.com") != first)
            let digest = HashFunction.sha256.hash(Array("grace@example.com".utf8)).map { String(format: "%02x", $0) }.joined()
            #expect(first == "sbx-" + digest.prefix(20))
        }
    }

    @Test("hostile input: tampered hidden fields, bad addresses and names, oversized and escaping-hungry parameters are clear 4xx, never a crash")
    func hostileInput() async throws {
        try await SandboxOIDC.with { server, _ in
            let browser = SandboxOIDC.browser(server)
            // The POST checks the hidden fields again.
            let tamperedClient = try await SandboxOIDC.submitPage(browser, changing: ["client_id": "someone-else"])
            #expect(tamperedClient.status == 400 && tamperedClient.location == nil)
            let tamperedRedirect = try await SandboxOIDC.submitPage(browser, changing: ["redirect_uri": "javascript:alert(1)"])
            #expect(tamperedRedirect.status == 400 && tamperedRedirect.location == nil)
            let droppedNonce = try await SandboxOIDC.submitPage(browser, changing: ["nonce": ""])
            #expect(droppedNonce.status == 303)
            let droppedNonceQuery = SandboxOIDC.query(try #require(droppedNonce.location))
            #expect(droppedNonceQuery["error"] == "invalid_request")

            // The page comes back saying what to fix.
            for email in ["", "no-at-sign", "a@b@c", "@example.com", "ada@", "a b@example.com", String(repeating: "a", count: 310) + "@example.com"] {
                let answer = try await SandboxOIDC.submitPage(browser, email: email)
                #expect(answer.status == 400 && answer.location == nil, "\(email.prefix(20))")
                #expect(answer.text.contains("role=\"alert\"") && answer.form != nil, "\(email.prefix(20))")
            }
            let longName = try await SandboxOIDC.submitPage(browser, name: String(repeating: "n", count: 101))
            #expect(longName.status == 400 && longName.location == nil)
            let oddCheckbox = try await SandboxOIDC.submitPage(browser, changing: ["email_verified": "yes"])
            #expect(oddCheckbox.status == 400)
            let noAction = try await SandboxOIDC.submitPage(browser, action: "steal")
            #expect(noAction.status == 400 && noAction.location == nil)

            // Oversized parameters: refused at the client, without the oversized state.
            let bigState = try await browser.get(SandboxOIDC.authorizePath(changing: ["state": String(repeating: "s", count: 3000)]))
            #expect(bigState.status == 303)
            let bigStateQuery = SandboxOIDC.query(try #require(bigState.location))
            #expect(bigStateQuery["error"] == "invalid_request" && bigStateQuery["state"] == nil)

            // Markup in parameters is escaped on the page and comes back intact.
            let markup = #""><script>alert(1)</script>&'"#
            let page = try await browser.get(SandboxOIDC.authorizePath(changing: ["state": markup, "nonce": markup]))
            #expect(page.status == 200 && !page.text.contains("<script>"))
            #expect(page.form?.fields["state"] == markup)
            let back = try await SandboxOIDC.submitPage(browser, authorize: SandboxOIDC.authorizePath(changing: ["state": markup]))
            let backQuery = SandboxOIDC.query(try #require(back.location))
            #expect(backQuery["state"] == markup)

            // The token and userinfo endpoints.
            let oversizedCode = try await SandboxOIDC.exchange(server, code: String(repeating: "c", count: 5000))
            #expect(oversizedCode.status == 400)
            #expect(try oversizedCode.json["error"] == "invalid_request")
            let json = try await server.request(.post, "/sandbox/oidc/token", json: ["grant_type": "authorization_code"])
            #expect(json.status == 415)
            #expect(try await SandboxOIDC.userinfo(server, "Bearer " + String(repeating: "t", count: 5000)).status == 401)
            #expect(try await SandboxOIDC.userinfo(server, "Basic abc").status == 401)
        }
    }
}
