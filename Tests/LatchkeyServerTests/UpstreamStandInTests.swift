import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// The upstream providers the federation tests sign in with work as their harnesses say, driven
/// from Swift with a plain HTTP client: oidc-provider-mock (a real OpenID provider from PyPI) and
/// the programmable, hostile stand-in (`Fixtures/upstream_stand_in.py`). Both need
/// `LATCHKEY_PYTHON`; without it, or without the package, these tests fail.
@Suite("Upstream stand-ins")
struct UpstreamStandInTests {
    static let redirectURI = "http://127.0.0.1:9/oauth/providers/test/callback"

    /// A PKCE pair: a verifier and its S256 challenge.
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = "verifier-" + UUID().uuidString + "-" + UUID().uuidString
        return (verifier, Base64.encode(HashFunction.sha256.hash(Array(verifier.utf8)), alphabet: .urlSafe, padded: false))
    }

    static func basic(_ id: String, _ secret: String) -> [String: String] {
        ["Authorization": "Basic " + Data("\(LoopbackHTTP.formEscape(id)):\(LoopbackHTTP.formEscape(secret))".utf8).base64EncodedString()]
    }

    static func authorizeURL(_ endpoint: String, _ parameters: [String: String]) -> String {
        endpoint + "?" + LoopbackHTTP.formEncoded(parameters)
    }

    /// Verifies `token` against the JWKS at `jwksURI`, as a relying party would. A key without
    /// `alg` is taken as RS256, the ID token's default algorithm (OpenID Connect Registration
    /// §2): oidc-provider-mock publishes its key without `alg` and signs without `kid`.
    static func verify(_ token: String, jwksURI: String, issuer: String, audience: String) async throws -> JWTClaims {
        let jwks = try await LoopbackHTTP.get(jwksURI)
        #expect(jwks.status == 200)
        let keys = try JWSKeySet(jwks: try JWKSet(parsing: Array(jwks.body)), defaultAlgorithm: .rs256)
        let policy = JWTValidationPolicy(
            issuer: issuer, audiences: [audience], algorithms: [.rs256, .es256], requiredClaims: ["iss", "sub", "aud", "exp", "iat"])
        return try JWTVerifier(keys: keys, policy: policy).verify(token).claims
    }

    // MARK: - oidc-provider-mock

    @Test("oidc-provider-mock: discovery answers with its issuer; user X signs in through its form with nonce, email_verified true then false, and the ID token verifies")
    func providerMock() async throws {
        let mock = try await OIDCProviderMock.start()
        defer { mock.stop() }
        let discovery = try #require(try await LoopbackHTTP.get(mock.discoveryURL).object)
        #expect(discovery["issuer"] as? String == mock.issuer)
        #expect(discovery["authorization_endpoint"] as? String == mock.authorizationEndpoint)
        #expect(discovery["token_endpoint"] as? String == mock.tokenEndpoint)
        #expect(discovery["jwks_uri"] as? String == mock.jwksURI)

        for verified in [true, false] {
            let sub = "user-\(UUID().uuidString.prefix(8))"
            try await mock.setUser(sub: sub, email: "\(sub)@example.com", emailVerified: verified, name: "User X")
            let (verifier, challenge) = Self.pkce()
            let nonce = UUID().uuidString
            let authorize = Self.authorizeURL(mock.authorizationEndpoint, [
                "response_type": "code", "client_id": "latchkey-app", "redirect_uri": Self.redirectURI, "scope": "openid email profile",
                "state": "state-1", "nonce": nonce, "code_challenge": challenge, "code_challenge_method": "S256",
            ])
            let page = try await LoopbackHTTP.get(authorize)
            #expect(page.status == 200)
            #expect(page.text.contains(#"name="sub""#), "the authorize page has the sub field")
            let callback = try await mock.signIn(authorizeURL: authorize, sub: sub)
            let query = LoopbackHTTP.queryItems(callback)
            #expect(callback.hasPrefix(Self.redirectURI))
            #expect(query["state"] == "state-1")
            let code = try #require(query["code"])

            let token = try await LoopbackHTTP.post(
                mock.tokenEndpoint,
                form: ["grant_type": "authorization_code", "code": code, "redirect_uri": Self.redirectURI, "code_verifier": verifier],
                headers: Self.basic("latchkey-app", "any-secret"))
            #expect(token.status == 200, "\(token.text)")
            let idToken = try #require(token.object?["id_token"] as? String)
            let claims = try await Self.verify(idToken, jwksURI: mock.jwksURI, issuer: mock.issuer, audience: "latchkey-app")
            #expect(claims.subject == sub)
            #expect(claims["nonce"]?.stringValue == nonce)
            #expect(claims["email"]?.stringValue == "\(sub)@example.com")
            #expect(claims["email_verified"]?.boolValue == verified)
            #expect(claims["name"]?.stringValue == "User X")
        }
    }

    @Test("oidc-provider-mock: an authorize request without nonce is refused by redirect; Deny answers access_denied")
    func providerMockRefusals() async throws {
        let mock = try await OIDCProviderMock.start()
        defer { mock.stop() }
        let parameters = ["response_type": "code", "client_id": "latchkey-app", "redirect_uri": Self.redirectURI, "scope": "openid email", "state": "s"]
        let noNonce = try await LoopbackHTTP.get(Self.authorizeURL(mock.authorizationEndpoint, parameters))
        #expect(noNonce.status == 302)
        #expect(LoopbackHTTP.queryItems(noNonce.location ?? "")["error"] == "invalid_request")
        var withNonce = parameters
        withNonce["nonce"] = "n"
        let denied = try await mock.deny(authorizeURL: Self.authorizeURL(mock.authorizationEndpoint, withNonce))
        #expect(LoopbackHTTP.queryItems(denied)["error"] == "access_denied")
    }

    // MARK: - The hostile stand-in

    /// Authorize at the stand-in's OpenID shape; returns the redirect's parameters.
    static func authorize(
        _ standIn: UpstreamStandIn, challenge: String, nonce: String? = "nonce-1", endpoint: String? = nil, clientID: String = "app-1"
    ) async throws -> [String: String] {
        var parameters = [
            "response_type": "code", "client_id": clientID, "redirect_uri": Self.redirectURI, "scope": "openid email",
            "state": "state-1", "code_challenge": challenge, "code_challenge_method": "S256",
        ]
        if let nonce { parameters["nonce"] = nonce }
        let answer = try await LoopbackHTTP.get(Self.authorizeURL(endpoint ?? standIn.authorizationEndpoint, parameters))
        #expect(answer.status == 302, "\(answer.text)")
        let location = try #require(answer.location)
        #expect(location.hasPrefix(Self.redirectURI + "?"))
        return LoopbackHTTP.queryItems(location)
    }

    static func token(
        _ standIn: UpstreamStandIn, code: String, verifier: String, secret: String = "secret-1", url: String? = nil, headers: [String: String] = [:]
    ) async throws -> LoopbackHTTP.Response {
        try await LoopbackHTTP.post(
            url ?? standIn.tokenEndpoint,
            form: ["grant_type": "authorization_code", "code": code, "redirect_uri": Self.redirectURI, "code_verifier": verifier],
            headers: Self.basic("app-1", secret).merging(headers) { $1 })
    }

    @Test("stand-in: discovery, a normal code flow by hand (RS256 and ES256) whose ID token verifies against /jwks, and userinfo")
    func standInCodeFlow() async throws {
        let standIn = try await UpstreamStandIn.start()
        defer { standIn.stop() }
        let discovery = try #require(try await LoopbackHTTP.get(standIn.discoveryURL).object)
        #expect(discovery["issuer"] as? String == standIn.issuer)
        #expect(discovery["authorization_endpoint"] as? String == standIn.authorizationEndpoint)
        #expect(discovery["token_endpoint"] as? String == standIn.tokenEndpoint)
        #expect(discovery["jwks_uri"] as? String == standIn.jwksURI)
        #expect(discovery["userinfo_endpoint"] as? String == standIn.userinfoEndpoint)
        #expect(discovery["authorization_response_iss_parameter_supported"] as? Bool == true)
        #expect(discovery["code_challenge_methods_supported"] as? [String] == ["S256"])
        #expect(discovery["id_token_signing_alg_values_supported"] as? [String] == ["RS256", "ES256"])
        #expect(discovery["token_endpoint_auth_methods_supported"] as? [String] == ["client_secret_basic", "client_secret_post"])

        try await standIn.configure(clientID: "app-1", clientSecret: "secret-1", sub: "sub-42", email: "x@example.com", emailVerified: false)
        for algorithm in [UpstreamStandIn.Algorithm.rs256, .es256] {
            try await standIn.configure(algorithm: algorithm)
            let (verifier, challenge) = Self.pkce()
            let redirect = try await Self.authorize(standIn, challenge: challenge)
            #expect(redirect["state"] == "state-1")
            #expect(redirect["iss"] == standIn.issuer)
            let code = try #require(redirect["code"])
            let token = try await Self.token(standIn, code: code, verifier: verifier)
            #expect(token.status == 200, "\(token.text)")
            let idToken = try #require(token.object?["id_token"] as? String)
            let claims = try await Self.verify(idToken, jwksURI: standIn.jwksURI, issuer: standIn.issuer, audience: "app-1")
            #expect(claims.subject == "sub-42")
            #expect(claims["nonce"]?.stringValue == "nonce-1")
            #expect(claims["email"]?.stringValue == "x@example.com")
            #expect(claims["email_verified"]?.boolValue == false)
            #expect(try Insecure.unverifiedContents(of: idToken).header["alg"]?.stringValue == algorithm.rawValue)

            let accessToken = try #require(token.object?["access_token"] as? String)
            let userinfo = try #require(try await LoopbackHTTP.get(standIn.userinfoEndpoint, headers: ["Authorization": "Bearer " + accessToken]).object)
            #expect(userinfo["sub"] as? String == "sub-42")
            #expect(userinfo["email_verified"] as? Bool == false)
            // A code works once.
            #expect(try await Self.token(standIn, code: code, verifier: verifier).status == 400)
        }
    }

    @Test("stand-in: a wrong code_verifier is 400 invalid_grant, a wrong client secret 401 invalid_client, a wrong redirect_uri 400")
    func standInRefusals() async throws {
        let standIn = try await UpstreamStandIn.start()
        defer { standIn.stop() }
        try await standIn.configure(clientID: "app-1", clientSecret: "secret-1")
        let (verifier, challenge) = Self.pkce()

        let wrongVerifier = try await Self.token(standIn, code: try #require(try await Self.authorize(standIn, challenge: challenge)["code"]), verifier: Self.pkce().verifier)
        #expect(wrongVerifier.status == 400)
        #expect(wrongVerifier.object?["error"] as? String == "invalid_grant")

        let wrongSecret = try await Self.token(standIn, code: try #require(try await Self.authorize(standIn, challenge: challenge)["code"]), verifier: verifier, secret: "not-it")
        #expect(wrongSecret.status == 401)
        #expect(wrongSecret.object?["error"] as? String == "invalid_client")

        let code = try #require(try await Self.authorize(standIn, challenge: challenge)["code"])
        let wrongRedirect = try await LoopbackHTTP.post(
            standIn.tokenEndpoint,
            form: ["grant_type": "authorization_code", "code": code, "redirect_uri": Self.redirectURI + "/other", "code_verifier": verifier,
                   "client_id": "app-1", "client_secret": "secret-1"])
        #expect(wrongRedirect.status == 400)
        #expect(wrongRedirect.object?["error"] as? String == "invalid_grant")
    }

    @Test("stand-in: hostile modes change the ID token or the answer as documented")
    func standInModes() async throws {
        let standIn = try await UpstreamStandIn.start()
        defer { standIn.stop() }
        try await standIn.configure(clientID: "app-1", clientSecret: "secret-1")
        func flow(_ mode: UpstreamStandIn.Mode) async throws -> (redirect: [String: String], token: LoopbackHTTP.Response?) {
            try await standIn.configure(mode: mode)
            let (verifier, challenge) = Self.pkce()
            let redirect = try await Self.authorize(standIn, challenge: challenge)
            guard let code = redirect["code"] else { return (redirect, nil) }
            return (redirect, try await Self.token(standIn, code: code, verifier: verifier))
        }
        func refused(_ mode: UpstreamStandIn.Mode) async throws -> Bool {
            let idToken = try #require(try await flow(mode).token?.object?["id_token"] as? String)
            do {
                _ = try await Self.verify(idToken, jwksURI: standIn.jwksURI, issuer: standIn.issuer, audience: "app-1")
                return false
            } catch {
                return true
            }
        }
        for mode in [UpstreamStandIn.Mode.wrongIss, .wrongAud, .algNone, .hs256ClientSecret, .expired, .unknownKid] {
            #expect(try await refused(mode), "\(mode)")
        }
        let wrongNonce = try #require(try await flow(.wrongNonce).token?.object?["id_token"] as? String)
        #expect(try await Self.verify(wrongNonce, jwksURI: standIn.jwksURI, issuer: standIn.issuer, audience: "app-1")["nonce"]?.stringValue != "nonce-1")
        let azp = try #require(try await flow(.azpMismatch).token?.object?["id_token"] as? String)
        #expect(try await Self.verify(azp, jwksURI: standIn.jwksURI, issuer: standIn.issuer, audience: "app-1")["azp"]?.stringValue == "someone-else")
        let issParameter = try await flow(.issParamMismatch)
        #expect(issParameter.redirect["iss"] != standIn.issuer)
        #expect(issParameter.token?.status == 200)
        let denied = try await flow(.errorAccessDenied)
        #expect(denied.redirect["error"] == "access_denied")
        #expect(denied.redirect["state"] == "state-1")
        #expect(denied.redirect["iss"] == standIn.issuer)
        #expect(try await flow(.token500).token?.status == 500)
    }

    @Test("stand-in: the GitHub shape: authorize without iss, the token as JSON, /api/user and /api/user/emails")
    func standInGitHub() async throws {
        let standIn = try await UpstreamStandIn.start()
        defer { standIn.stop() }
        try await standIn.configure(
            clientID: "app-1", clientSecret: "secret-1", githubID: 777, login: "hubber",
            githubEmails: [.init(email: "hub@example.com", primary: true, verified: true), .init(email: "old@example.com", primary: false, verified: false, visibility: nil)])
        let (verifier, challenge) = Self.pkce()
        let redirect = try await Self.authorize(standIn, challenge: challenge, nonce: nil, endpoint: standIn.githubAuthorizeURL)
        #expect(redirect["iss"] == nil)
        let code = try #require(redirect["code"])
        let wrong = try await Self.token(standIn, code: code, verifier: "not-the-verifier-" + verifier, url: standIn.githubTokenURL, headers: ["Accept": "application/json"])
        #expect(wrong.status == 200)
        #expect(wrong.object?["error"] as? String == "bad_verification_code")

        let code2 = try #require(try await Self.authorize(standIn, challenge: challenge, nonce: nil, endpoint: standIn.githubAuthorizeURL)["code"])
        let token = try await LoopbackHTTP.post(
            standIn.githubTokenURL, form: ["client_id": "app-1", "client_secret": "secret-1", "code": code2, "redirect_uri": Self.redirectURI, "code_verifier": verifier],
            headers: ["Accept": "application/json"])
        let accessToken = try #require(token.object?["access_token"] as? String, "\(token.text)")
        let user = try #require(try await LoopbackHTTP.get(standIn.githubAPIURL + "/user", headers: ["Authorization": "Bearer " + accessToken]).object)
        #expect(user["id"] as? Int == 777)
        #expect(user["login"] as? String == "hubber")
        #expect(user["email"] is NSNull)
        let emails = try await LoopbackHTTP.get(standIn.githubAPIURL + "/user/emails", headers: ["Authorization": "Bearer " + accessToken])
        let list = try #require(try JSONSerialization.jsonObject(with: emails.body) as? [[String: Any]])
        #expect(list.map { $0["email"] as? String } == ["hub@example.com", "old@example.com"])
        #expect(list.map { $0["verified"] as? Bool } == [true, false])
        #expect(try await LoopbackHTTP.get(standIn.githubAPIURL + "/user").status == 401)
    }

    @Test("stand-in: /requests shows nonce and PKCE S256 per request, and never the client secret or the code verifier")
    func standInRequestLog() async throws {
        let standIn = try await UpstreamStandIn.start()
        defer { standIn.stop() }
        let secret = "very-secret-" + UUID().uuidString
        try await standIn.configure(clientID: "app-1", clientSecret: secret)
        let (verifier, challenge) = Self.pkce()
        let code = try #require(try await Self.authorize(standIn, challenge: challenge)["code"])
        #expect(try await Self.token(standIn, code: code, verifier: verifier, secret: secret).status == 200)
        let code2 = try #require(try await Self.authorize(standIn, challenge: challenge)["code"])
        _ = try await LoopbackHTTP.post(
            standIn.tokenEndpoint,
            form: ["grant_type": "authorization_code", "code": code2, "redirect_uri": Self.redirectURI, "code_verifier": verifier,
                   "client_id": "app-1", "client_secret": secret])

        let log = try await standIn.requestLog()
        #expect(!log.contains(secret))
        #expect(!log.contains(verifier))
        let requests = try await standIn.requests()
        #expect(requests.map(\.endpoint) == ["authorize", "token", "authorize", "token"])
        for request in requests {
            #expect(request.nonce)
            #expect(request.codeChallengeMethod == "S256")
        }
        let tokens = requests.filter { $0.endpoint == "token" }
        #expect(tokens.map(\.clientAuthentication) == ["client_secret_basic", "client_secret_post"])
        #expect(tokens.allSatisfy { $0.codeVerifier && $0.parameters["code_verifier"] == "[redacted]" && $0.status == 200 })
        #expect(tokens[1].parameters["client_secret"] == "[redacted]")
    }
}
