package import Foundation

/// A programmable, hostile upstream identity provider: the fixture
/// `Tests/LatchkeyServerTests/Fixtures/upstream_stand_in.py` (stdlib `http.server`, PyJWT and
/// cryptography from the test venv, `LATCHKEY_PYTHON`), on a free port of 127.0.0.1. It serves an
/// OpenID Connect provider (discovery at ``issuer``) and a GitHub-shaped OAuth 2 provider
/// (``githubAuthorizeURL``, ``githubTokenURL``, ``githubAPIURL``) at once; ``configure(_:)``
/// sets the client, the user and a ``Mode`` that turns the next sign-ins' answers hostile, and
/// ``requests()`` reads what was asked of it, secrets redacted to their presence.
///
/// Its token endpoints demand client authentication (exactly one of client_secret_basic and
/// client_secret_post) with the configured client, a single-use code at most 120 s old, the
/// authorize request's `redirect_uri`, and PKCE S256 (a `code_challenge` with method `S256` at
/// authorize, the matching `code_verifier` at the token endpoint). The OpenID shape refuses with
/// 401 `invalid_client` or 400 `invalid_grant`; the GitHub shape as GitHub does, with HTTP 200
/// and `error` (`incorrect_client_credentials`, `bad_verification_code`, `redirect_uri_mismatch`).
///
/// It stops when ``stop()`` is called or the test process ends. A stand-in that cannot start is an
/// error the test reports; nothing is skipped.
package final class UpstreamStandIn: Sendable {
    /// What the next sign-ins get (the fixture's `mode`).
    package enum Mode: String, Sendable, CaseIterable {
        case normal
        /// The ID token's `iss` is another issuer.
        case wrongIss = "wrong_iss"
        /// The ID token's `aud` is another client.
        case wrongAud = "wrong_aud"
        /// The ID token's `nonce` is not the authorize request's.
        case wrongNonce = "wrong_nonce"
        /// An unsigned ID token, header `alg: none`.
        case algNone = "alg_none"
        /// An ID token signed HS256 with the client secret as the key.
        case hs256ClientSecret = "hs256_client_secret"
        /// An ID token whose `exp` and `iat` are an hour ago.
        case expired
        /// An ID token signed by a key the JWKS lacks, with a `kid` it lacks.
        case unknownKid = "unknown_kid"
        /// The authorize redirect's `iss` parameter names another issuer; the token is fine.
        case issParamMismatch = "iss_param_mismatch"
        /// Authorize redirects with `error=access_denied` (and `state`, and `iss` on the OpenID shape).
        case errorAccessDenied = "error_access_denied"
        /// `aud` is [client, another] and `azp` the other one.
        case azpMismatch = "azp_mismatch"
        /// The token endpoint answers 500.
        case token500 = "token_500"
        /// The token endpoint answers after 15 s.
        case tokenSlow = "token_slow"
    }

    /// The ID token's signing algorithm (the fixture's `alg`).
    package enum Algorithm: String, Sendable {
        case rs256 = "RS256"
        case es256 = "ES256"
    }

    /// One entry of `/user/emails` on the GitHub shape.
    package struct GitHubEmail: Sendable {
        package var email: String
        package var primary: Bool
        package var verified: Bool
        /// `private`, `public`, or `nil` (JSON null).
        package var visibility: String?

        package init(email: String, primary: Bool, verified: Bool, visibility: String? = "private") {
            self.email = email
            self.primary = primary
            self.verified = verified
            self.visibility = visibility
        }

        var json: [String: Any] {
            ["email": email, "primary": primary, "verified": verified, "visibility": visibility.map { $0 as Any } ?? NSNull()]
        }
    }

    /// One request the stand-in answered, as `GET /requests` logs it.
    package struct LoggedRequest: Sendable {
        /// `authorize`, `token`, `userinfo`, `api/user` or `api/user/emails`.
        package var endpoint: String
        /// `oidc` or `github`.
        package var shape: String
        package var status: Int
        /// The query (authorize) or form (token) parameters; `client_secret` and `code_verifier`
        /// are `[redacted]`.
        package var parameters: [String: String]
        /// Authorize: the request carried `nonce`. Token: the code's authorize request did.
        package var nonce: Bool
        /// Authorize: its `code_challenge_method` when it carried a `code_challenge`. Token: the
        /// code's authorize request's.
        package var codeChallengeMethod: String?
        /// Token: a `code_verifier` was sent.
        package var codeVerifier: Bool
        /// Token: `client_secret_basic`, `client_secret_post`, both joined with `+`, or `none`.
        package var clientAuthentication: String?
        /// The `error` it answered, if any.
        package var error: String?
        /// The whole entry, serialized.
        package var json: String
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let port: Int
    private let service: PythonService

    private init(port: Int, service: PythonService) {
        self.port = port
        self.service = service
    }

    /// `http://127.0.0.1:PORT`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }
    /// The OpenID shape's issuer, the same as ``baseURL`` (discovery: `{issuer}/.well-known/openid-configuration`).
    package var issuer: String { baseURL }
    package var discoveryURL: String { baseURL + "/.well-known/openid-configuration" }
    package var authorizationEndpoint: String { baseURL + "/authorize" }
    package var tokenEndpoint: String { baseURL + "/token" }
    package var jwksURI: String { baseURL + "/jwks" }
    package var userinfoEndpoint: String { baseURL + "/userinfo" }
    /// The GitHub shape: a provider's `authorize_url`, `token_url` and `api_url`.
    package var githubAuthorizeURL: String { baseURL + "/login/oauth/authorize" }
    package var githubTokenURL: String { baseURL + "/login/oauth/access_token" }
    package var githubAPIURL: String { baseURL + "/api" }

    /// The client it expects until ``configure(_:)`` changes it.
    package static let defaultClientID = "latchkey"
    package static let defaultClientSecret = "stand-in-secret"

    /// Starts one (its keys are new each time).
    package static func start() async throws -> UpstreamStandIn {
        let (service, port) = try await PythonService.start(
            "the upstream stand-in (Tests/LatchkeyServerTests/Fixtures/upstream_stand_in.py)",
            arguments: [scriptURL.path, "--owner-pid", String(ProcessInfo.processInfo.processIdentifier)],
            announcedOnStandardError: false
        ) { line in
            line.hasPrefix("port=") ? Int(line.dropFirst("port=".count)) : nil
        }
        return UpstreamStandIn(port: port, service: service)
    }

    /// Sets what the next sign-ins get, kept until changed: `POST /control` with `settings` as
    /// JSON (keys: `reset`, `client_id`, `client_secret`, `mode`, `alg`, `sub`, `email`,
    /// `email_verified`, `name`, `id`, `login`, `public_email`, `emails`; an unknown key or value
    /// is refused). Values are anything `JSONSerialization` takes; `NSNull()` for null.
    package func configure(_ settings: [String: any Sendable]) async throws {
        let answer = try await LoopbackHTTP.send("POST", baseURL + "/control", json: settings as [String: Any])
        guard answer.status == 200 else { throw Failure(description: "POST /control answered \(answer.status): \(answer.text)") }
    }

    /// ``configure(_:)`` with names: `nil` leaves a setting as it is; `reset` first restores every
    /// default (client `latchkey`/`stand-in-secret`, mode normal, RS256, user `upstream-user-1`,
    /// `upstream-user@example.com` verified, GitHub id 12345 `octocat`, no public email, and
    /// `/user/emails` derived from `email` and `emailVerified` unless `githubEmails` is given).
    package func configure(
        reset: Bool = false, clientID: String? = nil, clientSecret: String? = nil, mode: Mode? = nil, algorithm: Algorithm? = nil,
        sub: String? = nil, email: String? = nil, emailVerified: Bool? = nil, name: String? = nil,
        githubID: Int? = nil, login: String? = nil, publicEmail: String? = nil, githubEmails: [GitHubEmail]? = nil
    ) async throws {
        var settings: [String: any Sendable] = [:]
        if reset { settings["reset"] = true }
        if let clientID { settings["client_id"] = clientID }
        if let clientSecret { settings["client_secret"] = clientSecret }
        if let mode { settings["mode"] = mode.rawValue }
        if let algorithm { settings["alg"] = algorithm.rawValue }
        if let sub { settings["sub"] = sub }
        if let email { settings["email"] = email }
        if let emailVerified { settings["email_verified"] = emailVerified }
        if let name { settings["name"] = name }
        if let githubID { settings["id"] = githubID }
        if let login { settings["login"] = login }
        if let publicEmail { settings["public_email"] = publicEmail }
        var body = settings as [String: Any]
        if let githubEmails { body["emails"] = githubEmails.map(\.json) }
        let answer = try await LoopbackHTTP.send("POST", baseURL + "/control", json: body)
        guard answer.status == 200 else { throw Failure(description: "POST /control answered \(answer.status): \(answer.text)") }
    }

    /// The requests answered so far, in order.
    package func requests() async throws -> [LoggedRequest] {
        let answer = try await LoopbackHTTP.get(baseURL + "/requests")
        guard answer.status == 200, let entries = try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]] else {
            throw Failure(description: "GET /requests answered \(answer.status): \(answer.text.prefix(500))")
        }
        return try entries.map { entry in
            let endpoint = entry["endpoint"] as? String ?? ""
            let isToken = endpoint == "token"
            var parameters = [String: String]()
            for case (let name, let value as String) in entry["params"] as? [String: Any] ?? [:] { parameters[name] = value }
            let challenge = isToken ? entry["authorize_code_challenge"] as? Bool ?? false : entry["code_challenge"] as? Bool ?? false
            let method = isToken ? entry["authorize_code_challenge_method"] as? String : entry["code_challenge_method"] as? String
            return LoggedRequest(
                endpoint: endpoint, shape: entry["shape"] as? String ?? "", status: (entry["status"] as? NSNumber)?.intValue ?? 0,
                parameters: parameters, nonce: isToken ? entry["authorize_nonce"] as? Bool ?? false : entry["nonce"] as? Bool ?? false,
                codeChallengeMethod: challenge ? method : nil, codeVerifier: entry["code_verifier"] as? Bool ?? false,
                clientAuthentication: entry["client_auth"] as? String, error: entry["error"] as? String,
                json: String(decoding: try JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys]), as: UTF8.self))
        }
    }

    /// `GET /requests` as served, for a test that checks what the log shows (no secret, say).
    package func requestLog() async throws -> String {
        try await LoopbackHTTP.get(baseURL + "/requests").text
    }

    /// Stops it at once (SIGKILL).
    package func stop() {
        service.stop()
    }

    /// The fixture, in the source tree.
    package static let scriptURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LatchkeyServerTests/Fixtures/upstream_stand_in.py")
}
