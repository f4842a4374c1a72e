import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// Who asked, for audit entries and the sessions list.
package struct RequestContext: Sendable {
    package var ip: String?
    package var userAgent: String?
    package var requestID: String?

    package init(ip: String? = nil, userAgent: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.requestID = requestID
    }
}

/// The key table has no active key: a broken deployment, answered as a plain 500.
struct NoActiveSigningKey: Error {}

/// What every sign-in, refresh and step-up returns (docs/reference.md "Token response").
package struct TokenResponse: Sendable {
    package var accessToken: String
    package var expiresIn: Int
    package var refreshToken: String
    package var session: Session
    package var user: User
    package var created: Bool
}

/// Where a sign-in lands: a `/v1` session with tokens, or a browser session of the hosted pages.
package enum SignInTarget: Sendable {
    case api
    /// A browser session; `replacing` is the token of the browser session the request's cookie
    /// carried, which the sign-in ends in its own transaction (ASVS 5.0 V7.2.4, V7.4.1).
    case browser(replacing: String?)
}

/// A completed sign-in.
package enum SignedIn: Sendable {
    case api(TokenResponse)
    /// The browser session and the token for its cookie.
    case browser(BrowserSession, token: String)

    /// The tokens of a sign-in whose target was ``SignInTarget/api``.
    var tokens: TokenResponse {
        guard case .api(let tokens) = self else { preconditionFailure("an API sign-in lands in an API session") }
        return tokens
    }
}

/// Sessions and their tokens: creation, refresh-token rotation with reuse detection, expiry and
/// revocation (docs/security.md S7–S9), each written with its audit entry in one transaction (S27, S28).
package final class SessionService: Sendable {
    let database: any SQLDatabase
    let users: UserRepository
    let repository = SessionRepository()
    let audit: AuditLog
    let keys: SigningKeyRing
    /// Seals a rotated token's successor for the reuse grace window.
    let masterKey: MasterKey
    let metrics: Metrics
    let clock: @Sendable () -> Date
    let accessTokenTTL: Int
    let idleTTL: TimeInterval
    let absoluteTTL: TimeInterval
    /// `refresh_token_reuse_grace`: how long a rotated token may still get its unused successor
    /// back (S8); 0 turns the grace off.
    let reuseGrace: TimeInterval
    /// The hosted pages' sign-ins, which end with the user's other sessions (S29).
    package let browserSessions: BrowserSessionService
    /// The issuer and audience; known only once the server has bound its port.
    let identity: Mutex<(issuer: String, audience: String)>
    /// Recent answers to "whose live session is this?" (`nil`: nobody's, it has ended or never
    /// existed), so bearer checks rarely touch the database.
    private let liveness = Mutex<[String: (owner: String?, checkedAt: Date)]>([:])

    /// How long another process's revocation may take to reach this one's bearer checks.
    static let livenessTTL: TimeInterval = 1

    init(
        database: any SQLDatabase, keys: SigningKeyRing, masterKey: MasterKey, metrics: Metrics, configuration: Configuration,
        clock: @escaping @Sendable () -> Date
    ) {
        self.database = database
        self.users = UserRepository(database: database)
        self.audit = AuditLog(database: database)
        self.keys = keys
        self.masterKey = masterKey
        self.metrics = metrics
        self.clock = clock
        self.accessTokenTTL = configuration.accessTokenTTL
        self.idleTTL = TimeInterval(configuration.refreshTokenIdleTTL)
        self.absoluteTTL = TimeInterval(configuration.refreshTokenAbsoluteTTL)
        self.reuseGrace = TimeInterval(configuration.refreshTokenReuseGrace)
        self.browserSessions = BrowserSessionService(database: database, clock: clock, lifetime: TimeInterval(configuration.browserSessionTTL))
        self.identity = Mutex((configuration.publicURL ?? "", configuration.audience ?? configuration.publicURL ?? ""))
    }

    /// Sets the issuer (and the default audience) once the public URL is known.
    func setPublicURL(_ publicURL: String, audience: String?) {
        identity.withLock { $0 = (publicURL, audience ?? publicURL) }
    }

    var issuer: String { identity.withLock { $0.issuer } }
    var audience: String { identity.withLock { $0.audience } }

    // MARK: Creating

    /// Creates a session and its first refresh token inside the caller's transaction, so a
    /// sign-in that fails later leaves no session behind (S28).
    ///
    /// `secondFactorAt` is set when the sign-in included a second factor (MFA at sign-in);
    /// `grant` when an OAuth client's authorization code is exchanged for it.
    func createSession(
        userID: String, amr: [String], secondFactorAt: Date? = nil, grant: OAuthGrant? = nil, context: RequestContext, now: Date,
        on connection: any SQLConnection
    ) throws -> (Session, String) {
        let session = Session(
            id: Identifiers.make("ses"), userID: userID, amr: amr, createdAt: now, lastUsedAt: now,
            idleExpiresAt: now.addingTimeInterval(min(idleTTL, absoluteTTL)), absoluteExpiresAt: now.addingTimeInterval(absoluteTTL),
            secondFactorAt: secondFactorAt, userAgent: context.userAgent, ip: context.ip, grant: grant)
        let refreshToken = Identifiers.secret()
        try repository.insert(session, on: connection)
        try repository.insertToken(hash: refreshToken.sha256, sessionID: session.id, at: now, on: connection)
        var details = ["session_id": session.id, "amr": amr.joined(separator: " ")]
        if let grant {
            details["client_id"] = grant.clientID
            details["scope"] = grant.scope
        }
        try audit.record(
            .init(time: now, userID: userID, event: .sessionCreated, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: details),
            on: connection)
        return (session, refreshToken)
    }

    /// Starts a session for a user in a transaction of its own and returns the token response.
    package func startSession(userID: String, amr: [String], context: RequestContext, created: Bool = false) async throws -> TokenResponse {
        let now = clock()
        let (session, refreshToken, user) = try await database.write { connection in
            guard let user = try self.users.find(userID, on: connection) else { throw AuthError.notFound("no such user") }
            let (session, refreshToken) = try self.createSession(userID: userID, amr: amr, context: context, now: now, on: connection)
            return (session, refreshToken, user)
        }
        return try await tokenResponse(session: session, refreshToken: refreshToken, user: user, created: created, now: now)
    }

    /// What a sign-in method established inside the sign-in transaction.
    struct FirstFactor: Sendable {
        /// The user who proved the factor (perhaps created just now).
        var user: User
        /// Whether this sign-in created the account.
        var created: Bool
        /// The `amr` value of the method: `apple`, `pwd`.
        var method: String
    }

    /// Every sign-in method ends here: `authenticate` runs inside one write transaction with the
    /// session it leads to, so a failure anywhere leaves neither a half-made user nor a session
    /// (S28). Sign-ins are counted in `/metrics` by method and outcome.
    ///
    /// A user with a second factor gets `403 mfa_required` with an `mfa_token` instead of a
    /// session (``beginSecondFactor(after:context:now:on:)``), so every method inherits MFA,
    /// whether it lands in an API session or a hosted page's browser session.
    func signIn(
        method: String, context: RequestContext, target: SignInTarget,
        authenticate: @escaping @Sendable (any SQLConnection, Date) throws -> FirstFactor
    ) async throws -> SignedIn {
        enum Outcome: Sendable {
            case signedIn(FirstFactor, Landing)
            case secondFactorRequired(AuthError)
        }
        let now = clock()
        let outcome: Outcome
        do {
            outcome = try await database.write { connection in
                let factor = try authenticate(connection, now)
                if let mfaRequired = try self.beginSecondFactor(after: factor, context: context, now: now, on: connection) {
                    return .secondFactorRequired(mfaRequired)
                }
                let landing = try self.land(
                    target, userID: factor.user.id, amr: [factor.method], secondFactorAt: nil, context: context, now: now, on: connection)
                return .signedIn(factor, landing)
            }
        } catch {
            metrics.increment(.signIns, ["method": method, "outcome": "failure"])
            throw error
        }
        switch outcome {
        case .secondFactorRequired(let mfaRequired):
            metrics.increment(.signIns, ["method": method, "outcome": "mfa_required"])
            throw mfaRequired
        case .signedIn(let factor, let landing):
            metrics.increment(.signIns, ["method": method, "outcome": "success"])
            return try await finish(landing, user: factor.user, created: factor.created, now: now)
        }
    }

    /// ``signIn(method:context:target:authenticate:)`` into an API session.
    func signIn(
        method: String, context: RequestContext, authenticate: @escaping @Sendable (any SQLConnection, Date) throws -> FirstFactor
    ) async throws -> TokenResponse {
        try await signIn(method: method, context: context, target: .api, authenticate: authenticate).tokens
    }

    /// What a sign-in created inside its transaction, before the access token is signed.
    enum Landing: Sendable {
        case api(Session, refreshToken: String)
        case browser(BrowserSession, token: String)
    }

    /// Creates what a completed sign-in leads to, inside the sign-in transaction.
    func land(
        _ target: SignInTarget, userID: String, amr: [String], secondFactorAt: Date?, context: RequestContext, now: Date,
        on connection: any SQLConnection
    ) throws -> Landing {
        switch target {
        case .api:
            let (session, refreshToken) = try createSession(
                userID: userID, amr: amr, secondFactorAt: secondFactorAt, context: context, now: now, on: connection)
            return .api(session, refreshToken: refreshToken)
        case .browser(let replacing):
            let (session, token) = try browserSessions.start(
                userID: userID, amr: amr, replacing: replacing, context: context, now: now, on: connection)
            return .browser(session, token: token)
        }
    }

    /// The answer to a sign-in, once its transaction has committed.
    func finish(_ landing: Landing, user: User, created: Bool, now: Date) async throws -> SignedIn {
        switch landing {
        case .api(let session, let refreshToken):
            .api(try await tokenResponse(session: session, refreshToken: refreshToken, user: user, created: created, now: now))
        case .browser(let session, let token):
            .browser(session, token: token)
        }
    }

    /// Signs an access token for the session and assembles the token response.
    func tokenResponse(
        session: Session, refreshToken: String, user: User, created: Bool, audience: TokenAudience = .api, now: Date
    ) async throws -> TokenResponse {
        TokenResponse(
            accessToken: try await accessToken(for: session, audience: audience, now: now), expiresIn: accessTokenTTL,
            refreshToken: refreshToken, session: session, user: user, created: created)
    }

    /// Whom an access token is for, its `aud`.
    package enum TokenAudience: Sendable {
        /// Latchkey's own API (`/v1`, and userinfo): sign-ins and first-party OAuth clients.
        case api
        /// Only the userinfo endpoint: what a third-party OAuth client gets, so that its tokens
        /// can never call `/v1` (delete the account, list sessions) on the user's behalf.
        case userinfo
    }

    /// The `aud` value of each ``TokenAudience``.
    func audienceValue(_ audience: TokenAudience) -> String {
        switch audience {
        case .api: self.audience
        case .userinfo: issuer + "/oauth/userinfo"
        }
    }

    /// An access token exactly as docs/reference.md describes: `typ: at+jwt` (RFC 9068), ES256,
    /// `kid`; an OAuth grant's also carries `client_id` and `scope`.
    func accessToken(for session: Session, audience: TokenAudience = .api, now: Date) async throws -> String {
        var claims = JWTClaims()
        claims.subject = session.userID
        claims["sid"] = .string(session.id)
        claims["amr"] = .array(session.amr.map(JSONValue.string))
        if let grant = session.grant {
            claims["client_id"] = .string(grant.clientID)
            claims["scope"] = .string(grant.scope)
        }
        return try await signAccessToken(claims, audience: audience, now: now)
    }

    /// Completes and signs access-token claims: `iss`, `aud`, `iat`, `exp`, `jti`.
    func signAccessToken(_ claims: JWTClaims, audience: TokenAudience, now: Date) async throws -> String {
        guard let signer = try await keys.current(now: now).signer else {
            throw NoActiveSigningKey()
        }
        var claims = claims
        claims.issuer = issuer
        claims.audience = [audienceValue(audience)]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(TimeInterval(accessTokenTTL))
        claims.tokenID = Identifiers.secret()
        return try signer.sign(claims, type: "at+jwt")
    }

    /// The claims of an access token this server signed: ES256, `typ: at+jwt`, this issuer,
    /// one of `audiences`, not expired, with `sub` (and `sid` when `requiringSession`). A token
    /// the current keys already verified skips the parse and the signature check; the rest is
    /// checked every time (see ``VerifiedJWTCache``).
    ///
    /// - Throws: ``AuthError`` 401 `invalid_token` for anything else. Whether the session is
    ///   still live is the caller's question (``isLive(_:of:now:)``).
    func verifyAccessToken(
        _ token: String, audiences: [TokenAudience], requiringSession: Bool = true, now: Date
    ) async throws -> JWTClaims {
        let snapshot = try await keys.current(now: now)
        let policy = JWTValidationPolicy(
            issuer: issuer, audiences: Set(audiences.map(audienceValue)), algorithms: [.es256],
            requiredClaims: requiringSession ? ["exp", "iat", "sub", "sid"] : ["exp", "iat", "sub"], type: .exactly("at+jwt"))
        do {
            return try JWTVerifier(keys: snapshot.verificationKeys, policy: policy, cache: snapshot.verifiedAccessTokens)
                .verify(token, now: now).claims
        } catch {
            throw AuthError.invalidToken("the access token is not valid (\(error.code))")
        }
    }

    // MARK: Refreshing

    private enum RefreshOutcome: Sendable {
        case rotated(Session, String, User)
        /// A retired token within the reuse grace: its unused successor, handed out again.
        case replayed(Session, String, User)
        case refused(AuthError.Reason, String)
        /// A retired token came back; `revokedNow` when this presentation revoked the session.
        case reused(revokedNow: Bool)
    }

    /// Rotates a refresh token (S8): the presented token retires and a new one is issued.
    ///
    /// A token that was already retired is reuse: the whole session is revoked and logged, and
    /// the answer is `invalid_grant` with reason `reused`. Retiring the presented token is a
    /// compare-and-set on its hash, so of concurrent presentations of one token exactly one
    /// rotates it, on any engine and across processes.
    ///
    /// One exception, the reuse grace: within ``reuseGrace`` of its rotation, and only while its
    /// successor has never been used, a retired token gets that same successor back (with a new
    /// access token), so a client whose answer was lost, or an app and its extension racing,
    /// keeps its session. Nothing rotates then: the session still has exactly one live token.
    ///
    /// `client` is the OAuth client that authenticated at `/oauth/token`, `nil` at `/v1/token`.
    /// A token refreshes only where it was issued: an OAuth grant's at its own client's token
    /// endpoint (or at `/v1/token` when that client is first-party and public, as the SDK's web
    /// sign-in is), a `/v1` session's only at `/v1/token`.
    package func refresh(_ refreshToken: String, client: OAuthClient? = nil, context: RequestContext) async throws -> TokenResponse {
        let now = clock()
        let hash = refreshToken.sha256
        let audience: TokenAudience = client.map { $0.isFirstParty ? .api : .userinfo } ?? .api
        let outcome: RefreshOutcome = try await database.write { connection in
            guard let presented = try self.repository.presentedToken(hash: hash, on: connection) else {
                // The account may be gone with its sessions; a tombstone says so (docs/reference.md reasons).
                if let ended = try self.repository.endedReason(tokenHash: hash, on: connection) {
                    return .refused(AuthError.Reason(rawValue: ended), "the account was deleted")
                }
                return .refused(.unknown, "the refresh token is not known")
            }
            guard try OAuthGrant.mayRefresh(presented.session.grant, presentedBy: client, on: connection) else {
                // An ended session says why it ended whoever asks; a live one is not this caller's to refresh.
                if presented.session.revokedAt != nil, let stored = presented.session.revokedReason, Self.wireReasons.contains(stored) {
                    return .refused(AuthError.Reason(rawValue: stored), "the session has ended")
                }
                return .refused(.unknown, "the refresh token was not issued to this client")
            }
            var session = presented.session
            func record(_ event: AuditEvent, _ outcome: AuditOutcome, _ details: [String: String] = [:]) throws {
                try self.audit.record(
                    .init(time: now, userID: session.userID, event: event, outcome: outcome, ip: context.ip, requestID: context.requestID,
                          details: details.merging(["session_id": session.id]) { $1 }),
                    on: connection)
            }
            /// Reuse revokes the session; only the presentation that revoked it records and counts it.
            func reused() throws -> RefreshOutcome {
                guard try self.revoke(session.id, reason: "reused", now: now, on: connection) else { return .reused(revokedNow: false) }
                try record(.sessionReuseDetected, .revoked)
                return .reused(revokedNow: true)
            }
            if presented.retired {
                guard let successor = try self.graceSuccessor(of: presented, hash: hash, now: now, on: connection) else { return try reused() }
                try record(.sessionRefreshReplayed, .success)
                guard let user = presented.user else {
                    return .refused(.revoked, "the account no longer exists")
                }
                return .replayed(session, successor, user)
            }
            if session.revokedAt != nil {
                let stored = session.revokedReason ?? "revoked"
                return .refused(AuthError.Reason(rawValue: Self.wireReasons.contains(stored) ? stored : "revoked"), "the session has ended")
            }
            if now >= session.expiresAt {
                if try self.revoke(session.id, reason: "expired", now: now, on: connection) {
                    try record(.sessionExpired, .revoked)
                }
                return .refused(.expired, "the session has expired")
            }
            let newToken = Identifiers.secret()
            // Read above as live, but another request may have rotated it since: the retirement
            // itself decides, and losing it is reuse like any other second presentation.
            let kept = try self.sealForGrace(newToken, now: now)
            guard try self.repository.retire(tokenHash: hash, replacedBy: newToken.sha256, keeping: kept, at: now, on: connection) else {
                return try reused()
            }
            try self.issue(newToken, to: &session, now: now, on: connection)
            try record(.sessionRefreshed, .success)
            guard let user = presented.user else {
                return .refused(.revoked, "the account no longer exists")
            }
            return .rotated(session, newToken, user)
        }
        switch outcome {
        case .rotated(let session, let token, let user):
            return try await tokenResponse(session: session, refreshToken: token, user: user, created: false, audience: audience, now: now)
        case .replayed(let session, let token, let user):
            metrics.increment(.refreshReplays)
            return try await tokenResponse(session: session, refreshToken: token, user: user, created: false, audience: audience, now: now)
        case .reused(let revokedNow):
            if revokedNow { metrics.increment(.refreshReuse) }
            throw AuthError.invalidGrant(.reused, "the refresh token was already used; the session is revoked")
        case .refused(let reason, let description):
            throw AuthError.invalidGrant(reason, description)
        }
    }

    /// Retires the session's live refresh token, issues its successor and extends the idle
    /// lifetime, inside the caller's transaction (S8): what a step-up does.
    ///
    /// - Returns: The new refresh token.
    /// - Throws: ``AuthError/Code/conflict`` when the session has no live token to retire: a
    ///   concurrent refresh or step-up rotated it first. The caller's transaction must roll back.
    func rotateRefreshToken(of session: inout Session, now: Date, on connection: any SQLConnection) throws -> String {
        let newToken = Identifiers.secret()
        let kept = try sealForGrace(newToken, now: now)
        guard try repository.retireLiveToken(sessionID: session.id, replacedBy: newToken.sha256, keeping: kept, at: now, on: connection) else {
            throw AuthError.conflict("the session's refresh token was rotated by a concurrent request; try again")
        }
        try issue(newToken, to: &session, now: now, on: connection)
        return newToken
    }

    // MARK: The reuse grace (S8)

    /// The sealing context of a successor: bound to its own hash, so a sealed value moved to
    /// another row does not open.
    static func successorContext(_ successorHash: [UInt8]) -> String {
        "refresh_tokens/successor/" + Base64URL.encode(successorHash)
    }

    /// The successor sealed for the grace window, or `nil` when the grace is off.
    private func sealForGrace(_ successor: String, now: Date) throws -> SessionRepository.SealedSuccessor? {
        guard reuseGrace > 0 else { return nil }
        let sealed = try masterKey.seal(Array(successor.utf8), context: Self.successorContext(successor.sha256))
        return .init(sealed: sealed, expiresAt: now.addingTimeInterval(reuseGrace))
    }

    /// The successor a retired token gets back, if the grace holds: the session is live, the
    /// window is open, and the successor is still unused at this instant (a compare-and-set that
    /// serializes with the successor's own rotation, so the two cannot both win). A window found
    /// over drops the sealed successor.
    private func graceSuccessor(
        of presented: SessionRepository.PresentedToken, hash: [UInt8], now: Date, on connection: any SQLConnection
    ) throws -> String? {
        guard let sealed = presented.sealedSuccessor, let expiresAt = presented.successorExpiresAt,
              let successorHash = presented.replacedBy
        else { return nil }
        guard now < expiresAt else {
            try repository.dropSealedSuccessor(tokenHash: hash, on: connection)
            return nil
        }
        guard presented.session.revokedAt == nil, now < presented.session.expiresAt,
              try repository.holdLive(tokenHash: successorHash, on: connection)
        else { return nil }
        let successor = String(decoding: try masterKey.unseal(sealed, context: Self.successorContext(successorHash)), as: UTF8.self)
        return successor.sha256 == successorHash ? successor : nil
    }

    /// Stores `token` as the session's live refresh token (its predecessor already retired) and
    /// extends the idle lifetime, never past the absolute one.
    private func issue(_ token: String, to session: inout Session, now: Date, on connection: any SQLConnection) throws {
        try repository.insertToken(hash: token.sha256, sessionID: session.id, at: now, on: connection)
        session.lastUsedAt = now
        session.idleExpiresAt = min(now.addingTimeInterval(idleTTL), session.absoluteExpiresAt)
        try repository.touch(sessionID: session.id, at: now, idleExpiresAt: session.idleExpiresAt, on: connection)
    }

    /// Revocation reasons stored in `sessions.revoked_reason` that the wire reports as such.
    static let wireReasons: Set<String> = ["consent_revoked", "account_deleted", "transferred", "expired", "reused"]

    // MARK: Revoking

    /// Marks a session revoked inside the caller's transaction, unless it already is; later
    /// refreshes fail and bearer checks in this process see it at once.
    ///
    /// - Returns: whether this call revoked it (false: it had ended already, or does not exist).
    @discardableResult
    func revoke(_ sessionID: String, reason: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        let revoked = try repository.revoke(sessionID: sessionID, reason: reason, at: now, on: connection)
        liveness.withLock { $0[sessionID] = (nil, now) }
        return revoked
    }

    /// Ends sessions of a user (`logout`, `DELETE /v1/sessions/{id}`, `sessions revoke`), with an
    /// audit entry each.
    ///
    /// - Parameters:
    ///   - userID: Whose sessions; `nil` for an operator revoking by session id alone.
    ///   - sessionIDs: Which sessions; `nil` for all of the user's live sessions.
    /// - Returns: The sessions this call revoked; one revoked concurrently by another request
    ///   is that request's, and is neither returned nor audited twice.
    @discardableResult
    package func revokeSessions(userID: String?, sessionIDs: [String]?, reason: String, context: RequestContext) async throws -> [String] {
        let now = clock()
        return try await database.write { connection in
            guard let sessionIDs else {
                guard let userID else { return [] }
                return try self.revokeAll(userID: userID, reason: reason, context: context, now: now, on: connection)
            }
            var sessions = [Session]()
            for id in sessionIDs {
                if let session = try self.repository.find(id: id, on: connection), userID == nil || session.userID == userID {
                    sessions.append(session)
                }
            }
            return try self.revoke(sessions, reason: reason, context: context, now: now, on: connection)
        }
    }

    /// Ends every live session of a user but `kept` inside the caller's transaction, with an
    /// audit entry each (consent revoked, password changed or reset, account deleted), and every
    /// browser session of the user, `kept` or not.
    ///
    /// - Returns: The sessions this call revoked.
    @discardableResult
    func revokeAll(
        userID: String, except kept: String? = nil, reason: String, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> [String] {
        let sessions = try repository.unrevoked(userID: userID, on: connection).filter { $0.id != kept }
        // The hosted pages' sessions end with them, all of them (S29).
        try BrowserSessionService.endAll(userID: userID, reason: reason, context: context, now: now, audit: audit, on: connection)
        return try revoke(sessions, reason: reason, context: context, now: now, on: connection)
    }

    /// Revokes each session that is still unrevoked and audits exactly those.
    private func revoke(_ sessions: [Session], reason: String, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> [String] {
        var revoked = [String]()
        for session in sessions {
            guard try revoke(session.id, reason: reason, now: now, on: connection) else { continue }
            try audit.record(
                .init(time: now, userID: session.userID, event: .sessionRevoked, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["session_id": session.id, "reason": reason]),
                on: connection)
            revoked.append(session.id)
        }
        return revoked
    }

    /// Revokes the session a refresh token belongs to (RFC 7009); unknown tokens are ignored.
    package func revoke(refreshToken: String, context: RequestContext) async throws {
        let hash = refreshToken.sha256
        let sessionID = try await database.read { connection in
            try self.repository.sessionID(tokenHash: hash, on: connection)
        }
        if let sessionID {
            try await revokeSessions(userID: nil, sessionIDs: [sessionID], reason: "revoked", context: context)
        }
    }

    // MARK: Reading

    /// Whether a session is live and belongs to `userID`, answered from a cache at most
    /// ``livenessTTL`` old.
    ///
    /// The owner is part of the answer because an access token's `sid` and `sub` are two claims:
    /// a token pairing one user's subject with another user's session must not pass (S9).
    func isLive(_ sessionID: String, of userID: String, now: Date) async throws -> Bool {
        if let cached = liveness.withLock({ $0[sessionID] }), now.timeIntervalSince(cached.checkedAt) < Self.livenessTTL {
            return cached.owner == userID
        }
        let session = try await self.session(sessionID)
        let owner = session.flatMap { $0.isLive(at: now) ? $0.userID : nil }
        liveness.withLock { cache in
            if cache.count > 100_000 { cache.removeAll(keepingCapacity: true) }
            cache[sessionID] = (owner, now)
        }
        return owner == userID
    }

    /// A user's sessions, newest first; revoked and expired ones are left out.
    package func sessions(userID: String) async throws -> [Session] {
        let now = clock()
        return try await database.read { connection in
            try self.repository.unrevoked(userID: userID, on: connection).filter { $0.isLive(at: now) }
        }
    }

    /// One session by id, whatever its state.
    package func session(_ id: String) async throws -> Session? {
        try await database.read { connection in
            try self.repository.find(id: id, on: connection)
        }
    }
}
