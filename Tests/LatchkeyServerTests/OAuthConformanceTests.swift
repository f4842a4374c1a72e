import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyWire
import Testing

/// The OpenID Foundation's OP test plans, ported: "OpenID Connect Core: Basic Certification
/// Profile" (oidcc-basic-certification-test-plan, code flow, client_secret_basic) and the Config
/// profile (discovery and jwks_uri). One test per module, named after it; what the module checks
/// is restated in our words in its description.
///
/// Modules that do not apply, and why:
/// - the implicit and hybrid plans and `oidcc-ensure-request-without-nonce-fails` (implicit
///   only): Latchkey answers `response_type=code` alone (OAuth 2.1 drops the implicit grant);
/// - `oidcc-id-token-unsigned`: ID tokens are always signed; `none` is in no `alg` list;
/// - `oidcc-scope-address`, `oidcc-scope-phone`: the provider has no address or phone claims and
///   does not list the scopes in `scopes_supported`, so the suite skips them; asking for one is
///   `invalid_scope` (tested in `scopeAll`);
/// - `oidcc-claims-essential`, `oidcc-claims-locales`: the `claims` request parameter is not
///   supported (`claims_parameter_supported` is absent, i.e. false); the request still succeeds
///   and userinfo answers by scope, which the suite accepts;
/// - `oidcc-unsigned-request-object-...` and `oidcc-ensure-request-object-with-redirect-uri`:
///   request objects are refused as unsupported (`request_not_supported`), which the suite
///   accepts (tested in `ensureRequestObjectWithRedirectURI`);
/// - dynamic registration plans: clients are registered by the operator (`latchkey clients add`).
@Suite("OpenID Connect conformance (OP Basic and Config plans, ported)")
struct OAuthConformanceTests {
    /// A server with a confidential RS256 client (the plan's `client_secret_basic` variant), a
    /// password user and a browser.
    static func with<T>(_ body: (TestServer, TestOAuthClient, String, OAuthBrowser) async throws -> T) async throws -> T {
        try await OAuthProtocolTests.with(confidential: true, body)
    }

    /// Verifies an ID token as the suite does: signature against the `jwks_uri` fetched over
    /// HTTP, `iss`, `aud`, `exp` and `iat`.
    static func verifyIDToken(_ token: String, server: TestServer, clientID: String) async throws -> JWTClaims {
        let jwks = try JWKSet(parsing: try await server.request(.get, "/.well-known/jwks.json").body)
        let keys = try JWSKeySet(jwks: jwks, defaultAlgorithm: nil)
        let policy = JWTValidationPolicy(
            issuer: server.baseURL, audiences: [clientID], algorithms: [.rs256, .es256], leeway: 0,
            requiredClaims: ["iss", "sub", "aud", "exp", "iat"], type: .any)
        return try JWTVerifier(keys: keys, policy: policy).verify(token, now: server.clock.now).claims
    }

    /// The whole code flow for `attempt`: authorize (signing in and consenting as asked), exchange.
    static func codeFlow(
        _ attempt: AuthorizationAttempt, _ server: TestServer, _ client: TestOAuthClient, _ browser: OAuthBrowser
    ) async throws -> WireOAuthTokenResponse {
        let callback = try await browser.authorize(attempt)
        let response = try await server.exchange(callback, attempt, as: client)
        #expect(response.status == 200, "\(response.text)")
        return try response.oauthTokens
    }

    /// `BASE64URL(left half of SHA-256(access token))` (OpenID Connect Core §3.1.3.6).
    static func atHash(_ accessToken: String) -> String {
        Base64URL.encode(HashFunction.sha256.hash(Array(accessToken.utf8)).prefix(16))
    }

    static func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    // MARK: OP Basic

    @Test("oidcc-server: the code flow end to end; the ID token verifies against jwks_uri with iss, aud, exp, iat, sub, nonce and at_hash")
    func oidccServer() async throws {
        try await Self.with { server, client, userID, browser in
            let attempt = AuthorizationAttempt(client, scope: "openid")
            let callback = try await browser.authorize(attempt)
            #expect(callback.parameters["state"] == attempt.parameters["state"])
            let tokens = try await server.exchange(callback, attempt, as: client).oauthTokens
            #expect(tokens.tokenType == "Bearer" && tokens.expiresIn > 0)
            let claims = try await Self.verifyIDToken(try #require(tokens.idToken), server: server, clientID: client.id)
            #expect(claims.subject == userID)
            #expect(claims["nonce"]?.stringValue == attempt.parameters["nonce"])
            #expect(claims["at_hash"]?.stringValue == Self.atHash(tokens.accessToken))
            #expect(claims["c_hash"] == nil, "no c_hash in the code flow")
            #expect(claims["auth_time"] != nil)
        }
    }

    @Test("oidcc-response-type-missing: without response_type the client hears invalid_request (with state and iss), and no code")
    func oidccResponseTypeMissing() async throws {
        try await Self.with { server, client, _, browser in
            let attempt = AuthorizationAttempt(client, extra: ["response_type": nil])
            let callback = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))
            #expect(callback.error == "invalid_request" && callback.code == nil)
            #expect(callback.parameters["state"] == attempt.parameters["state"] && callback.parameters["iss"] == server.baseURL)
        }
    }

    @Test("oidcc-userinfo-get: GET userinfo with the Bearer header answers the sub of the ID token")
    func oidccUserinfoGet() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid"), server, client, browser)
            let info = try await server.request(.get, "/oauth/userinfo", headers: Self.bearer(tokens.accessToken))
            #expect(info.status == 200 && info.headers["Content-Type"]?.hasPrefix("application/json") == true)
            let idToken = try Insecure.unverifiedContents(of: try #require(tokens.idToken)).claims
            #expect(try info.json["sub"] == idToken["sub"])
        }
    }

    @Test("oidcc-userinfo-post-header: POST userinfo with the Bearer header answers the same sub")
    func oidccUserinfoPostHeader() async throws {
        try await Self.with { server, client, userID, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid"), server, client, browser)
            let info = try await server.request(.post, "/oauth/userinfo", headers: Self.bearer(tokens.accessToken))
            #expect(info.status == 200)
            #expect(try info.json["sub"]?.stringValue == userID)
        }
    }

    @Test("oidcc-userinfo-post-body: the token in a form body is optional (RFC 6750 §2.2); Latchkey takes the header only and answers 401")
    func oidccUserinfoPostBody() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid"), server, client, browser)
            let info = try await server.request(
                .post, "/oauth/userinfo", body: Array("access_token=\(tokens.accessToken)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(info.status == 401)
            #expect(info.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        }
    }

    @Test("oidcc-ensure-request-without-nonce-succeeds-for-code-flow: no nonce is fine in the code flow, and the ID token has none")
    func oidccEnsureRequestWithoutNonceSucceedsForCodeFlow() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, extra: ["nonce": nil]), server, client, browser)
            let claims = try await Self.verifyIDToken(try #require(tokens.idToken), server: server, clientID: client.id)
            #expect(claims["nonce"] == nil)
        }
    }

    @Test("oidcc-scope-profile: scope profile puts the name claims in userinfo")
    func oidccScopeProfile() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid profile"), server, client, browser)
            let info = try await server.request(.get, "/oauth/userinfo", headers: Self.bearer(tokens.accessToken)).json
            #expect(info["email"] == nil, "profile alone gives no e-mail")
            #expect(info["sub"] != nil)
            let members = Set((info.objectValue ?? [:]).keys)
            #expect(members.isSubset(of: ["sub", "name", "given_name", "family_name"]))
        }
    }

    @Test("oidcc-scope-email: scope email puts email and email_verified in userinfo")
    func oidccScopeEmail() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid email"), server, client, browser)
            let info = try await server.request(.get, "/oauth/userinfo", headers: Self.bearer(tokens.accessToken)).json
            #expect(info["email"]?.stringValue == OAuthBrowser.username)
            #expect(info["email_verified"]?.boolValue != nil)
        }
    }

    @Test("oidcc-scope-all: every supported scope at once (openid profile email) succeeds; address and phone, which are not supported, are invalid_scope")
    func oidccScopeAll() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid profile email"), server, client, browser)
            #expect(Set(tokens.scope.split(separator: " ")) == ["openid", "profile", "email"])
            for scope in ["openid address", "openid phone"] {
                let refused = try #require(try OAuthBrowser.callback(try await browser.send(AuthorizationAttempt(client, scope: scope).path)))
                #expect(refused.error == "invalid_scope")
            }
        }
    }

    @Test("oidcc-ensure-other-scope-order-succeeds: scope order does not matter (email openid)")
    func oidccEnsureOtherScopeOrderSucceeds() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "email openid"), server, client, browser)
            #expect(tokens.idToken != nil)
        }
    }

    @Test("oidcc-display-page, oidcc-display-popup, oidcc-ui-locales, oidcc-ensure-request-with-acr-values-succeeds, oidcc-ensure-request-with-unknown-parameter-succeeds: optional or unknown parameters do not break the flow")
    func oidccDisplayLocalesAcrAndUnknownParameters() async throws {
        try await Self.with { server, client, _, browser in
            for extra: [String: String?] in [["display": "page"], ["display": "popup"], ["ui_locales": "se"], ["acr_values": "1 2"], ["extra": "foobar"], ["claims_locales": "se"]] {
                let callback = try await browser.authorize(AuthorizationAttempt(client, extra: extra))
                #expect(callback.code != nil, "\(extra)")
            }
        }
    }

    @Test("oidcc-prompt-login: a signed-in user asked with prompt=login signs in again, and auth_time moves")
    func oidccPromptLogin() async throws {
        try await Self.with { server, client, _, browser in
            let first = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            server.clock.advance(by: 5)
            let page = try await browser.open(AuthorizationAttempt(client, extra: ["prompt": "login"]))
            #expect(page.text.contains(#"autocomplete="current-password""#))
            let second = try await Self.codeFlow(AuthorizationAttempt(client, extra: ["prompt": "login"]), server, client, browser)
            let before = try await Self.verifyIDToken(try #require(first.idToken), server: server, clientID: client.id)
            let after = try await Self.verifyIDToken(try #require(second.idToken), server: server, clientID: client.id)
            #expect(after["auth_time"]?.numberValue ?? 0 > before["auth_time"]?.numberValue ?? 0)
        }
    }

    @Test("oidcc-prompt-none-not-logged-in: prompt=none without a session answers login_required to the redirect URI")
    func oidccPromptNoneNotLoggedIn() async throws {
        try await Self.with { server, client, _, browser in
            let callback = try #require(try OAuthBrowser.callback(try await browser.send(AuthorizationAttempt(client, extra: ["prompt": "none"]).path)))
            #expect(callback.error == "login_required" && callback.parameters["iss"] == server.baseURL)
        }
    }

    @Test("oidcc-prompt-none-logged-in: prompt=none with a session and consent answers a code silently, and the same sub")
    func oidccPromptNoneLoggedIn() async throws {
        try await Self.with { server, client, userID, browser in
            _ = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            let attempt = AuthorizationAttempt(client, extra: ["prompt": "none"])
            let callback = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))
            let tokens = try await server.exchange(callback, attempt, as: client).oauthTokens
            #expect(try await Self.verifyIDToken(try #require(tokens.idToken), server: server, clientID: client.id).subject == userID)
        }
    }

    @Test("oidcc-max-age-1: after more than a second, max_age=1 needs a new sign-in, and the ID token carries auth_time")
    func oidccMaxAge1() async throws {
        try await Self.with { server, client, _, browser in
            _ = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            server.clock.advance(by: 2)
            let page = try await browser.open(AuthorizationAttempt(client, extra: ["max_age": "1"]))
            #expect(page.text.contains(#"autocomplete="current-password""#))
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, extra: ["max_age": "1"]), server, client, browser)
            let claims = try await Self.verifyIDToken(try #require(tokens.idToken), server: server, clientID: client.id)
            let authTime = try #require(claims["auth_time"]?.numberValue)
            #expect(server.clock.now.timeIntervalSince1970 - authTime <= 1)
        }
    }

    @Test("oidcc-max-age-10000: a recent sign-in satisfies max_age=10000 without a page, and auth_time is the first sign-in's")
    func oidccMaxAge10000() async throws {
        try await Self.with { server, client, _, browser in
            let first = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            server.clock.advance(by: 30)
            let attempt = AuthorizationAttempt(client, extra: ["max_age": "10000"])
            let callback = try #require(try OAuthBrowser.callback(try await browser.open(attempt)), "no page")
            let tokens = try await server.exchange(callback, attempt, as: client).oauthTokens
            let before = try await Self.verifyIDToken(try #require(first.idToken), server: server, clientID: client.id)
            let after = try await Self.verifyIDToken(try #require(tokens.idToken), server: server, clientID: client.id)
            #expect(after["auth_time"] == before["auth_time"])
        }
    }

    @Test("oidcc-id-token-hint: prompt=none with the id_token_hint of an earlier ID token answers a code for the same sub")
    func oidccIdTokenHint() async throws {
        try await Self.with { server, client, userID, browser in
            let first = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            let attempt = AuthorizationAttempt(client, extra: ["prompt": "none", "id_token_hint": first.idToken])
            let callback = try #require(try OAuthBrowser.callback(try await browser.send(attempt.path)))
            #expect(callback.code != nil)
            let tokens = try await server.exchange(callback, attempt, as: client).oauthTokens
            #expect(try await Self.verifyIDToken(try #require(tokens.idToken), server: server, clientID: client.id).subject == userID)
        }
    }

    @Test("oidcc-login-hint: login_hint fills the sign-in page's username")
    func oidccLoginHint() async throws {
        try await Self.with { _, client, _, browser in
            let page = try await browser.open(AuthorizationAttempt(client, extra: ["login_hint": "grace@example.com"]))
            let username = HostedPagesTests.tags("input", in: page.text).first { $0["name"] == "username" }
            #expect(username?["value"] == "grace@example.com")
        }
    }

    @Test("oidcc-codereuse: a code used twice is invalid_grant the second time")
    func oidccCodereuse() async throws {
        try await Self.with { server, client, _, browser in
            let attempt = AuthorizationAttempt(client)
            let callback = try await browser.authorize(attempt)
            #expect(try await server.exchange(callback, attempt, as: client).status == 200)
            let again = try await server.exchange(callback, attempt, as: client)
            #expect(again.status == 400 && again.oauthError == "invalid_grant")
        }
    }

    @Test("oidcc-codereuse-30seconds: a code used again 30 s later is invalid_grant, and the first access token stops working")
    func oidccCodereuse30seconds() async throws {
        try await Self.with { server, client, _, browser in
            let attempt = AuthorizationAttempt(client)
            let callback = try await browser.authorize(attempt)
            let tokens = try await server.exchange(callback, attempt, as: client).oauthTokens
            #expect(try await server.request(.get, "/oauth/userinfo", headers: Self.bearer(tokens.accessToken)).status == 200)
            server.clock.advance(by: 30)
            #expect(try await server.exchange(callback, attempt, as: client).oauthError == "invalid_grant")
            #expect(try await server.request(.get, "/oauth/userinfo", headers: Self.bearer(tokens.accessToken)).status == 401)
        }
    }

    @Test("oidcc-ensure-registered-redirect-uri: an unregistered redirect_uri is an error page, never a redirect")
    func oidccEnsureRegisteredRedirectURI() async throws {
        try await Self.with { _, client, _, browser in
            let response = try await browser.send(AuthorizationAttempt(client, extra: ["redirect_uri": "https://notes.example/cb/extra"]).path)
            #expect(response.status == 400 && response.headers["Location"] == nil)
        }
    }

    @Test("oidcc-ensure-redirect-uri-in-authorization-request: without redirect_uri the request is refused on an error page")
    func oidccEnsureRedirectURIInAuthorizationRequest() async throws {
        try await Self.with { _, client, _, browser in
            let response = try await browser.send(AuthorizationAttempt(client, extra: ["redirect_uri": nil]).path)
            #expect(response.status == 400 && response.headers["Location"] == nil)
        }
    }

    @Test("oidcc-ensure-request-object-with-redirect-uri, oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: a request object is rejected as request_not_supported; request_uri as request_uri_not_supported")
    func ensureRequestObjectWithRedirectURI() async throws {
        try await Self.with { server, client, _, browser in
            let unsigned = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"client_id":"x"}"#.utf8)) + "."
            let object = try #require(try OAuthBrowser.callback(try await browser.send(AuthorizationAttempt(client, extra: ["request": unsigned]).path)))
            #expect(object.error == "request_not_supported")
            let uri = try #require(try OAuthBrowser.callback(try await browser.send(AuthorizationAttempt(client, extra: ["request_uri": "https://rp.example/r"]).path)))
            #expect(uri.error == "request_uri_not_supported")
            let metadata = try await server.request(.get, "/.well-known/openid-configuration").json
            #expect(metadata["request_parameter_supported"] == nil || metadata["request_parameter_supported"] == false)
        }
    }

    @Test("oidcc-refresh-token: the refresh token rotates; a refreshed ID token keeps iss, sub and aud; another client cannot use it")
    func oidccRefreshToken() async throws {
        try await Self.with { server, client, userID, browser in
            let other = try await server.registerClient(name: "Other", redirectURI: "https://other.example/cb", confidential: true)
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client, scope: "openid offline_access"), server, client, browser)
            let refreshToken = try #require(tokens.refreshToken)
            #expect(try await server.refresh(refreshToken, as: other).oauthError == "invalid_grant")
            let refreshed = try await server.refresh(refreshToken, as: client)
            #expect(refreshed.status == 200)
            let next = try refreshed.oauthTokens
            #expect(next.refreshToken != nil && next.refreshToken != refreshToken)
            if let idToken = next.idToken {
                let claims = try await Self.verifyIDToken(idToken, server: server, clientID: client.id)
                #expect(claims.subject == userID)
            }
            #expect(try await server.request(.get, "/oauth/userinfo", headers: Self.bearer(next.accessToken)).status == 200)
        }
    }

    @Test("oidcc-ensure-request-with-valid-pkce-succeeds: a correct S256 verifier succeeds")
    func oidccEnsureRequestWithValidPKCESucceeds() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            #expect(!tokens.accessToken.isEmpty)
        }
    }

    @Test("oidcc-id-token-rs256, oidcc-id-token-signature: a default client's ID token is RS256 under a key of jwks_uri; an ES256 client's verifies too")
    func oidccIdTokenRS256AndSignature() async throws {
        try await Self.with { server, client, _, browser in
            let tokens = try await Self.codeFlow(AuthorizationAttempt(client), server, client, browser)
            let idToken = try #require(tokens.idToken)
            let header = try Insecure.unverifiedContents(of: idToken).header
            #expect(header["alg"] == "RS256")
            #expect(header["kid"] != nil)
            _ = try await Self.verifyIDToken(idToken, server: server, clientID: client.id)
            var tampered = idToken.split(separator: ".").map(String.init)
            tampered[1] = Base64URL.encode(Array(#"{"iss":"x"}"#.utf8))
            await #expect(throws: JOSEError.self) { try await Self.verifyIDToken(tampered.joined(separator: "."), server: server, clientID: client.id) }

            let es = try await server.registerClient(name: "ES", redirectURI: "https://es.example/cb", confidential: true, idTokenAlgorithm: "ES256")
            let esTokens = try await Self.codeFlow(AuthorizationAttempt(es), server, es, browser)
            let esToken = try #require(esTokens.idToken)
            #expect(try Insecure.unverifiedContents(of: esToken).header["alg"] == "ES256")
            _ = try await Self.verifyIDToken(esToken, server: server, clientID: es.id)
        }
    }

    // MARK: OP Config

    @Test("oidcc-discovery-endpoint-verification: the document's issuer is the server, its endpoints are under it and answer, and the members the Config profile requires are there")
    func oidccDiscoveryEndpointVerification() async throws {
        try await TestServer.with { server in
            let response = try await server.request(.get, "/.well-known/openid-configuration")
            #expect(response.status == 200 && response.headers["Content-Type"]?.hasPrefix("application/json") == true)
            let metadata = try response.json
            #expect(metadata["issuer"]?.stringValue == server.baseURL)
            for member in ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint", "introspection_endpoint", "end_session_endpoint"] {
                #expect(metadata[member]?.stringValue?.hasPrefix(server.baseURL + "/") == true, "\(member)")
            }
            func strings(_ name: String) -> Set<String> { Set(metadata[name]?.arrayValue?.compactMap(\.stringValue) ?? []) }
            #expect(strings("response_types_supported") == ["code"])
            #expect(strings("subject_types_supported").contains("public"))
            #expect(strings("id_token_signing_alg_values_supported").isSuperset(of: ["RS256", "ES256"]))
            #expect(!strings("id_token_signing_alg_values_supported").contains("none"))
            #expect(strings("scopes_supported").contains("openid"))
            #expect(strings("code_challenge_methods_supported") == ["S256"])
            #expect(strings("grant_types_supported").isSuperset(of: ["authorization_code", "refresh_token"]))
            #expect(!strings("grant_types_supported").contains("implicit"))
            #expect(strings("claims_supported").isSuperset(of: ["sub", "iss", "aud", "exp", "iat", "email"]))
            #expect(metadata["authorization_response_iss_parameter_supported"] == true)
            // RFC 8414: the same document at the OAuth well-known path.
            #expect(try await server.request(.get, "/.well-known/oauth-authorization-server").json == metadata)
            // Every endpoint answers something other than 404 at its advertised path.
            for member in ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri"] {
                let path = String(metadata[member]!.stringValue!.dropFirst(server.baseURL.count))
                #expect(try await server.request(.get, path).status != 404, "\(member)")
            }
        }
    }

    @Test("oidcc-discovery-issuer-not-matching-config: the issuer is exactly the URL the document was fetched under, without a trailing slash")
    func oidccDiscoveryIssuerNotMatchingConfig() async throws {
        try await TestServer.with { server in
            let issuer = try await server.request(.get, "/.well-known/openid-configuration").json["issuer"]?.stringValue
            #expect(issuer == server.baseURL && issuer?.hasSuffix("/") == false)
        }
    }

    @Test("jwks_uri keys (OP Config): public keys only, each with kid, kty, use sig and alg; RS256 and ES256 present; no private members")
    func oidccJWKSKeys() async throws {
        try await TestServer.with { server in
            let jwks = try await server.request(.get, "/.well-known/jwks.json").json
            let keys = try #require(jwks["keys"]?.arrayValue)
            var algorithms = Set<String>()
            var keyIDs = Set<String>()
            for key in keys {
                let object = try #require(key.objectValue)
                for member in ["d", "p", "q", "dp", "dq", "qi", "k"] { #expect(object[member] == nil, "no private member \(member)") }
                let kid = try #require(key["kid"]?.stringValue)
                #expect(keyIDs.insert(kid).inserted, "kid is unique")
                #expect(["RSA", "EC"].contains(key["kty"]?.stringValue))
                #expect(key["use"] == nil || key["use"] == "sig")
                if let alg = key["alg"]?.stringValue { algorithms.insert(alg) }
            }
            #expect(algorithms.isSuperset(of: ["RS256", "ES256"]))
            #expect(try JWKSet(json: jwks).skipped.isEmpty, "every key is usable")
        }
    }
}
