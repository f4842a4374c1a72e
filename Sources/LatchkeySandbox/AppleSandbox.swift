package import FoundationEssentials
package import LatchkeyCrypto
import LatchkeyHTTP
package import LatchkeyHTTPClient
package import LatchkeyJOSE
package import LatchkeyJSON
import Synchronization

/// A local stand-in for Apple's Sign in with Apple servers (docs/reference.md "Sandbox").
///
/// It does what Apple's side of the flow does, with the same wire shapes, so the server's Apple
/// code runs unchanged against it:
/// - publishes RS256 signing keys generated at start (``jwks``), and can rotate them;
/// - mints what a device would get from `ASAuthorizationAppleIDProvider`: an identity token and
///   a single-use authorization code that lives five minutes (``authorize(_:)``);
/// - exchanges codes and validates refresh tokens at its token endpoint, and revokes tokens, each
///   after checking the client secret exactly as Apple does (``ClientSecretRules``);
/// - sends signed server-to-server notifications (``notify(subject:type:email:)``).
///
/// State lives in memory and dies with the process. It is mounted only in development mode and
/// in tests; see ``register(on:prefix:)``.
package final class AppleSandbox: Sendable {
    /// The developer account the sandbox trusts: whose client secrets it accepts.
    package struct Developer: Sendable {
        /// The 10-character team id: the client secret's `iss`.
        package var teamID: String
        /// The Sign in with Apple key's id: the client secret's `kid`.
        package var keyID: String
        /// The public half of the team's `.p8` key.
        package var publicKey: P256.Signing.PublicKey
        /// The bundle and Services ids of the team's apps; the first is the default `aud`.
        package var clientIDs: [String]

        /// Creates a developer account.
        package init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, clientIDs: [String]) {
            self.teamID = teamID
            self.keyID = keyID
            self.publicKey = publicKey
            self.clientIDs = clientIDs
        }
    }

    /// What the device asks for in ``authorize(_:)``; every field has a default.
    package struct Authorization: Sendable {
        /// The user's stable id; a new one when `nil`.
        package var subject: String?
        /// The email Apple shares, or `nil` for none (managed Apple Accounts have none).
        package var email: String?
        /// Whether that is a private relay address.
        package var isPrivateEmail = false
        /// 0 unsupported, 1 unknown, 2 likely real.
        package var realUserStatus = 2
        /// The client id (`aud`); the developer's first when `nil`.
        package var audience: String?
        /// What the app put in `ASAuthorizationAppleIDRequest.nonce`: the SHA-256 hex of its raw
        /// nonce. The token carries it verbatim, with `nonce_supported: true`.
        package var nonce: String?
        /// The user's id at the team the app came from, during a team transfer.
        package var transferSubject: String?
        /// The `redirect_uri` of a web authorization: the code is then exchanged only with it.
        package var redirectURI: String?

        /// Creates an authorization request.
        package init(
            subject: String? = nil, email: String? = nil, isPrivateEmail: Bool = false, realUserStatus: Int = 2,
            audience: String? = nil, nonce: String? = nil, transferSubject: String? = nil, redirectURI: String? = nil
        ) {
            self.redirectURI = redirectURI
            self.subject = subject
            self.email = email
            self.isPrivateEmail = isPrivateEmail
            self.realUserStatus = realUserStatus
            self.audience = audience
            self.nonce = nonce
            self.transferSubject = transferSubject
        }
    }

    /// What ``authorize(_:)`` returns: what the app sends its server.
    package struct Credential: Sendable {
        package var identityToken: String
        package var authorizationCode: String
        package var subject: String
        /// Whether this was the user's first authorization (since any withdrawal of consent):
        /// the one time Apple shares the user's name with a web flow.
        package var isFirstAuthorization: Bool
    }

    /// A revocation the sandbox accepted. Never holds the token itself.
    package struct Revocation: Sendable {
        package var clientID: String
        /// The user whose token it was, when the sandbox issued it.
        package var subject: String?
        package var tokenTypeHint: String?
        package var time: Date
    }

    /// The `iss` of identity tokens and notifications, and the `aud` client secrets must name.
    package let issuer: String
    /// The trusted developer account.
    package let developer: Developer
    private let clock: @Sendable () -> Date
    private let client: any HTTPClient
    private let rsaKeys: @Sendable () throws -> RSA.Signing.PrivateKey
    private let state: Mutex<State>

    /// How long an authorization code is good for.
    package static let codeLifetime: TimeInterval = 300
    /// How long identity tokens live (Apple: ten minutes).
    package static let identityTokenLifetime: TimeInterval = 600

    private struct Grant {
        var subject: String
        var clientID: String
        var issuedAt: Date
        var used = false
        var email: String?
        var isPrivateEmail: Bool
        /// A web authorization's `redirect_uri`, which the code exchange must repeat.
        var redirectURI: String?
    }

    private struct State {
        /// Newest last; the newest signs.
        var signers: [JWSSigner]
        var codes: [String: Grant] = [:]
        /// Refresh tokens by SHA-256, so a dump of the state holds no usable token.
        var refreshTokens: [[UInt8]: Grant] = [:]
        var revokedSubjects: Set<String> = []
        /// Users who have authorized the team's apps, until they withdraw consent.
        var authorizedSubjects: Set<String> = []
        var revocations: [Revocation] = []
        var notificationURL: URL?
        var keyRequests = 0
        var tokenRequests = 0
    }

    /// Creates a sandbox with one freshly generated RS256 key.
    ///
    /// - Parameters:
    ///   - issuer: The `iss` it signs with; Apple's by default, so the server's default issuer
    ///     setting accepts it once `keys_url` points here.
    ///   - developer: Whose client secrets it accepts.
    ///   - client: Sends notifications.
    ///   - clock: The time; injected so tests can move it.
    ///   - rsaKeys: Makes its signing keys: a fresh RSA 2048 key each time unless a test hands
    ///     out keys made once.
    package init(
        issuer: String = "https://appleid.apple.com", developer: Developer, client: any HTTPClient,
        clock: @escaping @Sendable () -> Date = { Date() },
        rsaKeys: @escaping @Sendable () throws -> RSA.Signing.PrivateKey = { try RSA.Signing.PrivateKey(keySize: 2048) }
    ) throws {
        self.issuer = issuer
        self.developer = developer
        self.client = client
        self.clock = clock
        self.rsaKeys = rsaKeys
        self.state = Mutex(State(signers: [try Self.newSigner(rsaKeys)]))
    }

    private static func newSigner(_ rsaKeys: () throws -> RSA.Signing.PrivateKey) throws -> JWSSigner {
        .rs256(try rsaKeys(), keyID: Base64URL.encode(SecureRandom.bytes(count: 6)))
    }

    // MARK: Keys

    /// The published JWK Set, as `/auth/keys` serves it.
    package var jwks: JSONValue {
        state.withLock { state in
            state.keyRequests += 1
            return JWKSet(keys: state.signers.compactMap { try? $0.publicJWK }).json
        }
    }

    /// How many times ``jwks`` was fetched.
    package var keyRequests: Int { state.withLock { $0.keyRequests } }

    /// How many requests reached the token endpoint.
    package var tokenRequests: Int { state.withLock { $0.tokenRequests } }

    /// Publishes a new key and signs with it from now on; with `dropOldest`, the oldest key
    /// leaves the set, as Apple's keys eventually do.
    package func rotateKeys(dropOldest: Bool = false) throws {
        let signer = try Self.newSigner(rsaKeys)
        state.withLock { state in
            if dropOldest { state.signers.removeFirst() }
            state.signers.append(signer)
        }
    }

    private var currentSigner: JWSSigner { state.withLock { $0.signers.last! } }

    /// Signs any claims with the current key, as Apple signs identity tokens and notifications:
    /// for tests that need a token failing exactly one check.
    package func sign(_ claims: JWTClaims, type: String? = nil) throws -> String {
        try currentSigner.sign(claims, type: type)
    }

    // MARK: The device

    /// Mints what the device would get from Apple: an identity token and an authorization code.
    package func authorize(_ request: Authorization) throws -> Credential {
        let now = clock()
        let subject = request.subject ?? Self.newSubject()
        let audience = request.audience ?? developer.clientIDs.first ?? ""
        var claims = identityClaims(subject: subject, audience: audience, email: request.email, isPrivateEmail: request.isPrivateEmail, now: now)
        claims["real_user_status"] = .number(Double(request.realUserStatus))
        claims["auth_time"] = .number(now.timeIntervalSince1970.rounded(.down))
        if let nonce = request.nonce {
            claims["nonce"] = .string(nonce)
            claims["nonce_supported"] = true
        }
        if let transferSubject = request.transferSubject { claims["transfer_sub"] = .string(transferSubject) }
        let code = "c" + Self.token()
        let first = state.withLock { state in
            state.revokedSubjects.remove(subject)
            state.codes[code] = Grant(
                subject: subject, clientID: audience, issuedAt: now, email: request.email, isPrivateEmail: request.isPrivateEmail,
                redirectURI: request.redirectURI)
            return state.authorizedSubjects.insert(subject).inserted
        }
        return Credential(
            identityToken: try currentSigner.sign(claims, type: nil), authorizationCode: code, subject: subject, isFirstAuthorization: first)
    }

    /// The user withdraws the app's authorization in Settings: their tokens stop working. The
    /// matching notification is sent separately (``notify(subject:type:email:)``).
    package func revokeConsent(subject: String) {
        state.withLock { state in
            state.revokedSubjects.insert(subject)
            state.authorizedSubjects.remove(subject)
        }
    }

    /// Every revocation accepted so far, oldest first.
    package var revocations: [Revocation] { state.withLock { $0.revocations } }

    private func identityClaims(subject: String, audience: String, email: String?, isPrivateEmail: Bool, now: Date) -> JWTClaims {
        var claims = JWTClaims()
        claims.issuer = issuer
        claims.audience = [audience]
        claims.subject = subject
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(Self.identityTokenLifetime)
        if let email {
            claims["email"] = .string(email)
            // Apple has sent these as strings and as booleans; the sandbox sends one of each.
            claims["email_verified"] = true
            claims["is_private_email"] = .string(isPrivateEmail ? "true" : "false")
        }
        return claims
    }

    /// An id shaped like Apple's: `000123.<32 hex>.1234`.
    private static func newSubject() -> String {
        let digits = SecureRandom.bytes(count: 16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return "000\(Int.random(in: 100...999)).\(digits).\(Int.random(in: 1000...9999))"
    }

    private static func token() -> String {
        Base64URL.encode(SecureRandom.bytes(count: 32))
    }

    // MARK: The token endpoint

    /// An error body as Apple's endpoints send it: 400 `{"error": "invalid_client"}` and so on.
    package struct EndpointError: Error, Sendable {
        package var code: String
        package var description: String
        var response: HTTPResponse { .json(["error": .string(code), "error_description": .string(description)], status: 400) }
    }

    /// `POST /auth/token`: `authorization_code` exchanges a code once; `refresh_token` validates
    /// a refresh token.
    package func token(_ form: [String: String]) throws(EndpointError) -> JSONValue {
        let now = clock()
        state.withLock { $0.tokenRequests += 1 }
        let clientID = try authenticateClient(form, now: now)
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"] else { throw EndpointError(code: "invalid_request", description: "code is required") }
            let grant: Grant? = state.withLock { state in
                guard var grant = state.codes[code], !grant.used, grant.clientID == clientID,
                    now.timeIntervalSince(grant.issuedAt) < Self.codeLifetime, grant.redirectURI == nil || grant.redirectURI == form["redirect_uri"]
                else { return nil }
                grant.used = true
                state.codes[code] = grant
                return grant
            }
            guard let grant else {
                throw EndpointError(code: "invalid_grant", description: "the code is unknown, used, expired, for another client or another redirect_uri")
            }
            let refreshToken = "r" + Self.token()
            state.withLock { $0.refreshTokens[Array(refreshToken.utf8).sha256] = grant }
            return try tokenResponse(grant, refreshToken: refreshToken, now: now)
        case "refresh_token":
            guard let token = form["refresh_token"] else { throw EndpointError(code: "invalid_request", description: "refresh_token is required") }
            let grant: Grant? = state.withLock { state in
                guard let grant = state.refreshTokens[Array(token.utf8).sha256], grant.clientID == clientID,
                    !state.revokedSubjects.contains(grant.subject)
                else { return nil }
                return grant
            }
            guard let grant else { throw EndpointError(code: "invalid_grant", description: "the refresh token is unknown or revoked") }
            return try tokenResponse(grant, refreshToken: nil, now: now)
        default:
            throw EndpointError(code: "unsupported_grant_type", description: "grant_type must be authorization_code or refresh_token")
        }
    }

    private func tokenResponse(_ grant: Grant, refreshToken: String?, now: Date) throws(EndpointError) -> JSONValue {
        let claims = identityClaims(subject: grant.subject, audience: grant.clientID, email: grant.email, isPrivateEmail: grant.isPrivateEmail, now: now)
        guard let idToken = try? currentSigner.sign(claims, type: nil) else {
            throw EndpointError(code: "server_error", description: "signing failed")
        }
        var body: [String: JSONValue] = [
            "access_token": .string("a" + Self.token()), "token_type": "Bearer", "expires_in": 3600, "id_token": .string(idToken),
        ]
        if let refreshToken { body["refresh_token"] = .string(refreshToken) }
        return .object(body)
    }

    /// `POST /auth/revoke`: 200 whether or not the token was still valid, as Apple answers.
    package func revoke(_ form: [String: String]) throws(EndpointError) {
        let now = clock()
        let clientID = try authenticateClient(form, now: now)
        guard let token = form["token"] else { throw EndpointError(code: "invalid_request", description: "token is required") }
        state.withLock { state in
            let grant = state.refreshTokens.removeValue(forKey: Array(token.utf8).sha256)
            state.revocations.append(Revocation(clientID: clientID, subject: grant?.subject, tokenTypeHint: form["token_type_hint"], time: now))
        }
    }

    /// Checks `client_id` and `client_secret` as Apple does (``ClientSecretRules``).
    private func authenticateClient(_ form: [String: String], now: Date) throws(EndpointError) -> String {
        guard let clientID = form["client_id"], let secret = form["client_secret"] else {
            throw EndpointError(code: "invalid_client", description: "client_id and client_secret are required")
        }
        do {
            try ClientSecretRules(issuer: issuer, developer: developer).check(secret, clientID: clientID, now: now)
        } catch {
            throw EndpointError(code: "invalid_client", description: error.message)
        }
        return clientID
    }

    // MARK: Notifications

    /// Where ``notify(subject:type:email:)`` posts: the server's `/v1/apple/notifications`.
    package func setNotificationURL(_ url: URL) {
        state.withLock { $0.notificationURL = url }
    }

    /// Sends a signed server-to-server notification, as Apple would, and returns the status the
    /// server answered.
    ///
    /// `consent-revoked` and `account-delete` also stop the user's refresh tokens working, as
    /// they do at Apple.
    package func notify(subject: String, type: String, email: String? = nil) async throws -> Int {
        let now = clock()
        guard let url = state.withLock({ $0.notificationURL }) else {
            throw EndpointError(code: "invalid_request", description: "no notification endpoint is set")
        }
        if ["consent-revoked", "account-delete", "account-deleted"].contains(type) { revokeConsent(subject: subject) }
        let audience = state.withLock { state in state.refreshTokens.values.first { $0.subject == subject }?.clientID }
            ?? developer.clientIDs.first ?? ""
        var event: [String: JSONValue] = [
            "type": .string(type), "sub": .string(subject), "event_time": .number((now.timeIntervalSince1970 * 1000).rounded(.down)),
        ]
        if let email {
            event["email"] = .string(email)
            event["is_private_email"] = "true"
        }
        var claims = JWTClaims()
        claims.issuer = issuer
        claims.audience = [audience]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(300)
        claims.tokenID = UUID().uuidString.lowercased()
        // Apple serialises the event object into a string.
        claims["events"] = .string(JSONValue.object(event).serializedString)
        let payload = try currentSigner.sign(claims, type: nil)
        let body = JSONValue.object(["payload": .string(payload)]).serialized
        let response = try await client.send(
            OutboundRequest(url: url, method: .post, headers: ["Content-Type": "application/json"], body: body))
        return response.status
    }
}

/// Apple's rules for a client secret (docs/reference.md "Code exchange"): an ES256 JWT whose header names
/// the team's key in `kid`, with `iss` the team id, `sub` the client id, `aud` Apple's issuer,
/// and a lifetime of at most 15,777,000 seconds (six months).
package struct ClientSecretRules: Sendable {
    /// The longest lifetime Apple accepts, `exp - iat`.
    package static let maximumLifetime: TimeInterval = 15_777_000

    let issuer: String
    let developer: AppleSandbox.Developer

    /// Checks a client secret presented with `clientID`.
    ///
    /// - Throws: ``JOSEError`` naming the failed rule.
    func check(_ secret: String, clientID: String, now: Date) throws(JOSEError) {
        let jws = try JWS(compact: secret)
        guard jws.keyID == developer.keyID else { throw JOSEError(.unknownKey, "kid must be the team's key id") }
        let verifier = JWTVerifier(
            keys: try JWSKeySet([.es256(developer.publicKey, keyID: developer.keyID)]),
            policy: JWTValidationPolicy(
                issuer: developer.teamID, audiences: [issuer], algorithms: [.es256], requiredClaims: ["iss", "iat", "exp", "aud", "sub"]))
        let claims = try verifier.verify(secret, now: now).claims
        guard claims.subject == clientID, developer.clientIDs.contains(clientID) else {
            throw JOSEError(.wrongAudience, "sub must be one of the team's client ids and equal client_id")
        }
        guard let issuedAt = claims.issuedAt, let expiresAt = claims.expiresAt, expiresAt.timeIntervalSince(issuedAt) <= Self.maximumLifetime else {
            throw JOSEError(.expired, "a client secret may live at most 15,777,000 seconds")
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension Array<UInt8> {
    fileprivate var sha256: [UInt8] { HashFunction.sha256.hash(self) }
}
