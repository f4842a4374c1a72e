import Foundation
@testable import LatchkeyServer
import Testing

/// `AuthorizationRequest.check`, the rules of `GET /oauth/authorize` (docs/reference.md,
/// docs/oauth.md): each parameter either passes, or fails on an error page (while the client or
/// the redirect URI is not proven, S20: never a redirect), or goes back to the client's
/// redirect URI with the error, the request's `state` and its response mode.
@Suite("Authorization request rules")
struct AuthorizationRequestRulesTests {
    static let created = Date(timeIntervalSince1970: 1_800_000_000)

    /// A public client of the authorization code grant with an https, a loopback and a private-use redirect URI.
    static let web = OAuthClient(
        id: "cl_web", name: "Example Web", isConfidential: false, isFirstParty: false,
        redirectURIs: ["https://web.example/cb", "http://127.0.0.1/cb", "com.example.app:/oauth/cb"], postLogoutRedirectURIs: [],
        grantTypes: [.authorizationCode, .refreshToken], scopes: ["openid", "email", "profile", "offline_access"], idTokenAlgorithm: "RS256",
        createdAt: created)
    /// A confidential client that may use `client_credentials` alone.
    static let machine = OAuthClient(
        id: "cl_machine", name: "Example Machine", isConfidential: true, isFirstParty: false, redirectURIs: ["https://machine.example/cb"],
        postLogoutRedirectURIs: [], grantTypes: [.clientCredentials], scopes: ["openid"], idTokenAlgorithm: "RS256", createdAt: created)

    /// RFC 7636 Appendix B's challenge.
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    static let base: [String: String] = [
        "client_id": "cl_web", "redirect_uri": "https://web.example/cb", "response_type": "code", "code_challenge": challenge,
        "code_challenge_method": "S256", "scope": "openid email", "state": "af0ifjsldkj", "nonce": "n-0S6_WzA2Mj",
    ]

    /// What a request checked without error holds; every field defaults to what ``base`` gives.
    struct Accepted: Sendable {
        var redirectURI = "https://web.example/cb"
        var scopes = ["email", "openid"]
        var state: String? = "af0ifjsldkj"
        var nonce: String? = "n-0S6_WzA2Mj"
        var prompts: Set<AuthorizationRequest.Prompt> = []
        var maxAge: Int?
        var loginHint: String?
        var mode: AuthorizationRequest.ResponseMode = .query
    }

    enum Outcome: Sendable {
        case accepted(Accepted)
        /// An error page (no redirect), whose text contains this.
        case errorPage(String)
        /// An error at the redirect URI: the `error` code, words its `error_description` contains.
        case toClient(String, String)
    }

    enum Client: Sendable { case web, machine, unknown }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        /// Parameters set (a value) or removed (`nil`) from ``base``.
        var changes: [String: String?]
        var client: Client = .web
        var outcome: Outcome
        var testDescription: String { name }

        init(_ name: String, _ changes: [String: String?], client: Client = .web, _ outcome: Outcome) {
            self.name = name
            self.changes = changes
            self.client = client
            self.outcome = outcome
        }

        var parameters: [String: String] {
            var parameters = AuthorizationRequestRulesTests.base
            for (name, value) in changes { parameters[name] = value }
            return parameters
        }
    }

    static let long = String(repeating: "s", count: AuthorizationRequest.maximumParameterLength + 1)
    static let longest = String(repeating: "s", count: AuthorizationRequest.maximumParameterLength)

    static let rows: [Row] = [
        Row("the base request", [:], .accepted(Accepted())),
        // The client and the redirect URI, until proven: an error page, never a redirect (S20).
        Row("S20: no client_id", ["client_id": nil], .errorPage("client_id is missing")),
        Row("S20: an empty client_id", ["client_id": ""], .errorPage("client_id is missing")),
        Row("S20: an unknown client", [:], client: .unknown, .errorPage("No application with this client_id")),
        Row("S20: a client_id other than the client found", ["client_id": "cl_other"], .errorPage("No application with this client_id")),
        Row("S20: no redirect_uri", ["redirect_uri": nil], .errorPage("no redirect_uri")),
        Row("S20: an empty redirect_uri", ["redirect_uri": ""], .errorPage("no redirect_uri")),
        Row("S20: a redirect_uri with a trailing slash", ["redirect_uri": "https://web.example/cb/"], .errorPage("not one that Example Web registered")),
        Row("S20: a redirect_uri with the default port", ["redirect_uri": "https://web.example:443/cb"], .errorPage("not one that Example Web registered")),
        Row("S20: a redirect_uri with a query added", ["redirect_uri": "https://web.example/cb?x=1"], .errorPage("not one that Example Web registered")),
        Row("S20: an unknown client with a bad response_type: the page, no redirect", ["response_type": "token"], client: .unknown,
            .errorPage("No application")),
        Row("S20: an unregistered redirect_uri with no challenge: the page, no redirect",
            ["redirect_uri": "https://evil.example/cb", "code_challenge": nil], .errorPage("not one that")),
        Row("S20: the loopback redirect URI on any port", ["redirect_uri": "http://127.0.0.1:51234/cb"],
            .accepted(Accepted(redirectURI: "http://127.0.0.1:51234/cb"))),
        Row("S20: the private-use redirect URI", ["redirect_uri": "com.example.app:/oauth/cb"], .accepted(Accepted(redirectURI: "com.example.app:/oauth/cb"))),
        // Lengths: any parameter over 2048 bytes is a page; 2048 passes.
        Row("a state of 2049 bytes", ["state": long], .errorPage("too long")),
        Row("a nonce of 2049 bytes", ["nonce": long], .errorPage("too long")),
        Row("an unknown parameter of 2049 bytes", ["foo": long], .errorPage("too long")),
        Row("a state of 2048 bytes", ["state": longest], .accepted(Accepted(state: longest))),
        // response_mode: an unknown one cannot carry an error back, so it is a page.
        Row("response_mode=fragment", ["response_mode": "fragment"], .errorPage("response_mode")),
        Row("response_mode=FORM_POST", ["response_mode": "FORM_POST"], .errorPage("response_mode")),
        Row("response_mode=form_post", ["response_mode": "form_post"], .accepted(Accepted(mode: .formPost))),
        Row("response_mode=query", ["response_mode": "query"], .accepted(Accepted())),
        // Request objects.
        Row("a request object", ["request": "eyJhbGciOiJub25lIn0.e30."], .toClient("request_not_supported", "request objects")),
        Row("a request_uri", ["request_uri": "https://web.example/req"], .toClient("request_uri_not_supported", "request_uri")),
        Row("a request object before a missing response_type", ["request": "x", "response_type": nil], .toClient("request_not_supported", "request objects")),
        // response_type: code alone (S22: no implicit grant).
        Row("S22: no response_type", ["response_type": nil], .toClient("invalid_request", "response_type is required")),
        Row("S22: response_type=token", ["response_type": "token"], .toClient("unsupported_response_type", "only response_type=code")),
        Row("S22: response_type=code id_token", ["response_type": "code id_token"], .toClient("unsupported_response_type", "only response_type=code")),
        Row("S22: response_type=CODE", ["response_type": "CODE"], .toClient("unsupported_response_type", "only response_type=code")),
        Row("S22: response_type=\"code \"", ["response_type": "code "], .toClient("unsupported_response_type", "only response_type=code")),
        Row("S22: response_type empty", ["response_type": ""], .toClient("unsupported_response_type", "only response_type=code")),
        Row("a client without the authorization code grant",
            ["client_id": "cl_machine", "redirect_uri": "https://machine.example/cb", "scope": "openid"], client: .machine,
            .toClient("unauthorized_client", "authorization code grant")),
        // PKCE (S21): S256 for every client, a 43-character base64url challenge of 32 bytes.
        Row("S21: no code_challenge", ["code_challenge": nil], .toClient("invalid_request", "code_challenge is required")),
        Row("S21: no code_challenge_method", ["code_challenge_method": nil], .toClient("invalid_request", "must be S256")),
        Row("S21: code_challenge_method=plain", ["code_challenge_method": "plain"], .toClient("invalid_request", "must be S256")),
        Row("S21: code_challenge_method=s256", ["code_challenge_method": "s256"], .toClient("invalid_request", "must be S256")),
        Row("S21: a challenge of 42 characters", ["code_challenge": String(challenge.dropLast())], .toClient("invalid_request", "not an S256 challenge")),
        Row("S21: a challenge of 44 characters", ["code_challenge": challenge + "A"], .toClient("invalid_request", "not an S256 challenge")),
        Row("S21: a challenge with padding", ["code_challenge": challenge + "="], .toClient("invalid_request", "not an S256 challenge")),
        Row("S21: a challenge in standard base64", ["code_challenge": challenge.replacingOccurrences(of: "-", with: "+")],
            .toClient("invalid_request", "not an S256 challenge")),
        Row("S21: an empty challenge", ["code_challenge": ""], .toClient("invalid_request", "not an S256 challenge")),
        // scope: required, each a scope of the client, compared exactly; repeats and extra spaces fold.
        Row("no scope", ["scope": nil], .toClient("invalid_scope", "scope is required")),
        Row("an empty scope", ["scope": ""], .toClient("invalid_scope", "scope is required")),
        Row("a scope of spaces", ["scope": "   "], .toClient("invalid_scope", "scope is required")),
        Row("a scope the client may not have", ["scope": "openid admin"], .toClient("invalid_scope", "may not ask")),
        Row("a scope in another case", ["scope": "OPENID"], .toClient("invalid_scope", "may not ask")),
        Row("scopes separated by a tab", ["scope": "openid\temail"], .toClient("invalid_scope", "may not ask")),
        Row("repeated scopes and extra spaces", ["scope": " email  openid openid "], .accepted(Accepted(scopes: ["email", "openid"]))),
        Row("every scope of the client", ["scope": "offline_access profile email openid"],
            .accepted(Accepted(scopes: ["email", "offline_access", "openid", "profile"]))),
        Row("a scope without openid", ["scope": "email"], .accepted(Accepted(scopes: ["email"]))),
        // prompt (OpenID Connect Core §3.1.2.1): known values; none alone.
        Row("prompt=none", ["prompt": "none"], .accepted(Accepted(prompts: [.none]))),
        Row("prompt=login consent", ["prompt": "login consent"], .accepted(Accepted(prompts: [.login, .consent]))),
        Row("prompt=create", ["prompt": "create"], .accepted(Accepted(prompts: [.create]))),
        Row("prompt=login login", ["prompt": "login login"], .accepted(Accepted(prompts: [.login]))),
        Row("prompt=none none", ["prompt": "none none"], .accepted(Accepted(prompts: [.none]))),
        Row("prompt empty", ["prompt": ""], .accepted(Accepted())),
        Row("prompt=none login", ["prompt": "none login"], .toClient("invalid_request", "prompt=none cannot be combined")),
        Row("prompt=consent none", ["prompt": "consent none"], .toClient("invalid_request", "prompt=none cannot be combined")),
        Row("prompt=select_account", ["prompt": "select_account"], .toClient("invalid_request", "prompt has an unknown value")),
        Row("prompt=LOGIN", ["prompt": "LOGIN"], .toClient("invalid_request", "prompt has an unknown value")),
        Row("prompt=login with an unknown value", ["prompt": "login foo"], .toClient("invalid_request", "prompt has an unknown value")),
        // max_age: whole seconds in ASCII digits.
        Row("max_age=0", ["max_age": "0"], .accepted(Accepted(maxAge: 0))),
        Row("max_age=3600", ["max_age": "3600"], .accepted(Accepted(maxAge: 3600))),
        Row("max_age=007", ["max_age": "007"], .accepted(Accepted(maxAge: 7))),
        Row("max_age=-1", ["max_age": "-1"], .toClient("invalid_request", "max_age must be a whole number")),
        Row("max_age=+5", ["max_age": "+5"], .toClient("invalid_request", "max_age must be a whole number")),
        Row("max_age=1.5", ["max_age": "1.5"], .toClient("invalid_request", "max_age must be a whole number")),
        Row("max_age empty", ["max_age": ""], .toClient("invalid_request", "max_age must be a whole number")),
        Row("max_age with a space", ["max_age": " 5"], .toClient("invalid_request", "max_age must be a whole number")),
        Row("max_age beyond Int", ["max_age": "99999999999999999999"], .toClient("invalid_request", "max_age must be a whole number")),
        Row("max_age in Arabic-Indic digits", ["max_age": "\u{0663}"], .toClient("invalid_request", "max_age must be a whole number")),
        // nonce, state, login_hint: optional, kept exactly.
        Row("no nonce", ["nonce": nil], .accepted(Accepted(nonce: nil))),
        Row("no state", ["state": nil], .accepted(Accepted(state: nil))),
        Row("a state with spaces and form characters", ["state": "a b&c=d%20é"], .accepted(Accepted(state: "a b&c=d%20é"))),
        Row("a login_hint", ["login_hint": "ada@example.com"], .accepted(Accepted(loginHint: "ada@example.com"))),
        // Errors carry the state and the mode of the request, whatever they are.
        Row("an error without state", ["state": nil, "response_type": "token"], .toClient("unsupported_response_type", "only response_type=code")),
        Row("an error with an odd state", ["state": "a b&c=d", "scope": "admin"], .toClient("invalid_scope", "may not ask")),
        Row("an error in form_post mode", ["response_mode": "form_post", "code_challenge_method": "plain"], .toClient("invalid_request", "S256")),
        Row("an error at the loopback URI on a port", ["redirect_uri": "http://127.0.0.1:8080/cb", "prompt": "bogus"],
            .toClient("invalid_request", "prompt")),
    ]

    @Test("each parameter rule of the authorization request: accepted as documented, an error page until client and redirect URI are proven, else an error to the client with its state", arguments: rows)
    func check(_ row: Row) {
        let parameters = row.parameters
        let client: OAuthClient? = switch row.client {
        case .web: Self.web
        case .machine: Self.machine
        case .unknown: nil
        }
        let result = Result { () throws(AuthorizationFailure) in try AuthorizationRequest.check(parameters, client: client) }
        switch (row.outcome, result) {
        case (.accepted(let expected), .success(let request)):
            #expect(request.client == client)
            #expect(request.redirectURI == expected.redirectURI)
            #expect(request.scopes == expected.scopes)
            #expect(request.scope == expected.scopes.joined(separator: " "))
            #expect(request.state == expected.state)
            #expect(request.nonce == expected.nonce)
            #expect(request.codeChallenge == Self.challenge)
            #expect(request.prompts == expected.prompts)
            #expect(request.maxAge == expected.maxAge)
            #expect(request.loginHint == expected.loginHint)
            #expect(request.responseMode == expected.mode)
            #expect(request.parameters == parameters, "the request as it came, for the hosted pages to check again")
        case (.errorPage(let words), .failure(.untrusted(let text))):
            #expect(text.contains(words), "\(text)")
        case (.toClient(let error, let words), .failure(.toClient(let response))):
            #expect(response.redirectURI == parameters["redirect_uri"], "back to the URI the request named")
            #expect(response.state == parameters["state"])
            #expect(response.mode == (parameters["response_mode"] == "form_post" ? .formPost : .query))
            guard case .error(let code, let description) = response.result else {
                Issue.record("expected an error, got \(response.result)")
                return
            }
            #expect(code == error)
            #expect(description.contains(words), "\(description)")
        default:
            Issue.record("expected \(row.outcome), got \(result)")
        }
    }

    /// `prompt` and `max_age` before signing in, and what the request comes back with after.
    static let signInReturns: [(prompt: String?, maxAge: String?, keptPrompt: String?)] = [
        (nil, nil, nil),
        ("login", "0", nil),
        ("create", nil, nil),
        ("login create", "60", nil),
        ("login consent", nil, "consent"),
        ("consent", "300", "consent"),
        ("none", nil, "none"),
    ]

    @Test("after the hosted sign-in the request comes back without prompt=login, prompt=create and max_age, and with everything else", arguments: signInReturns)
    func comesBackAfterSignIn(_ row: (prompt: String?, maxAge: String?, keptPrompt: String?)) throws {
        var parameters = Self.base
        parameters["prompt"] = row.prompt
        parameters["max_age"] = row.maxAge
        parameters["login_hint"] = "ada"
        let request = try AuthorizationRequest.check(parameters, client: Self.web)
        var expected = Self.base
        expected["prompt"] = row.keptPrompt
        expected["login_hint"] = "ada"
        #expect(request.afterSignIn == expected)
        // Coming back with them is not asked to sign in again.
        let again = try AuthorizationRequest.check(request.afterSignIn, client: Self.web)
        #expect(!again.prompts.contains(.login) && !again.prompts.contains(.create) && again.maxAge == nil)
    }

    /// RFC 9207: the parameters sent back, `iss` always, `state` when the request had one.
    @Test("a response's parameters: the code or the error with its description, state when the request had one, iss always")
    func responseParameters() {
        let issuer = "https://auth.example"
        func names(_ response: AuthorizationResponse) -> [String] { response.parameters(issuer: issuer).map(\.name) }
        func values(_ response: AuthorizationResponse) -> [String] { response.parameters(issuer: issuer).map(\.value) }
        let code = AuthorizationResponse(redirectURI: "https://web.example/cb", mode: .query, state: "xyz", result: .code("c0de"))
        #expect(names(code) == ["code", "state", "iss"])
        #expect(values(code) == ["c0de", "xyz", issuer])
        let error = AuthorizationResponse(redirectURI: "https://web.example/cb", mode: .formPost, state: nil, result: .error("access_denied", "no"))
        #expect(names(error) == ["error", "error_description", "iss"])
        #expect(values(error) == ["access_denied", "no", issuer])
        let emptyState = AuthorizationResponse(redirectURI: "https://web.example/cb", mode: .query, state: "", result: .code("c"))
        #expect(names(emptyState) == ["code", "state", "iss"], "an empty state was sent, so it comes back")
    }
}

/// PKCE's pure rules (S21, RFC 7636): the shape of a challenge and a verifier, and the S256 check.
@Suite("PKCE rules")
struct PKCERulesTests {
    /// RFC 7636 Appendix B.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    static let verifiers: [(verifier: String, valid: Bool)] = [
        (verifier, true),
        (String(repeating: "a", count: 43), true),
        (String(repeating: "a", count: 128), true),
        (String(repeating: "a", count: 42), false),
        (String(repeating: "a", count: 129), false),
        ("-._~" + String(repeating: "Z9", count: 20), true),
        (String(repeating: "a", count: 42) + "+", false),
        (String(repeating: "a", count: 42) + "/", false),
        (String(repeating: "a", count: 42) + "=", false),
        (String(repeating: "a", count: 42) + " ", false),
        (String(repeating: "a", count: 42) + "%", false),
        (String(repeating: "a", count: 42) + "\u{e9}", false),
        ("", false),
    ]

    @Test("S21: a verifier is 43 to 128 unreserved characters (A-Z a-z 0-9 - . _ ~)", arguments: verifiers)
    func verifierShapeS21(_ row: (verifier: String, valid: Bool)) {
        #expect(PKCE.isVerifier(row.verifier) == row.valid)
    }

    static let checks: [(verifier: String, challenge: String, verifies: Bool)] = [
        (verifier, challenge, true),
        (verifier, String(challenge.dropLast()) + "N", false),
        (String(verifier.dropLast()) + "l", challenge, false),
        (verifier + "a", challenge, false),
        // The challenge as its own verifier (a plain-method downgrade) does not verify.
        (challenge, challenge, false),
        (verifier, challenge + "=", false),
        (verifier, challenge.lowercased(), false),
        (String(verifier.prefix(42)), challenge, false),
    ]

    @Test("S21: only the verifier whose SHA-256 is the challenge verifies; plain and padded forms do not", arguments: checks)
    func verifiesS21(_ row: (verifier: String, challenge: String, verifies: Bool)) {
        #expect(PKCE.verifies(row.verifier, challenge: row.challenge) == row.verifies)
    }

    static let challenges: [(challenge: String, valid: Bool)] = [
        (challenge, true),
        (String(repeating: "A", count: 43), true),
        (String(challenge.dropLast()), false),
        (challenge + "=", false),
        (challenge.replacingOccurrences(of: "-", with: "+"), false),
        (String(repeating: "a", count: 42) + ".", false),
        ("", false),
    ]

    @Test("S21: a challenge is 43 base64url characters of 32 bytes, unpadded", arguments: challenges)
    func challengeShapeS21(_ row: (challenge: String, valid: Bool)) {
        #expect(PKCE.isChallenge(row.challenge) == row.valid)
    }
}
