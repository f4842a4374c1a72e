import FoundationEssentials
import LatchkeyStore

/// Sessions: creating them inside a sign-in's transaction, ending them (one, some, or all of a
/// user's, with their browser sessions), listing them, and the second-factor time a session
/// proved (docs/security.md S7–S9). Each change is written with its audit entry in one
/// transaction (S27, S28).
///
/// Signing in is ``SignInPipeline``'s, access tokens are ``AccessTokens``', refresh-token
/// rotation is ``RefreshTokens``'.
package struct SessionService: Sendable {
    let dependencies: Dependencies
    /// Told of every session that ends, so bearer checks in this process refuse it at once.
    let accessTokens: AccessTokens
    /// The hosted pages' sessions, which end with the user's other sessions (S29).
    let browserSessions: BrowserSessionService
    let idleTTL: TimeInterval
    let absoluteTTL: TimeInterval
    let sessionRows = SessionRepository()

    init(dependencies: Dependencies, accessTokens: AccessTokens, browserSessions: BrowserSessionService, configuration: Configuration) {
        self.dependencies = dependencies
        self.accessTokens = accessTokens
        self.browserSessions = browserSessions
        self.idleTTL = TimeInterval(configuration.refreshTokenIdleTTL)
        self.absoluteTTL = TimeInterval(configuration.refreshTokenAbsoluteTTL)
    }

    // MARK: Creating

    /// Creates a session and its first refresh token inside the caller's transaction, so a
    /// sign-in that fails later leaves no session behind (S28).
    ///
    /// `secondFactorAt` is set when the sign-in included a second factor (MFA at sign-in);
    /// `grant` when an OAuth client's authorization code is exchanged for it. A DPoP proof of
    /// the request (`context.dpopKeyThumbprint`) binds the session's refresh-token family to
    /// its key (RFC 9449 §5).
    func createSession(
        userID: String, amr: [String], secondFactorAt: Date? = nil, grant: OAuthGrant? = nil, context: RequestContext, now: Date,
        on connection: any SQLConnection
    ) throws -> (Session, String) {
        let session = Session(
            id: Identifiers.make("ses"), userID: userID, amr: amr, createdAt: now, lastUsedAt: now,
            idleExpiresAt: now.addingTimeInterval(min(idleTTL, absoluteTTL)), absoluteExpiresAt: now.addingTimeInterval(absoluteTTL),
            secondFactorAt: secondFactorAt, userAgent: context.userAgent, ip: context.ip, grant: grant,
            dpopKeyThumbprint: context.dpopKeyThumbprint)
        let refreshToken = Identifiers.secret()
        try sessionRows.insert(session, on: connection)
        try sessionRows.insertToken(hash: refreshToken.sha256, sessionID: session.id, at: now, on: connection)
        var details = ["session_id": session.id, "amr": amr.joined(separator: " ")]
        if let grant {
            details["client_id"] = grant.clientID
            details["scope"] = grant.scope
        }
        if let key = session.dpopKeyThumbprint { details["dpop_jkt"] = key }
        try dependencies.record(.sessionCreated, .success, userID: userID, context: context, now: now, details: details, on: connection)
        return (session, refreshToken)
    }

    /// Revocation reasons stored in `sessions.revoked_reason` that the wire reports as such.
    static let wireReasons: Set<String> = ["consent_revoked", "account_deleted", "account_disabled", "transferred", "expired", "reused"]

    // MARK: Ending

    /// Marks a session revoked inside the caller's transaction, unless it already is; later
    /// refreshes fail and bearer checks in this process see it at once.
    ///
    /// - Returns: whether this call revoked it (false: it had ended already, or does not exist).
    @discardableResult
    func revoke(_ sessionID: String, reason: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        let revoked = try sessionRows.revoke(sessionID: sessionID, reason: reason, at: now, on: connection)
        accessTokens.sessionEnded(sessionID, at: now)
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
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            guard let sessionIDs else {
                guard let userID else { return [] }
                return try self.revokeAll(userID: userID, reason: reason, context: context, now: now, on: connection)
            }
            var sessions = [Session]()
            for id in sessionIDs {
                if let session = try self.sessionRows.find(id: id, on: connection), userID == nil || session.userID == userID {
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
        let sessions = try sessionRows.unrevoked(userID: userID, on: connection).filter { $0.id != kept }
        // The hosted pages' sessions end with them, all of them (S29).
        try browserSessions.endAll(userID: userID, reason: reason, context: context, now: now, on: connection)
        return try revoke(sessions, reason: reason, context: context, now: now, on: connection)
    }

    /// Revokes each session that is still unrevoked inside the caller's transaction and audits
    /// exactly those.
    ///
    /// - Returns: The sessions this call revoked.
    func revoke(_ sessions: [Session], reason: String, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> [String] {
        var revoked = [String]()
        for session in sessions {
            guard try revoke(session.id, reason: reason, now: now, on: connection) else { continue }
            try dependencies.record(
                .sessionRevoked, .success, userID: session.userID, context: context, now: now,
                details: ["session_id": session.id, "reason": reason], on: connection)
            revoked.append(session.id)
        }
        return revoked
    }

    /// Revokes the session a refresh token belongs to (RFC 7009); unknown tokens are ignored.
    package func revoke(refreshToken: String, context: RequestContext) async throws {
        let hash = refreshToken.sha256
        let sessionID = try await dependencies.database.read { connection in
            try self.sessionRows.sessionID(tokenHash: hash, on: connection)
        }
        if let sessionID {
            try await revokeSessions(userID: nil, sessionIDs: [sessionID], reason: "revoked", context: context)
        }
    }

    // MARK: Reading

    /// A user's sessions, newest first; revoked and expired ones are left out.
    package func sessions(userID: String) async throws -> [Session] {
        let now = dependencies.clock()
        return try await dependencies.database.read { connection in
            try self.sessionRows.unrevoked(userID: userID, on: connection).filter { $0.isLive(at: now) }
        }
    }

    /// One session by id, whatever its state.
    package func session(_ id: String) async throws -> Session? {
        try await dependencies.database.read { connection in
            try self.sessionRows.find(id: id, on: connection)
        }
    }

    // MARK: Second factors

    /// How recent a second factor must be for removing a factor or deleting the account.
    static let recentSecondFactor: TimeInterval = 300

    /// Throws 403 `insufficient_authentication` unless the principal's session proved a second
    /// factor in the last five minutes, when the user has a second factor at all (docs/reference.md
    /// `DELETE /v1/me`, removing a factor).
    ///
    /// A session gets there by signing in with MFA, by a step-up (`POST /v1/challenges/{id}/verify`),
    /// or by adding a factor.
    ///
    /// - Parameter principal: The bearer token's user and session.
    /// - Throws: ``AuthError/insufficientAuthentication()``; store errors.
    package func requireRecentSecondFactor(_ principal: Principal) async throws {
        let now = dependencies.clock()
        try await dependencies.database.read { connection in
            try self.requireRecentSecondFactor(principal, now: now, on: connection)
        }
    }

    /// The check of ``requireRecentSecondFactor(_:)`` inside the caller's transaction.
    func requireRecentSecondFactor(_ principal: Principal, now: Date, on connection: any SQLConnection) throws {
        guard try SecondFactors.exist(userID: principal.userID, on: connection) else { return }
        let provedAt = try sessionRows.secondFactorTime(sessionID: principal.sessionID, userID: principal.userID, on: connection)
        guard let provedAt, now.timeIntervalSince(provedAt) <= Self.recentSecondFactor else {
            throw AuthError.insufficientAuthentication()
        }
    }

    /// For an action as sensitive as moving the account to another address: the session must
    /// have signed in, or proved a second factor, in the last five minutes.
    ///
    /// - Throws: ``AuthError/Code/insufficientAuthentication``.
    func requireFreshSignIn(_ principal: Principal, now: Date, on connection: any SQLConnection) throws {
        guard let session = try sessionRows.find(id: principal.sessionID, on: connection) else { throw AuthError.invalidToken("the session has ended") }
        let latest = max(session.createdAt, session.secondFactorAt ?? session.createdAt)
        guard now.timeIntervalSince(latest) <= Self.recentSecondFactor else {
            throw AuthError(.insufficientAuthentication, "this needs a sign-in or a second factor in the last five minutes; sign in again")
        }
    }

    /// Notes in the session that a second factor was proved now.
    func markSecondFactor(sessionID: String, now: Date, on connection: any SQLConnection) throws {
        try sessionRows.markSecondFactor(sessionID: sessionID, at: now, on: connection)
    }
}
