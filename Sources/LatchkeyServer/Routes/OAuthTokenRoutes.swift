import FoundationEssentials
import LatchkeyBasics
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWire

/// The OAuth provider's back-channel endpoints: `/oauth/token`, `/oauth/revoke` (RFC 7009),
/// `/oauth/introspect` (RFC 7662) and `/oauth/userinfo` (OpenID Connect Core §5.3).
struct OAuthTokenRoutes {
    let tokens: TokenService
    /// The device authorization endpoint and the device code grant (RFC 8628).
    let devices: DeviceAuthorizationService
    let clients: ClientService
    /// The issuer, which client assertions name as their audience.
    let accessTokens: AccessTokens
    /// The bearer check of userinfo: tokens for the API or for userinfo alone.
    let userinfoBearer: BearerAuthenticator
    /// Binds what `/oauth/token` issues to the key of the request's DPoP proof.
    let binding: DPoPBinding

    func register(on router: Router) {
        let (tokens, devices, clients, accessTokens, binding) = (tokens, devices, clients, accessTokens, binding)

        Self.clientEndpoint("/oauth/token", on: router) { request, caller in
            let form = try request.formBody()
            let client = try await Self.authenticateClient(request, form: form, clients: clients, issuer: accessTokens.issuer)
            let caller = try await binding.bind(request, caller, spentByRefresh: form["grant_type"] == "refresh_token")
            let issued: OAuthTokens
            switch form["grant_type"] {
            case "authorization_code":
                guard let code = form["code"], !code.isEmpty else { throw AuthError.invalidRequest("code is required") }
                issued = try await tokens.exchange(
                    code: code, redirectURI: form["redirect_uri"], verifier: form["code_verifier"], client: client, context: caller)
            case "refresh_token":
                guard let token = form["refresh_token"], !token.isEmpty, token.utf8.count <= 512 else {
                    throw AuthError.invalidRequest("refresh_token is required")
                }
                issued = try await tokens.refresh(token, client: client, context: caller)
            case "client_credentials":
                issued = try await tokens.clientCredentials(client: client, scope: form["scope"], context: caller)
            case OAuthClient.GrantType.deviceCode.rawValue:
                guard let code = form["device_code"], !code.isEmpty else { throw AuthError.invalidRequest("device_code is required") }
                issued = try await devices.poll(deviceCode: code, client: client, context: caller)
            case nil:
                throw AuthError.invalidRequest("grant_type is required")
            default:
                throw AuthError(
                    .unsupportedGrantType, "grant_type must be authorization_code, refresh_token, client_credentials or \(OAuthClient.GrantType.deviceCode.rawValue)")
            }
            return Self.noStore(
                .json(
                    WireOAuthTokenResponse(
                        accessToken: issued.accessToken, tokenType: issued.tokenType, expiresIn: issued.expiresIn, refreshToken: issued.refreshToken,
                        idToken: issued.idToken, scope: issued.scope
                    ).json))
        }

        // RFC 8628 §3.1, §3.2.
        Self.clientEndpoint(DeviceAuthorizationService.endpointPath, on: router) { request, caller in
            let form = try request.formBody()
            let client = try await Self.authenticateClient(request, form: form, clients: clients, issuer: accessTokens.issuer)
            let grant = try await devices.issue(client: client, scope: form["scope"], context: caller)
            return Self.noStore(
                .json(
                    WireDeviceAuthorizationResponse(
                        deviceCode: grant.deviceCode, userCode: grant.userCode, verificationURI: grant.verificationURI,
                        verificationURIComplete: grant.verificationURIComplete, expiresIn: grant.expiresIn, interval: grant.interval
                    ).json))
        }

        Self.clientEndpoint("/oauth/revoke", on: router) { request, caller in
            let form = try request.formBody()
            let client = try await Self.authenticateClient(request, form: form, clients: clients, issuer: accessTokens.issuer)
            guard let token = form["token"], !token.isEmpty else { throw AuthError.invalidRequest("token is required") }
            try await tokens.revoke(token, client: client, context: caller)
            return .empty(status: 200)
        }

        Self.clientEndpoint("/oauth/introspect", on: router) { request, _ in
            let form = try request.formBody()
            let client = try await Self.authenticateClient(request, form: form, clients: clients, issuer: accessTokens.issuer)
            guard client.isConfidential else { throw AuthError(.invalidClient, "introspection is for confidential clients") }
            guard let token = form["token"], !token.isEmpty else { throw AuthError.invalidRequest("token is required") }
            return Self.noStore(.json(Self.json(try await tokens.introspect(token, client: client))))
        }

        let userinfo = router.group("/oauth/userinfo", middleware: BareBearerChallenge(), userinfoBearer)
        let answer: @Sendable (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse = { _, context in
            let principal = try context.requirePrincipal()
            return Self.noStore(.json(Self.json(try await tokens.userInfo(userID: principal.userID, scopes: principal.scopes))))
        }
        userinfo.get("", answer)
        userinfo.post("", answer)
    }

    /// The value of `WWW-Authenticate` on an `invalid_client` after HTTP Basic.
    static let basicChallenge = #"Basic realm="latchkey""#

    /// Adds an endpoint where the client authenticates. RFC 6749 §5.2: when the client tried the
    /// `Authorization` header, `invalid_client` MUST carry `WWW-Authenticate` with the scheme it
    /// used, and HTTP Basic is the one scheme accepted; a client that tried none (a form secret,
    /// an assertion, a public client's bare id) gets the same 401 without a challenge, as the RFC
    /// lets a server choose. Every answer, errors included, is ``neverCached(pragma:_:)``.
    private static func clientEndpoint(
        _ path: String, on router: Router, _ handler: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse
    ) {
        router.group("", context: LatchkeyContext.self).post(path) { request, context in
            try await neverCached {
                do {
                    return try await handler(request, context.caller)
                } catch let error as AuthError where error.code == .invalidClient && request.headers["Authorization"] != nil {
                    var response = error.response
                    response.headers.set("WWW-Authenticate", basicChallenge)
                    return response
                }
            }
        }
    }

    /// Runs `handler` and marks whatever it answers `Cache-Control: no-store` (and, with
    /// `pragma`, `Pragma: no-cache`), its refusals as well as its tokens: an error answer of a
    /// token endpoint is no more for a cache to keep than a token is (RFC 6749 §5.1, §5.2). A
    /// store failure is answered here as ``StoreErrorMiddleware`` would answer it, so that it is
    /// marked too; an unexpected error is left to the server's 500, which carries only the
    /// request id.
    static func neverCached(pragma: Bool = true, _ handler: () async throws -> HTTPResponse) async throws -> HTTPResponse {
        var response: HTTPResponse
        do {
            response = try await handler()
        } catch {
            let translated = (error as? StoreError).map(StoreErrorMiddleware.translate) ?? error
            guard let answer = translated as? any HTTPResponseError else { throw error }
            response = answer.response
        }
        response.headers.set("Cache-Control", "no-store")
        if pragma { response.headers.set("Pragma", "no-cache") }
        return response
    }

    /// The client of a token-endpoint request (RFC 6749 §2.3): `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`, or a public client's bare `client_id`; one
    /// method per request.
    ///
    /// - Throws: `invalid_client` (401) for an unknown client or a wrong, missing or unexpected
    ///   credential; `invalid_request` for two methods at once.
    static func authenticateClient(
        _ request: HTTPRequest, form: [String: String], clients: ClientService, issuer: String
    ) async throws -> OAuthClient {
        if let type = form["client_assertion_type"] {
            guard type == ClientAssertion.type, let assertion = form["client_assertion"] else {
                throw AuthError(.invalidClient, "client_assertion_type must be \(ClientAssertion.type), with a client_assertion")
            }
            guard form["client_secret"] == nil, request.headers["Authorization"] == nil else {
                throw AuthError.invalidRequest("use one client authentication method, not two")
            }
            // The assertion is for this endpoint, or for the issuer or the token endpoint as a whole.
            let audiences: Set<String> = [issuer, issuer + "/oauth/token", issuer + request.path]
            return try await clients.authenticate(assertion: assertion, clientID: form["client_id"], audiences: audiences)
        }
        var id = form["client_id"]
        var secret = form["client_secret"]
        if let header = request.headers["Authorization"] {
            guard header.count > 6, header.prefix(6).lowercased() == "basic " else {
                throw AuthError(.invalidClient, "the Authorization header must use the Basic scheme")
            }
            guard secret == nil else { throw AuthError.invalidRequest("use one client authentication method, not two") }
            guard let decoded = Base64.decode(Array(header.dropFirst(6).trimmingWhitespace().utf8), padded: nil),
                let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":"),
                let basicID = PercentEncoding.decode(text[..<colon], plusIsSpace: true),
                let basicSecret = PercentEncoding.decode(text[text.index(after: colon)...], plusIsSpace: true)
            else { throw AuthError(.invalidClient, "the Basic credentials are malformed") }
            if let id, id != basicID { throw AuthError.invalidRequest("client_id differs from the Basic credentials") }
            id = basicID
            secret = basicSecret
        }
        guard let id, !id.isEmpty, id.utf8.count <= 256, (secret?.utf8.count ?? 0) <= 512 else {
            throw AuthError(.invalidClient, "the client is not identified")
        }
        return try await clients.authenticate(id: id, secret: secret)
    }

    /// Token responses and what they say of tokens are never cached (RFC 6749 §5.1).
    static func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Pragma", "no-cache")
        return response
    }

    static func json(_ introspection: TokenIntrospection) -> JSONValue {
        guard introspection.active else { return ["active": false] }
        var members: [String: JSONValue] = ["active": true]
        if let scope = introspection.scope { members["scope"] = .string(scope) }
        if let clientID = introspection.clientID { members["client_id"] = .string(clientID) }
        if let subject = introspection.subject { members["sub"] = .string(subject) }
        if let issuedAt = introspection.issuedAt { members["iat"] = .integer(Int(issuedAt.timeIntervalSince1970)) }
        if let expiresAt = introspection.expiresAt { members["exp"] = .integer(Int(expiresAt.timeIntervalSince1970)) }
        if let tokenType = introspection.tokenType { members["token_type"] = .string(tokenType) }
        if let sessionID = introspection.sessionID { members["sid"] = .string(sessionID) }
        if let key = introspection.keyThumbprint { members["cnf"] = ["jkt": .string(key)] }
        return .object(members)
    }

    static func json(_ info: UserInfo) -> JSONValue {
        var members: [String: JSONValue] = ["sub": .string(info.subject)]
        // A claim without a value is left out, not null (OpenID Connect Core §5.3.2).
        if let profile = info.profile {
            if let given = profile.givenName { members["given_name"] = .string(given) }
            if let family = profile.familyName { members["family_name"] = .string(family) }
            let name = [profile.givenName, profile.familyName].compactMap { $0 }.joined(separator: " ")
            if !name.isEmpty { members["name"] = .string(name) }
        }
        if let email = info.email, let address = email.address {
            members["email"] = .string(address)
            members["email_verified"] = .bool(email.verified)
            members["is_private_email"] = .bool(email.isPrivate)
        }
        return .object(members)
    }
}

/// RFC 6750 §3.1: a request to userinfo that carried no credentials at all is answered with the
/// bare challenge, `WWW-Authenticate: Bearer realm="latchkey"`, no error code; a token that does
/// not hold keeps `error="invalid_token"`. The status and body stay those of `invalid_token`.
struct BareBearerChallenge: RouterMiddleware {
    typealias Context = LatchkeyContext

    static let challenge = #"Bearer realm="latchkey""#

    func handle(
        _ request: HTTPRequest, context: LatchkeyContext, next: (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        do {
            return try await next(request, context)
        } catch let error as AuthError where error.code == .invalidToken && request.headers["Authorization"] == nil {
            var response = error.response
            response.headers.set("WWW-Authenticate", Self.challenge)
            return response
        }
    }
}
