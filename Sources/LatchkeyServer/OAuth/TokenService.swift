import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// What `/oauth/token` hands a client.
package struct OAuthTokens: Sendable {
    package var accessToken: String
    package var expiresIn: Int
    package var refreshToken: String?
    package var idToken: String?
    package var scope: String
    /// `DPoP` when the access token is bound to the key of the request's proof, else `Bearer`.
    package var tokenType = "Bearer"
}

/// The token endpoint's grants (authorization code with PKCE, refresh token, client
/// credentials), revocation (RFC 7009), introspection (RFC 7662) and userinfo.
package struct TokenService: Sendable {
    let dependencies: Dependencies
    let sessions: SessionService
    let signIns: SignInPipeline
    let refreshTokens: RefreshTokens
    let accessTokens: AccessTokens
    /// Signs ID tokens.
    let keys: SigningKeyRing
    let codes = AuthorizationCodeRepository()
    let sessionRows = SessionRepository()

    var database: any SQLDatabase { dependencies.database }
    var audit: AuditLog { dependencies.audit }
    var clock: @Sendable () -> Date { dependencies.clock }

    // MARK: Grants

    private enum Exchange: Sendable {
        case issued(Session, OAuthGrant, String, AuthorizationCode)
        /// The account was deleted after the code was issued.
        case userGone
        case refused(String)
        /// The code came back after its exchange; `revoked` is what that exchange issued.
        case replayed(revoked: String?)
    }

    /// Exchanges an authorization code (S22): once, within its lifetime, by the client it was
    /// issued to, with the same redirect URI and the PKCE verifier of its challenge.
    ///
    /// The first presentation uses the code up whatever follows (a compare-and-set), so a
    /// stolen code tried with a wrong verifier is gone; a second presentation revokes the
    /// session the first one created.
    package func exchange(
        code: String, redirectURI: String?, verifier: String?, client: OAuthClient, context: RequestContext
    ) async throws -> OAuthTokens {
        guard client.grantTypes.contains(.authorizationCode) else {
            throw AuthError(.unauthorizedClient, "the client may not use the authorization code grant")
        }
        try Self.requireProofIfRegistered(client, context: context)
        // A public client's grant is bound to its proof's key (RFC 9449 §5); a confidential
        // client authenticates its refreshes itself, so only its access tokens are bound.
        var unbound = context
        unbound.dpopKeyThumbprint = nil
        let sessionContext = client.isConfidential ? unbound : context
        let now = clock()
        let hash = code.sha256
        let outcome: Exchange = try await database.write { connection in
            guard code.utf8.count <= 512, let stored = try self.codes.find(hash: hash, on: connection) else {
                return .refused("the code is not known")
            }
            guard try self.codes.use(hash: hash, at: now, on: connection) else {
                var revoked: String?
                if let sessionID = stored.sessionID, try self.sessions.revoke(sessionID, reason: "reused", now: now, on: connection) {
                    revoked = sessionID
                }
                try self.audit.record(
                    .init(time: now, userID: stored.userID, event: .oauthCodeReplayed, outcome: .revoked, ip: context.ip,
                          requestID: context.requestID, details: ["client_id": stored.clientID, "session_id": revoked ?? ""]),
                    on: connection)
                return .replayed(revoked: revoked)
            }
            guard stored.clientID == client.id else { return .refused("the code was issued to another client") }
            guard now < stored.expiresAt else { return .refused("the code has expired") }
            guard redirectURI == stored.redirectURI else { return .refused("redirect_uri differs from the authorization request's") }
            guard let verifier else { return .refused("code_verifier is required") }
            guard PKCE.verifies(verifier, challenge: stored.codeChallenge) else { return .refused("code_verifier does not match the challenge") }
            let grant = OAuthGrant(clientID: client.id, scope: stored.scope, browserSessionID: stored.browserSessionID)
            guard let user = try self.dependencies.users.find(stored.userID, on: connection) else { return .userGone }
            // The browser sign-in behind the code made the second-factor decision.
            let authentication = Authentication(
                user: user, amr: stored.amr, secondFactor: .decided(provedAt: stored.amr.contains("mfa") ? stored.authTime : nil))
            guard case .landed(.api(let session, let refreshToken)) = try self.signIns.admit(
                authentication, target: .grant(grant), context: sessionContext, now: now, on: connection)
            else { preconditionFailure("a decided second factor is never asked for again, and a grant lands in an API session") }
            try self.codes.attach(sessionID: session.id, toCode: hash, on: connection)
            try self.audit.record(
                .init(time: now, userID: stored.userID, event: .oauthCodeExchanged, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["client_id": client.id, "session_id": session.id]),
                on: connection)
            return .issued(session, grant, refreshToken, stored)
        }
        switch outcome {
        case .refused(let description):
            throw AuthError.invalidGrant(.unknown, description)
        case .replayed:
            throw AuthError.invalidGrant(.reused, "the code was already used; what it issued is revoked")
        case .userGone:
            throw AuthError.invalidGrant(.revoked, "the account no longer exists")
        case .issued(var session, let grant, let refreshToken, let stored):
            session.dpopKeyThumbprint = context.dpopKeyThumbprint
            return try await tokens(
                session: session, grant: grant, refreshToken: refreshToken, client: client, authTime: stored.authTime, nonce: stored.nonce,
                now: now)
        }
    }

    /// Rotates a refresh token issued to this client, as `/v1/token` does (S8: reuse revokes the
    /// grant), and answers with a new ID token when the grant has `openid`.
    package func refresh(_ refreshToken: String, client: OAuthClient, context: RequestContext) async throws -> OAuthTokens {
        guard client.grantTypes.contains(.refreshToken) else {
            throw AuthError(.unauthorizedClient, "the client may not use the refresh token grant")
        }
        try Self.requireProofIfRegistered(client, context: context)
        let response = try await refreshTokens.refresh(refreshToken, client: client, context: context)
        // Refreshing with a client refuses a session that is not that client's grant (OAuthGrant.mayRefresh).
        guard let grant = response.session.grant else { throw AuthError.invalidGrant(.unknown, "the refresh token was not issued to this client") }
        let authTime = response.session.secondFactorAt ?? response.session.createdAt
        return try await tokens(
            session: response.session, grant: grant, refreshToken: response.refreshToken, accessToken: response.accessToken, client: client,
            authTime: authTime, nonce: nil, now: clock())
    }

    /// An access token for the client itself (RFC 6749 §4.4): confidential clients only, with
    /// the client's own scopes (never the user scopes `openid`, `profile`, `email`,
    /// `offline_access`), no refresh token and no ID token.
    package func clientCredentials(client: OAuthClient, scope: String?, context: RequestContext) async throws -> OAuthTokens {
        guard client.isConfidential, client.grantTypes.contains(.clientCredentials) else {
            throw AuthError(.unauthorizedClient, "the client may not use the client credentials grant")
        }
        try Self.requireProofIfRegistered(client, context: context)
        let allowed = client.scopes.subtracting(Self.userScopes)
        let requested = scope.map { Set($0.split(separator: " ").map(String.init)) } ?? allowed
        guard requested.isSubset(of: allowed) else { throw AuthError(.invalidScope, "the client may not ask for every scope requested") }
        let granted = requested.sorted().joined(separator: " ")
        var claims = JWTClaims()
        claims.subject = client.id
        claims["client_id"] = .string(client.id)
        claims["scope"] = .string(granted)
        if let key = context.dpopKeyThumbprint { claims["cnf"] = AccessTokens.confirmation(key) }
        let now = clock()
        let token = try await accessTokens.sign(claims, audience: .userinfo, now: now)
        try await audit.record(
            .init(time: now, userID: nil, event: .oauthClientCredentials, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: ["client_id": client.id, "scope": granted]))
        return OAuthTokens(
            accessToken: token, expiresIn: accessTokens.ttl, refreshToken: nil, idToken: nil, scope: granted,
            tokenType: context.dpopKeyThumbprint == nil ? "Bearer" : "DPoP")
    }

    /// A client registered with `--require-dpop` gets only bound tokens.
    ///
    /// - Throws: `invalid_dpop_proof` when the request carried no accepted proof.
    private static func requireProofIfRegistered(_ client: OAuthClient, context: RequestContext) throws {
        guard client.requiresDPoP, context.dpopKeyThumbprint == nil else { return }
        throw AuthError.invalidDPoPProof("this client gets only DPoP-bound tokens; send a DPoP proof")
    }

    /// Scopes about a user, which only a user's grant can carry.
    static let userScopes: Set<String> = ["openid", "profile", "email", "offline_access"]

    /// The token response for a grant's session: a refresh token only with `offline_access` or
    /// for a first-party client, an ID token only with `openid`.
    func tokens(
        session: Session, grant: OAuthGrant, refreshToken: String, accessToken: String? = nil, client: OAuthClient, authTime: Date, nonce: String?,
        now: Date
    ) async throws -> OAuthTokens {
        let access: String
        if let accessToken {
            access = accessToken
        } else {
            access = try await accessTokens.token(for: session, audience: client.isFirstParty ? .api : .userinfo, now: now)
        }
        var idToken: String?
        if grant.scopes.contains("openid") {
            let claims = IDTokenClaims(
                issuer: accessTokens.issuer, subject: session.userID, audience: client.id, authorizedParty: client.id, issuedAt: now,
                expiresAt: now.addingTimeInterval(TimeInterval(accessTokens.ttl)), authTime: authTime, nonce: nonce, amr: session.amr,
                sessionID: grant.browserSessionID, accessToken: access)
            idToken = try keys.signIDToken(claims, algorithm: IDTokenAlgorithm(rawValue: client.idTokenAlgorithm) ?? .rs256)
        }
        let keepsRefreshToken = client.isFirstParty || grant.scopes.contains("offline_access")
        return OAuthTokens(
            accessToken: access, expiresIn: accessTokens.ttl, refreshToken: keepsRefreshToken ? refreshToken : nil, idToken: idToken,
            scope: grant.scope, tokenType: session.dpopKeyThumbprint == nil ? "Bearer" : "DPoP")
    }
}
