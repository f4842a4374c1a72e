import FoundationEssentials
import LatchkeyStore

/// The authorization endpoint's decisions (OAuth 2.1 §4.1, OpenID Connect Core §3.1.2): which
/// hosted page a request needs next, remembered consent, and authorization codes (S22).
package struct AuthorizationService: Sendable {
    /// What the browser sees next for a checked request.
    package enum Step: Sendable, Hashable {
        case signIn
        case signUp
        /// A third-party client asks for scopes the user has not granted it.
        case consent
        /// A device's sign-in (RFC 8628): the user, signed in, allows or denies the device.
        case deviceConsent
        /// Back to the client, with a code or an error.
        case respond(AuthorizationResponse)
    }

    let dependencies: Dependencies
    /// The issuer.
    let accessTokens: AccessTokens
    /// Check an `id_token_hint`.
    let keys: SigningKeyRing
    let browserSessions: BrowserSessionService
    let clients: ClientService
    /// The device authorizations of devices' sign-ins.
    let devices: DeviceAuthorizationService
    let codes = AuthorizationCodeRepository()
    let consents = ConsentRepository()

    package init(
        dependencies: Dependencies, accessTokens: AccessTokens, keys: SigningKeyRing, browserSessions: BrowserSessionService,
        clients: ClientService, devices: DeviceAuthorizationService
    ) {
        self.devices = devices
        self.dependencies = dependencies
        self.accessTokens = accessTokens
        self.keys = keys
        self.browserSessions = browserSessions
        self.clients = clients
    }

    var database: any SQLDatabase { dependencies.database }
    var audit: AuditLog { dependencies.audit }
    var clock: @Sendable () -> Date { dependencies.clock }

    /// The issuer, for the `iss` response parameter (RFC 9207).
    package var issuer: String { accessTokens.issuer }

    /// Checks an authorization request's parameters against its registered client.
    package func check(_ parameters: [String: String]) async throws -> AuthorizationRequest {
        let client: OAuthClient? =
            if let id = parameters["client_id"], !id.isEmpty, id.utf8.count <= 256 { try await clients.client(id: id) } else { nil }
        var request = try AuthorizationRequest.check(parameters, client: client)
        if let id = request.deviceAuthorizationID {
            guard let device = try await devices.pending(id: id), device.clientID == request.client.id else {
                throw AuthorizationFailure.untrusted("This code has expired or has already been answered. Start again on your device.")
            }
            request.scopes = device.scope.split(separator: " ").map(String.init)
            return request
        }
        // OpenID Connect Core §3.1.2.1: id_token_hint is an ID token this server issued (an
        // expired one will do), naming the user the client expects; anything else is
        // invalid_request, told to the client now that its redirect URI is proven.
        if let hint = parameters["id_token_hint"] {
            guard let named = try await idTokenHint(hint) else {
                throw AuthorizationFailure.toClient(error(request, "invalid_request", "id_token_hint is not an ID token this server issued"))
            }
            request.hintedUserID = named.userID
        }
        return request
    }

    /// The next step for a checked request, given the browser's signed-in session (if any).
    ///
    /// `prompt=login` and `max_age` ask for a sign-in now; `prompt=none` never shows a page and
    /// answers `login_required` or `consent_required` instead; a first-party client never asks
    /// for consent, a third-party one asks whenever it wants a scope not granted before, or
    /// always with `prompt=consent`.
    package func next(_ request: AuthorizationRequest, browserSession: BrowserSession?, context: RequestContext) async throws -> Step {
        let now = clock()
        let fresh = browserSession.map { session in
            !request.prompts.contains(.login) && !request.prompts.contains(.create)
                && request.maxAge.map { now.timeIntervalSince(session.authTime) <= TimeInterval($0) } ?? true
        }
        guard let browserSession, fresh == true else {
            if request.prompts.contains(.none) { return .respond(error(request, "login_required", "the user is not signed in")) }
            return request.prompts.contains(.create) ? .signUp : .signIn
        }
        // S46: a device is allowed only by the user's own answer on the device consent page,
        // first-party client or not, consent given before or not (RFC 8628 §5.4).
        if request.deviceAuthorizationID != nil { return .deviceConsent }
        if let refusal = hintRefusal(request, browserSession: browserSession) { return .respond(refusal) }
        if try await needsConsent(request, userID: browserSession.userID) {
            if request.prompts.contains(.none) { return .respond(error(request, "consent_required", "the user has not granted these scopes")) }
            return .consent
        }
        return .respond(try await issueCode(request, browserSession: browserSession, context: context))
    }

    /// The user's answer on the consent page: `allow` remembers the scopes and issues a code,
    /// anything else answers `access_denied`.
    package func decide(
        allow: Bool, request: AuthorizationRequest, browserSession: BrowserSession, context: RequestContext
    ) async throws -> AuthorizationResponse {
        // The consent page's session may since have been replaced by another user's.
        if let refusal = hintRefusal(request, browserSession: browserSession) { return refusal }
        guard allow else {
            try await audit.record(
                .init(time: clock(), userID: browserSession.userID, event: .consentGranted, outcome: .failure, ip: context.ip,
                      requestID: context.requestID, details: ["client_id": request.client.id, "scope": request.scope]))
            return error(request, "access_denied", "the user did not allow the request")
        }
        return try await issueCode(request, browserSession: browserSession, rememberingConsent: true, context: context)
    }

    /// `login_required` when `id_token_hint` names another user than the one signed in: the
    /// client expects that user, and never gets a code for someone else (OpenID Connect Core
    /// §3.1.2.1).
    func hintRefusal(_ request: AuthorizationRequest, browserSession: BrowserSession) -> AuthorizationResponse? {
        guard let hinted = request.hintedUserID, hinted != browserSession.userID else { return nil }
        return error(request, "login_required", "the signed-in user is not the one id_token_hint names")
    }

    /// Whether the user must be asked before the client gets these scopes.
    func needsConsent(_ request: AuthorizationRequest, userID: String) async throws -> Bool {
        if request.client.isFirstParty { return false }
        if request.prompts.contains(.consent) { return true }
        let granted = try await database.read { connection in
            try self.consents.scopes(userID: userID, clientID: request.client.id, on: connection)
        }
        return !(granted.map { Set(request.scopes).isSubset(of: $0) } ?? false)
    }

    /// Stores a new authorization code for the signed-in user (and, after the consent page, the
    /// consent), with its audit entries, and returns the response that carries it.
    private func issueCode(
        _ request: AuthorizationRequest, browserSession: BrowserSession, rememberingConsent: Bool = false, context: RequestContext
    ) async throws -> AuthorizationResponse {
        let now = clock()
        let code = Identifiers.secret()
        let stored = AuthorizationCode(
            hash: code.sha256, clientID: request.client.id, userID: browserSession.userID, browserSessionID: browserSession.id,
            redirectURI: request.redirectURI, codeChallenge: request.codeChallenge, scope: request.scope, nonce: request.nonce,
            authTime: browserSession.authTime, amr: browserSession.amr, createdAt: now,
            expiresAt: now.addingTimeInterval(AuthorizationCode.lifetime))
        try await database.write { connection in
            if rememberingConsent {
                try self.consents.remember(
                    userID: browserSession.userID, clientID: request.client.id, scopes: Set(request.scopes), at: now, on: connection)
                try self.audit.record(
                    .init(time: now, userID: browserSession.userID, event: .consentGranted, outcome: .success, ip: context.ip,
                          requestID: context.requestID, details: ["client_id": request.client.id, "scope": request.scope]),
                    on: connection)
            }
            try self.codes.insert(stored, on: connection)
            try self.audit.record(
                .init(time: now, userID: browserSession.userID, event: .oauthCodeIssued, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["client_id": request.client.id, "scope": request.scope]),
                on: connection)
        }
        return AuthorizationResponse(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state, result: .code(code))
    }

    private func error(_ request: AuthorizationRequest, _ error: String, _ description: String) -> AuthorizationResponse {
        AuthorizationResponse(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state, result: .error(error, description))
    }
}
