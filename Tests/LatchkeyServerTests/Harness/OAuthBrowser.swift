import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
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

/// A browser for the hosted pages: keeps cookies by hand (they are `Secure` and the test server
/// is plain http on the loopback, as a browser treats 127.0.0.1), never follows a redirect on
/// its own, and submits the pages' one form.
struct OAuthBrowser {
    let server: TestServer
    /// The cookies the server set and has not cleared, by name.
    var cookies: [String: String] = [:]
    private let http = EventHTTPClient()

    init(_ server: TestServer) { self.server = server }

    /// Sends a GET (no `form`) or a form POST to a path of the server or an absolute URL.
    mutating func send(_ target: String, form: [String: String]? = nil) async throws -> TestResponse {
        let url = URL(string: target.hasPrefix("/") ? server.baseURL + target : target)!
        var request = form.map { OutboundRequest.form(url, $0) } ?? OutboundRequest(url: url)
        if !cookies.isEmpty {
            request.headers.set("Cookie", cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        let response = try await http.send(request)
        for header in response.headers.values("Set-Cookie") {
            let pair = header.prefix { $0 != ";" }
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals])
            if header.lowercased().contains("max-age=0") { cookies[name] = nil } else { cookies[name] = String(pair[pair.index(after: equals)...]) }
        }
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// Follows `response`'s 303s on this server; returns the first answer that is not a redirect
    /// here: a page, or a redirect away (which it does not follow).
    mutating func follow(_ response: TestResponse) async throws -> TestResponse {
        var response = response
        for _ in 0..<10 {
            guard response.status == 303 || response.status == 302, let location = response.headers["Location"], location.hasPrefix("/") else {
                return response
            }
            response = try await send(location)
        }
        throw BrowserError.tooManyRedirects
    }

    /// Submits the page's one form with its hidden fields and `fields`, and follows the answer.
    mutating func submit(_ page: TestResponse, _ fields: [String: String] = [:]) async throws -> TestResponse {
        let (action, hidden) = try Self.form(in: page.text)
        return try await follow(try await send(action, form: hidden.merging(fields) { $1 }))
    }

    /// The action and hidden fields of the one form of `html`, unescaped.
    static func form(in html: String) throws -> (action: String, fields: [String: String]) {
        guard let action = html.firstMatch(of: /<form[^>]*action="([^"]*)"/)?.output.1 else { throw BrowserError.noForm }
        var fields = [String: String]()
        for match in html.matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)"/) {
            fields[unescape(String(match.output.1))] = unescape(String(match.output.2))
        }
        return (unescape(String(action)), fields)
    }

    /// Undoes the pages' HTML escaping.
    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
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
    mutating func authorize(
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
    mutating func open(_ attempt: AuthorizationAttempt) async throws -> TestResponse {
        try await follow(try await send(attempt.path))
    }

    /// The username and password of ``TestServer/passwordUser(username:password:)``'s default user.
    static let username = "ada@example.com"
    static let password = "correct horse battery staple"

    enum BrowserError: Error {
        case tooManyRedirects, noForm
        /// A page of the server that is neither sign-in nor consent, with its status.
        case stuck(Int)
    }
}

extension TestResponse {
    /// The body of a `/oauth/token` answer.
    var oauthTokens: WireOAuthTokenResponse {
        get throws { try WireOAuthTokenResponse(parsing: body) }
    }

    /// The `error` member of an OAuth error body.
    var oauthError: String? { (try? WireOAuthError(parsing: body))?.error }
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

    /// A form POST to the token endpoint (or, with `path`, revoke or introspect) as `client` authenticates.
    func tokenRequest(_ fields: [String: String], as client: TestOAuthClient, at path: String = "/oauth/token") async throws -> TestResponse {
        let (fields, headers) = client.authenticate(fields)
        return try await request(
            .post, path, body: Array(PercentEncoding.encodeForm(fields).utf8),
            headers: headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { $1 })
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
