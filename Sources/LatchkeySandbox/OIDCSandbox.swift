package import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
package import LatchkeyJSON
import Synchronization

/// A local OpenID provider for development mode: the upstream behind "Continue with Sandbox",
/// so brokered sign-in (Google, GitHub, any OIDC provider) runs end to end with no account
/// anywhere, as ``AppleSandbox`` plays Apple.
///
/// It is a small but strict provider of the authorization code flow (OpenID Connect Core 1.0
/// §3.1):
/// - publishes its discovery document and one ES256 key generated at start (``discovery``,
///   ``jwks``);
/// - shows a sign-in page where the developer types any e-mail address (no password), and
///   answers with a single-use code that lives ``codeLifetime`` seconds
///   (OIDCSandboxAuthorizePage.swift);
/// - requires PKCE `S256` and a `nonce` on every authorization request, as a broker must
///   always send them;
/// - exchanges codes at its token endpoint for an ID token and an access token after checking
///   the client secret (`client_secret_basic` or `client_secret_post`), the `redirect_uri` and
///   the `code_verifier` (``token(_:authorization:)``);
/// - answers its userinfo endpoint for those access tokens (``userinfo(authorization:)``).
///
/// The same address is always the same upstream user (``subject(forEmail:)``). State lives in
/// memory, bounded, and dies with the process. It is mounted only in development mode and in
/// tests; see ``register(on:prefix:)``.
package final class OIDCSandbox: Sendable {
    /// The one client the sandbox knows: the broker's `client_id`.
    package let clientID: String
    private let clientSecret: String
    private let clock: @Sendable () -> Date
    private let signer: JWSSigner
    private let issuerURL = Mutex<String?>(nil)
    private let state = Mutex(State())

    /// The `kid` of the signing key.
    package static let keyID = "sandbox-oidc-1"
    /// How long an authorization code is good for.
    package static let codeLifetime: TimeInterval = 60
    /// How long ID tokens and access tokens live.
    package static let tokenLifetime: TimeInterval = 300
    /// How many unexpired codes may be outstanding; past it, authorization answers
    /// `temporarily_unavailable`.
    package static let maxOutstandingCodes = 100_000
    /// How many unexpired access tokens may be outstanding; past it, the token endpoint answers
    /// 503 `temporarily_unavailable`.
    package static let maxOutstandingAccessTokens = 100_000
    /// The longest parameter or field any endpoint takes, in UTF-8 bytes.
    package static let maxParameterBytes = 2048
    /// The longest e-mail address (RFC 5321's limit on a path), in UTF-8 bytes.
    package static let maxEmailBytes = 320
    /// The longest display name, in characters.
    package static let maxNameCharacters = 100
    /// The scopes the sandbox grants; others asked for are ignored (OpenID Connect Core §3.1.2.1).
    package static let supportedScopes = ["openid", "email", "profile"]

    /// Who signed in on the page, and for what: what a code and its access token stand for.
    struct Grant: Sendable {
        var clientID: String
        var redirectURI: String
        var codeChallenge: String
        var nonce: String
        var subject: String
        var email: String
        var emailVerified: Bool
        var name: String?
        /// The granted scopes, space-separated: the supported ones asked for.
        var scope: String
        /// When the developer pressed Continue: the ID token's `auth_time`.
        var issuedAt: Date
        /// Set once the code was presented: a second presentation revokes this token.
        var accessTokenHash: [UInt8]?
        var used = false

        var scopes: Set<Substring> { Set(scope.split(separator: " ")) }
    }

    private struct AccessGrant: Sendable {
        var grant: Grant
        var expiresAt: Date
    }

    private struct State {
        /// Codes and access tokens by SHA-256, so a dump of the state holds no usable secret.
        var codes: [[UInt8]: Grant] = [:]
        var accessTokens: [[UInt8]: AccessGrant] = [:]
        /// The counts at which the next sweep of expired entries runs: a sweep walks the whole
        /// map, so it runs again only after an eighth of the limit more, however many stay.
        var codeSweepAt = OIDCSandbox.maxOutstandingCodes / 2
        var tokenSweepAt = OIDCSandbox.maxOutstandingAccessTokens / 2
    }

    /// Creates a sandbox that knows one client, with a freshly generated ES256 key.
    ///
    /// - Parameters:
    ///   - clientID: The broker's `client_id`.
    ///   - clientSecret: Its `client_secret`.
    ///   - clock: The time; injected so tests can move it.
    package init(clientID: String, clientSecret: String, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clock = clock
        self.signer = .es256(P256.Signing.PrivateKey(), keyID: Self.keyID)
    }

    // MARK: Issuer and keys

    /// Sets the issuer, `{public_url}/sandbox/oidc`: known only once the server has bound its
    /// port. Every endpoint answers 503 until it is set.
    package func setIssuer(_ issuer: String) {
        issuerURL.withLock { $0 = issuer }
    }

    /// The issuer, or `nil` before ``setIssuer(_:)``.
    package var issuer: String? { issuerURL.withLock { $0 } }

    /// The issuer, or 503 before the server has started.
    func requireIssuer() throws(EndpointError) -> String {
        guard let issuer else {
            throw EndpointError(status: 503, code: "temporarily_unavailable", description: "the sandbox's issuer is not set yet")
        }
        return issuer
    }

    /// The published JWK Set: the one ES256 key, with `kid`, `alg` and `use: sig`.
    package var jwks: JSONValue {
        JWKSet(keys: [try? signer.publicJWK].compactMap { $0 }).json
    }

    /// The discovery document (OpenID Connect Discovery 1.0 §3, RFC 9207 §3).
    package func discovery() throws(EndpointError) -> JSONValue {
        let issuer = try requireIssuer()
        return [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + "/authorize"),
            "token_endpoint": .string(issuer + "/token"),
            "userinfo_endpoint": .string(issuer + "/userinfo"),
            "jwks_uri": .string(issuer + "/jwks"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "scopes_supported": .array(Self.supportedScopes.map(JSONValue.string)),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": [
                "iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "at_hash", "email", "email_verified", "name",
            ],
            "authorization_response_iss_parameter_supported": true,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
            "claims_parameter_supported": false,
        ]
    }

    /// The `sub` of the user with this address: `sbx-` and the first 20 hex digits of the
    /// SHA-256 of the lower-cased address. The same address, in any case, is the same user.
    package static func subject(forEmail email: String) -> String {
        "sbx-" + HashFunction.sha256.hexDigest(Array(email.lowercased().utf8)).prefix(20)
    }

    // MARK: Codes

    /// Stores a grant under a new code.
    ///
    /// - Returns: The code, or `nil` when ``maxOutstandingCodes`` unexpired codes are outstanding.
    func issueCode(_ grant: Grant) -> String? {
        let code = Self.randomToken()
        let now = clock()
        let stored: Bool = state.withLock { state in
            if state.codes.count >= state.codeSweepAt {
                state.codes = state.codes.filter { now.timeIntervalSince($0.value.issuedAt) < Self.codeLifetime }
                state.codeSweepAt = max(Self.maxOutstandingCodes / 2, state.codes.count + Self.maxOutstandingCodes / 8)
            }
            guard state.codes.count < Self.maxOutstandingCodes else { return false }
            state.codes[Self.hash(code)] = grant
            return true
        }
        return stored ? code : nil
    }

    /// The time, for the authorize page.
    var now: Date { clock() }

    // MARK: The token endpoint

    /// A refusal as an OAuth endpoint sends it (RFC 6749 §5.2, RFC 6750 §3):
    /// `{"error": code, "error_description": text}` with its status and headers.
    package struct EndpointError: Error, Sendable {
        package var status: Int
        package var code: String
        package var description: String
        package var headers: [(String, String)] = []

        var response: HTTPResponse {
            var response = HTTPResponse.json(["error": .string(code), "error_description": .string(description)], status: status)
            for (name, value) in headers { response.headers.add(name, value) }
            response.headers.add("Cache-Control", "no-store")
            return response
        }

        static func invalidRequest(_ description: String) -> EndpointError {
            EndpointError(status: 400, code: "invalid_request", description: description)
        }

        static func invalidGrant(_ description: String) -> EndpointError {
            EndpointError(status: 400, code: "invalid_grant", description: description)
        }
    }

    /// `POST token` (RFC 6749 §4.1.3, RFC 7636 §4.6): exchanges a code, once, for
    /// `{access_token, token_type, expires_in, id_token, scope}`.
    ///
    /// A code is good for one presentation: one that fails a check (`redirect_uri`,
    /// `code_verifier`) is used up too, and presenting a used code again also revokes the access
    /// token it gave (RFC 6749 §4.1.2).
    ///
    /// - Parameters:
    ///   - form: The form body.
    ///   - authorization: The `Authorization` header field, if any (`client_secret_basic`).
    package func token(_ form: [String: String], authorization: String?) throws(EndpointError) -> JSONValue {
        let issuer = try requireIssuer()
        for (name, value) in form where value.utf8.count > Self.maxParameterBytes {
            throw .invalidRequest("\(name.prefix(40)) is longer than \(Self.maxParameterBytes) bytes")
        }
        try authenticateClient(form, authorization: authorization)
        switch form["grant_type"] {
        case nil, ""?: throw .invalidRequest("grant_type is required")
        case "authorization_code": break
        default: throw EndpointError(status: 400, code: "unsupported_grant_type", description: "grant_type must be authorization_code")
        }
        guard let code = form["code"], !code.isEmpty else { throw .invalidRequest("code is required") }
        let now = clock()
        let key = Self.hash(code)
        let grant: Grant? = state.withLock { state in
            guard var grant = state.codes[key], now.timeIntervalSince(grant.issuedAt) < Self.codeLifetime else {
                state.codes[key] = nil
                return nil
            }
            if grant.used {
                // A replayed code: whoever holds it loses what the first presentation gave.
                if let token = grant.accessTokenHash { state.accessTokens[token] = nil }
                state.codes[key] = nil
                return nil
            }
            grant.used = true
            state.codes[key] = grant
            return grant
        }
        guard let grant, grant.clientID == clientID else { throw .invalidGrant("the code is unknown, used or expired") }
        guard form["redirect_uri"] == grant.redirectURI else {
            throw .invalidGrant("redirect_uri must be the one of the authorization request")
        }
        guard let verifier = form["code_verifier"] else { throw .invalidGrant("code_verifier is required: the code was issued with PKCE") }
        guard Self.isValidVerifier(verifier),
            ConstantTime.equals(Array(Self.challenge(forVerifier: verifier).utf8), Array(grant.codeChallenge.utf8))
        else { throw .invalidGrant("code_verifier does not match the code_challenge") }

        let accessToken = Self.randomToken()
        let accessHash = Self.hash(accessToken)
        let stored: Bool = state.withLock { state in
            if state.accessTokens.count >= state.tokenSweepAt {
                state.accessTokens = state.accessTokens.filter { $0.value.expiresAt > now }
                state.tokenSweepAt = max(Self.maxOutstandingAccessTokens / 2, state.accessTokens.count + Self.maxOutstandingAccessTokens / 8)
            }
            guard state.accessTokens.count < Self.maxOutstandingAccessTokens else { return false }
            state.accessTokens[accessHash] = AccessGrant(grant: grant, expiresAt: now.addingTimeInterval(Self.tokenLifetime))
            state.codes[key]?.accessTokenHash = accessHash
            return true
        }
        guard stored else {
            throw EndpointError(status: 503, code: "temporarily_unavailable", description: "too many access tokens are outstanding")
        }
        let idToken: String
        do {
            idToken = try signer.sign(idTokenClaims(grant, issuer: issuer, accessToken: accessToken, now: now), type: "JWT")
        } catch {
            throw EndpointError(status: 500, code: "server_error", description: "signing failed")
        }
        return [
            "access_token": .string(accessToken), "token_type": "Bearer", "expires_in": .number(Self.tokenLifetime),
            "id_token": .string(idToken), "scope": .string(grant.scope),
        ]
    }

    /// The ID token's claims (OpenID Connect Core §2, §3.1.3.6): the user's claims follow the
    /// granted scopes, as at a real provider: `email` and `email_verified` with `email`, `name`
    /// with `profile` when one was typed.
    private func idTokenClaims(_ grant: Grant, issuer: String, accessToken: String, now: Date) -> JWTClaims {
        var claims = JWTClaims()
        claims.issuer = issuer
        claims.subject = grant.subject
        claims.audience = [grant.clientID]
        claims["azp"] = .string(grant.clientID)
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(Self.tokenLifetime)
        claims["auth_time"] = .number(grant.issuedAt.timeIntervalSince1970.rounded(.down))
        claims["nonce"] = .string(grant.nonce)
        // The left half of the access token's SHA-256 (§3.1.3.6).
        claims["at_hash"] = .string(Base64URL.encode(HashFunction.sha256.hash(Array(accessToken.utf8)).prefix(16)))
        for (name, value) in Self.userClaims(grant) { claims[name] = value }
        return claims
    }

    /// The claims about the user the granted scopes allow, for the ID token and userinfo.
    private static func userClaims(_ grant: Grant) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["sub": .string(grant.subject)]
        let scopes = grant.scopes
        if scopes.contains("email") {
            claims["email"] = .string(grant.email)
            claims["email_verified"] = .bool(grant.emailVerified)
        }
        if scopes.contains("profile"), let name = grant.name { claims["name"] = .string(name) }
        return claims
    }

    /// Checks the client's credentials: exactly one of `client_secret_basic` (RFC 6749 §2.3.1:
    /// the id and secret form-url-encoded, then Basic) and `client_secret_post`.
    private func authenticateClient(_ form: [String: String], authorization: String?) throws(EndpointError) {
        let challenge = [("WWW-Authenticate", "Basic realm=\"sandbox-oidc\"")]
        func refuse(_ description: String) -> EndpointError {
            EndpointError(status: 401, code: "invalid_client", description: description, headers: challenge)
        }
        let presentedID: String
        let presentedSecret: String
        if let authorization {
            guard form["client_secret"] == nil else {
                throw .invalidRequest("use one client authentication method: Authorization: Basic or client_secret, not both")
            }
            guard let (id, secret) = Self.basicCredentials(authorization) else {
                throw refuse("the Authorization header must be Basic with the form-url-encoded client_id and client_secret")
            }
            if let formID = form["client_id"], formID != id { throw refuse("client_id differs from the Authorization header's") }
            (presentedID, presentedSecret) = (id, secret)
        } else {
            guard let id = form["client_id"], let secret = form["client_secret"] else {
                throw refuse("client authentication is required: client_secret_basic or client_secret_post")
            }
            (presentedID, presentedSecret) = (id, secret)
        }
        // Hashes of equal length, so the comparison leaks nothing of the secret's length.
        let secretMatches = ConstantTime.equals(
            HashFunction.sha256.hash(Array(presentedSecret.utf8)), HashFunction.sha256.hash(Array(clientSecret.utf8)))
        guard presentedID == clientID, secretMatches else { throw refuse("unknown client or wrong client secret") }
    }

    /// The id and secret of `Basic base64(urlencode(id):urlencode(secret))`, or `nil`.
    private static func basicCredentials(_ field: String) -> (String, String)? {
        guard field.utf8.count <= 2 * maxParameterBytes else { return nil }
        let parts = field.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Base64.decode(parts[1].trimmingASCIIWhitespace().utf8, alphabet: .standard, padded: nil),
            let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":"),
            let id = PercentEncoding.decode(text[..<colon], plusIsSpace: true),
            let secret = PercentEncoding.decode(text[text.index(after: colon)...], plusIsSpace: true)
        else { return nil }
        return (id, secret)
    }

    /// RFC 7636 §4.1: 43 to 128 characters of `[A-Za-z0-9-._~]`.
    static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    true
                default: false
                }
            }
    }

    /// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
    package static func challenge(forVerifier verifier: String) -> String {
        Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
    }

    // MARK: Userinfo

    /// `GET userinfo` (OpenID Connect Core §5.3): the claims of the access token's user, as far
    /// as its scopes allow.
    ///
    /// - Parameter authorization: The `Authorization` header field: `Bearer <access_token>`.
    package func userinfo(authorization: String?) throws(EndpointError) -> JSONValue {
        _ = try requireIssuer()
        guard let authorization else {
            // RFC 6750 §3.1: no error code when the request carried no credentials.
            throw EndpointError(status: 401, code: "invalid_request", description: "Authorization: Bearer is required", headers: [
                ("WWW-Authenticate", "Bearer realm=\"sandbox-oidc\"")
            ])
        }
        let invalid = EndpointError(
            status: 401, code: "invalid_token", description: "the access token is unknown or expired",
            headers: [("WWW-Authenticate", "Bearer realm=\"sandbox-oidc\", error=\"invalid_token\"")])
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard authorization.utf8.count <= Self.maxParameterBytes, parts.count == 2, parts[0].lowercased() == "bearer" else { throw invalid }
        let key = Self.hash(String(parts[1].trimmingASCIIWhitespace()))
        let now = clock()
        let grant: Grant? = state.withLock { state in
            guard let access = state.accessTokens[key] else { return nil }
            guard access.expiresAt > now else {
                state.accessTokens[key] = nil
                return nil
            }
            return access.grant
        }
        guard let grant else { throw invalid }
        return .object(Self.userClaims(grant))
    }

    // MARK: Helpers

    /// 256 random bits, base64url.
    static func randomToken() -> String {
        Base64URL.encode(SecureRandom.bytes(count: 32))
    }

    private static func hash(_ token: String) -> [UInt8] {
        HashFunction.sha256.hash(Array(token.utf8))
    }
}
