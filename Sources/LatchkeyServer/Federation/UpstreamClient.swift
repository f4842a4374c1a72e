import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJSON

/// What this server asks of an upstream over HTTP: its discovery document, the code exchange,
/// userinfo, and GitHub's `/user` and `/user/emails`. TLS is always verified (the HTTP client
/// cannot turn it off) and every request has ``timeout``; no answer in time, a transport error
/// or a 5xx is `upstream_unavailable`, which the sign-in page offers to retry.
///
/// Nothing here logs or returns a secret, a code, a token or a response body.
final class UpstreamClient: Sendable {
    let http: any HTTPClient
    /// The deadline of each request, connect to last byte.
    let timeout: Duration

    init(http: any HTTPClient, timeout: Duration = .seconds(10)) {
        self.http = http
        self.timeout = timeout
    }

    /// Reads and checks `{issuer}/.well-known/openid-configuration` (OpenID Connect Discovery
    /// §4): its `issuer` must be exactly the configured one, and every endpoint https (http only
    /// on a loopback address, or for the development sandbox).
    func discover(issuer: String, allowHTTP: Bool) async throws(ProviderSignInFailure) -> UpstreamEndpoints {
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        guard let url = URL(string: trimmed + "/.well-known/openid-configuration") else {
            throw ProviderSignInFailure(.upstreamUnavailable, "the issuer \(issuer) is not a URL")
        }
        let document = try await json(OutboundRequest(url: url, headers: ["Accept": "application/json"], timeout: timeout), what: "discovery")
        guard document["issuer"]?.stringValue == issuer else {
            throw ProviderSignInFailure(.upstreamUnavailable, "the discovery document of \(issuer) names another issuer")
        }
        func endpoint(_ name: String, required: Bool) throws(ProviderSignInFailure) -> URL? {
            guard let text = document[name]?.stringValue else {
                if required { throw ProviderSignInFailure(.upstreamUnavailable, "the discovery document of \(issuer) has no \(name)") }
                return nil
            }
            guard ConfigurationLoader.urlProblem(text, allowHTTP: allowHTTP) == nil, let url = URL(string: text) else {
                throw ProviderSignInFailure(.upstreamUnavailable, "the discovery document's \(name) must be an https URL")
            }
            return url
        }
        let methods = document["token_endpoint_auth_methods_supported"]?.arrayValue?.compactMap(\.stringValue) ?? ["client_secret_basic"]
        return UpstreamEndpoints(
            issuer: issuer, authorize: try endpoint("authorization_endpoint", required: true)!, token: try endpoint("token_endpoint", required: true)!,
            jwks: try endpoint("jwks_uri", required: true), userinfo: try endpoint("userinfo_endpoint", required: false),
            issParameter: document["authorization_response_iss_parameter_supported"]?.boolValue == true,
            postsClientSecret: !methods.contains("client_secret_basic") && methods.contains("client_secret_post"))
    }

    /// What the token endpoint gave.
    struct Tokens: Sendable {
        var accessToken: String
        var idToken: String?
    }

    /// Exchanges the code (RFC 6749 §4.1.3) with the PKCE verifier (RFC 7636 §4.5), the client
    /// authenticated as the endpoints say.
    ///
    /// - Throws: `exchange_failed` when the upstream refuses (4xx, or 200 without an access
    ///   token); `upstream_unavailable` otherwise.
    func exchange(
        code: String, redirectURI: String, verifier: String, settings: Configuration.Provider, endpoints: UpstreamEndpoints
    ) async throws(ProviderSignInFailure) -> Tokens {
        var fields = ["grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "code_verifier": verifier]
        var basic: String?
        if let secret = settings.clientSecret?.value, !endpoints.postsClientSecret {
            // RFC 6749 §2.3.1: each part form-encoded before the two are joined.
            basic = Data((PercentEncoding.encode(settings.clientID) + ":" + PercentEncoding.encode(secret)).utf8).base64EncodedString()
        } else {
            fields["client_id"] = settings.clientID
            fields["client_secret"] = settings.clientSecret?.value
        }
        var request = OutboundRequest.form(endpoints.token, fields, timeout: timeout)
        if let basic { request.headers.add("Authorization", "Basic " + basic) }
        let body = try await json(request, what: "token endpoint", refusal: .exchangeFailed)
        guard let accessToken = body["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw ProviderSignInFailure(.exchangeFailed, "the token endpoint answered \(body["error"]?.stringValue.map { "error \(Self.code($0))" } ?? "no access token")")
        }
        return Tokens(accessToken: accessToken, idToken: body["id_token"]?.stringValue)
    }

    /// `GET` a JSON resource with the upstream's access token: userinfo, GitHub's API.
    ///
    /// - Throws: `userinfo_failed` for a 4xx; `upstream_unavailable` otherwise.
    func get(_ url: URL, accessToken: String, what: String, github: Bool = false) async throws(ProviderSignInFailure) -> JSONValue {
        var request = OutboundRequest(url: url, headers: ["Authorization": "Bearer " + accessToken, "Accept": "application/json"], timeout: timeout)
        if github {
            request.headers.set("Accept", "application/vnd.github+json")
            request.headers.add("X-GitHub-Api-Version", "2022-11-28")
            // GitHub refuses requests without one.
            request.headers.add("User-Agent", "Latchkey")
        }
        return try await json(request, what: what, refusal: .userinfoFailed)
    }

    /// Sends `request` and parses a JSON answer.
    private func json(
        _ request: OutboundRequest, what: String, refusal: ProviderSignInFailure.Code = .upstreamUnavailable
    ) async throws(ProviderSignInFailure) -> JSONValue {
        let host = request.url.host ?? "the upstream"
        let response: OutboundResponse
        do {
            response = try await http.send(request)
        } catch {
            throw ProviderSignInFailure(.upstreamUnavailable, "\(host) (\(what)) did not answer: \(error)")
        }
        let body = try? JSONValue(parsing: response.body)
        switch response.status {
        case 200:
            guard let body else { throw ProviderSignInFailure(.upstreamUnavailable, "\(host) (\(what)) answered 200 with a body that is not JSON") }
            return body
        case 400..<500:
            let error = body?["error"]?.stringValue.map { " (\(Self.code($0)))" } ?? ""
            throw ProviderSignInFailure(refusal, "\(host) (\(what)) answered \(response.status)\(error)")
        default:
            throw ProviderSignInFailure(.upstreamUnavailable, "\(host) (\(what)) answered \(response.status)")
        }
    }

    /// An upstream's error code as it may be logged or shown: letters, digits and `_` only, at
    /// most 64.
    static func code(_ text: String) -> String {
        String(text.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }.prefix(64))
    }
}
