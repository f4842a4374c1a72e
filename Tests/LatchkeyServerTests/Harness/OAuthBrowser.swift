import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyWire

/// A client registered on a test server, with what a relying party needs to use it.
struct TestOAuthClient: Sendable {
    let id: String
    /// The secret of a confidential client; `nil` for a public one.
    let secret: String?
    let redirectURI: String

    /// The token-endpoint authentication of this client: Basic for a confidential one, the
    /// bare `client_id` field for a public one.
    func authenticate(_ fields: [String: String]) -> (fields: [String: String], headers: [String: String]) {
        guard let secret else { return (fields.merging(["client_id": id]) { $1 }, [:]) }
        let basic = Base64.encode(Array("\(PercentEncoding.encode(id)):\(PercentEncoding.encode(secret))".utf8), padded: true)
        return (fields, ["Authorization": "Basic \(basic)"])
    }
}

/// What the browser ended on when it left the server: the redirect URI with its query
/// (`.query`), or the fields of the auto-posting form (`form_post`).
struct OAuthCallback: Sendable {
    /// The status of the last answer of the server (303 for a redirect, 200 for a form post).
    let status: Int
    /// The URL the browser was sent to: the redirect URI and its query, or the form's action.
    let location: String
    /// The callback's parameters: the query's or the posted form's.
    let parameters: [String: String]
    /// The headers of the last answer.
    let headers: HTTPHeaders

    var code: String? { parameters["code"] }
    var error: String? { parameters["error"] }
}

/// The relying party's half of one authorization: its request's parameters and PKCE verifier.
struct AuthorizationAttempt: Sendable {
    var parameters: [String: String]
    var verifier: String

    /// A code-flow request of `client` with S256 PKCE, a state and a nonce; `extra` adds or
    /// replaces parameters (a `nil` value removes one).
    init(_ client: TestOAuthClient, scope: String = "openid profile email", extra: [String: String?] = [:]) {
        verifier = Identifiers.secret() + "-._~" + Identifiers.secret()
        parameters = [
            "response_type": "code", "client_id": client.id, "redirect_uri": client.redirectURI, "scope": scope,
            "state": "st-" + Identifiers.secret(), "nonce": "n-" + Identifiers.secret(),
            "code_challenge": Self.challenge(verifier), "code_challenge_method": "S256",
        ]
        for (name, value) in extra { parameters[name] = value }
    }

    /// `BASE64URL(SHA-256(verifier))`.
    static func challenge(_ verifier: String) -> String { Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8))) }

    /// The path and query of the authorization request.
    var path: String { "/oauth/authorize?" + PercentEncoding.encodeForm(parameters) }
}

/// ``HostedBrowser`` for the OAuth tests: answers as ``TestResponse``, and the relying party's
/// side of an authorization (``authorize(_:username:password:decision:)``, ``callback(_:)``).
struct OAuthBrowser {
    let hosted: HostedBrowser

    /// A browser on `server` that sends `headers` with every request.
    init(_ server: TestServer, headers: [String: String] = [:]) { hosted = HostedBrowser(base: URL(string: server.baseURL)!, headers: headers) }

    /// The cookies the server set and has not cleared, by name.
    var cookies: [String: String] { hosted.cookies }

    /// Sends a GET (no `form`) or a form POST to a path of the server or an absolute URL.
    func send(_ target: String, form: [String: String]? = nil) async throws -> TestResponse {
        guard let form else { return TestResponse(try await hosted.get(target)) }
        return TestResponse(try await hosted.post(target, form: form))
    }

    /// Follows `response`'s redirects on this server; returns the first answer that is not a
    /// redirect here: a page, or a redirect away (which it does not follow).
    func follow(_ response: TestResponse) async throws -> TestResponse {
        TestResponse(try await hosted.follow(HostedBrowser.Page(response)))
    }

    /// Submits the page's one form with its hidden fields and `fields`, and follows the answer.
    func submit(_ page: TestResponse, _ fields: [String: String] = [:]) async throws -> TestResponse {
        TestResponse(try await hosted.submit(HostedBrowser.Page(page), fields))
    }

    /// The action and hidden fields of the one form of `html`, unescaped.
    static func form(in html: String) throws -> (action: String, fields: [String: String]) {
        guard let form = HostedBrowser.Page.form(in: html) else { throw BrowserError.noForm }
        return form
    }

    /// What the browser was sent to, when `response` leaves the server: a 303 away, or the
    /// auto-posting form of `form_post`; `nil` for a page of the server.
    static func callback(_ response: TestResponse) throws -> OAuthCallback? {
        if response.status == 303, let location = response.headers["Location"], !location.hasPrefix("/") {
            let query = URLComponents(string: location)?.queryItems ?? []
            var parameters = [String: String]()
            for item in query { parameters[item.name] = item.value ?? "" }
            return OAuthCallback(status: response.status, location: location, parameters: parameters, headers: response.headers)
        }
        if response.status == 200, response.text.contains("<form"), let (action, fields) = try? form(in: response.text),
            !action.hasPrefix("/")
        {
            return OAuthCallback(status: response.status, location: action, parameters: fields, headers: response.headers)
        }
        return nil
    }

    /// Opens `attempt`'s authorization request and, when a page asks, signs in with `username`
    /// and `password` and answers the consent page with `decision`; returns the callback.
    ///
    /// - Throws: ``BrowserError/stuck(_:)`` when a page of the server remains (the test reads it
    ///   with ``open(_:)`` instead).
    func authorize(
        _ attempt: AuthorizationAttempt, username: String = OAuthBrowser.username, password: String = OAuthBrowser.password,
        decision: String = "allow"
    ) async throws -> OAuthCallback {
        var response = try await open(attempt)
        for _ in 0..<4 {
            if let callback = try Self.callback(response) { return callback }
            let html = response.text
            if html.contains(#"name="password""#) {
                response = try await submit(response, ["username": username, "password": password])
            } else if html.contains(#"name="decision""#) {
                response = try await submit(response, ["decision": decision])
            } else {
                throw BrowserError.stuck(response.status)
            }
        }
        throw BrowserError.stuck(response.status)
    }

    /// `GET /oauth/authorize` for `attempt`, its redirects on the server followed.
    func open(_ attempt: AuthorizationAttempt) async throws -> TestResponse {
        try await follow(try await send(attempt.path))
    }

    /// The username and password of ``TestServer/passwordUser(username:password:)``'s default user.
    static let username = "ada@example.com"
    static let password = "correct horse battery staple"

    enum BrowserError: Error {
        case noForm
        /// A page of the server that is neither sign-in nor consent, with its status.
        case stuck(Int)
    }
}

extension TestResponse {
    /// A page as the browser got it; each `Set-Cookie` field stays a field of its own.
    init(_ page: HostedBrowser.Page) {
        var headers = HTTPHeaders()
        for (name, value) in page.headers where name != "set-cookie" { headers.add(name, value) }
        for field in page.setCookies { headers.add("Set-Cookie", field) }
        self.init(status: page.status, headers: headers, body: Array(page.text.utf8))
    }

    /// The body of a `/oauth/token` answer.
    var oauthTokens: WireOAuthTokenResponse {
        get throws { try WireOAuthTokenResponse(parsing: body) }
    }

    /// The `error` member of an OAuth error body.
    var oauthError: String? { (try? WireOAuthError(parsing: body))?.error }
}

extension HostedBrowser.Page {
    /// The answer as ``HostedBrowser`` holds it, to follow it or submit its form (and to hand
    /// back whole when there is nothing to follow).
    init(_ response: TestResponse) {
        var headers = [String: String]()
        for (name, value) in response.headers { headers[name.lowercased()] = headers[name.lowercased()].map { $0 + ", " + value } ?? value }
        self.init(
            status: response.status, location: response.headers["Location"], headers: headers, setCookies: response.headers.values("Set-Cookie"),
            text: response.text)
    }
}

extension TestServer {
    /// Registers a client through the client service, as `latchkey clients add` does.
    func registerClient(
        name: String = "Example Notes", redirectURI: String = "https://notes.example/cb", confidential: Bool = false,
        firstParty: Bool = false, postLogoutRedirectURIs: [String] = [], idTokenAlgorithm: String = "RS256"
    ) async throws -> TestOAuthClient {
        let clients = ClientService(database: database, clock: { self.clock.now })
        let (client, secret) = try await clients.register(
            ClientRegistration(
                name: name, redirectURIs: [redirectURI], postLogoutRedirectURIs: postLogoutRedirectURIs, confidential: confidential,
                firstParty: firstParty, idTokenAlgorithm: idTokenAlgorithm))
        return TestOAuthClient(id: client.id, secret: secret, redirectURI: redirectURI)
    }

    /// A password account made through `/v1/auth/password/signup`; returns its user id and the
    /// `/v1` tokens of the sign-up.
    func passwordUser(username: String = OAuthBrowser.username, password: String = OAuthBrowser.password) async throws -> (
        userID: String, tokens: WireTokenResponse
    ) {
        let response = try await request(
            .post, "/v1/auth/password/signup", json: ["username": .string(username), "password": .string(password)])
        let tokens = try response.tokens
        let claims = try Insecure.unverifiedContents(of: tokens.accessToken).claims
        return (claims["sub"]?.stringValue ?? "", tokens)
    }

    /// A form POST to the token endpoint (or, with `path`, revoke or introspect) as `client`
    /// authenticates, sent with the project's own client: URLSession on Linux
    /// (swift-corelibs-foundation) never completes a request answered 401 with a Basic challenge,
    /// which is how these endpoints answer a wrong Basic secret (RFC 6749 §5.2).
    func tokenRequest(_ fields: [String: String], as client: TestOAuthClient, at path: String = "/oauth/token") async throws -> TestResponse {
        let (fields, headers) = client.authenticate(fields)
        var request = OutboundRequest.form(URL(string: requestURL + path)!, fields)
        for (name, value) in headers { request.headers.set(name, value) }
        let response = try await EventHTTPClient().send(request)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// Exchanges `callback`'s code with `attempt`'s verifier and redirect URI.
    func exchange(_ callback: OAuthCallback, _ attempt: AuthorizationAttempt, as client: TestOAuthClient) async throws -> TestResponse {
        try await tokenRequest(
            ["grant_type": "authorization_code", "code": callback.code ?? "", "code_verifier": attempt.verifier, "redirect_uri": client.redirectURI],
            as: client)
    }

    /// Refreshes at the token endpoint as `client`.
    func refresh(_ refreshToken: String, as client: TestOAuthClient) async throws -> TestResponse {
        try await tokenRequest(["grant_type": "refresh_token", "refresh_token": refreshToken], as: client)
    }
}
