import FoundationEssentials
import LatchkeyJOSE
import LatchkeyStore

/// Refresh tokens: rotation with reuse detection and the reuse grace (docs/security.md S8).
///
/// Each session has one live refresh token. Presenting it retires it and issues its successor;
/// presenting a retired one again is reuse and ends the session, unless the reuse grace hands
/// back a successor that was never used.
package struct RefreshTokens: Sendable {
    let dependencies: Dependencies
    /// Ends a session whose token was reused or has expired.
    let sessions: SessionService
    let accessTokens: AccessTokens
    /// Spends the `jti` of the request's DPoP proof in the rotating transaction.
    let dpop: DPoPService
    /// Seals a rotated token's successor for the reuse grace window.
    let masterKey: MasterKey
    let idleTTL: TimeInterval
    /// `refresh_token_reuse_grace`: how long a rotated token may still get its unused successor
    /// back (S8); 0 turns the grace off.
    let reuseGrace: TimeInterval
    let sessionRows = SessionRepository()

    init(
        dependencies: Dependencies, sessions: SessionService, accessTokens: AccessTokens, dpop: DPoPService, masterKey: MasterKey,
        configuration: Configuration
    ) {
        self.dependencies = dependencies
        self.sessions = sessions
        self.accessTokens = accessTokens
        self.dpop = dpop
        self.masterKey = masterKey
        self.idleTTL = TimeInterval(configuration.refreshTokenIdleTTL)
        self.reuseGrace = TimeInterval(configuration.refreshTokenReuseGrace)
    }

    private enum RefreshOutcome: Sendable {
        case rotated(Session, String, User)
        /// A retired token within the reuse grace: its unused successor, handed out again.
        case replayed(Session, String, User)
        case refused(AuthError.Reason, String)
        /// The session is bound to a DPoP key and the request proved another, or none.
        case dpopRefused(String)
        /// The request's DPoP proof was spent already: nothing else happened.
        case dpopReplayed
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
    ///
    /// DPoP (RFC 9449 §5): the refresh of a session bound to a key needs a proof by that key
    /// (`context.dpopKeyThumbprint`), else `invalid_dpop_proof` and nothing rotates; an unbound
    /// session refreshed with a proof by a public client or the SDK becomes bound to its key. A
    /// confidential client's sessions stay unbound (it authenticates itself), but the access
    /// token is bound to its proof's key all the same. A proof whose `jti` is still unspent
    /// (`context.unspentDPoPProof`) is spent first, in the same transaction: a replay is refused
    /// with nothing but its audit entry written, and an accepted refresh writes once.
    package func refresh(_ refreshToken: String, client: OAuthClient? = nil, context: RequestContext) async throws -> TokenResponse {
        let now = dependencies.clock()
        let hash = refreshToken.sha256
        let audience: AccessTokens.Audience = client.map { $0.isFirstParty ? .api : .userinfo } ?? .api
        let outcome: RefreshOutcome = try await dependencies.database.write { connection in
            if let proof = context.unspentDPoPProof, try !self.dpop.spend(proof, context: context, on: connection) { return .dpopReplayed }
            guard let presented = try self.sessionRows.presentedToken(hash: hash, on: connection) else {
                // The account may be gone with its sessions; a tombstone says so (docs/reference.md reasons).
                if let ended = try self.sessionRows.endedReason(tokenHash: hash, on: connection) {
                    return .refused(AuthError.Reason(rawValue: ended), "the account was deleted")
                }
                return .refused(.unknown, "the refresh token is not known")
            }
            guard try OAuthGrant.mayRefresh(presented.session.grant, presentedBy: client, on: connection) else {
                // An ended session says why it ended whoever asks; a live one is not this caller's to refresh.
                if presented.session.revokedAt != nil, let stored = presented.session.revokedReason, SessionService.wireReasons.contains(stored) {
                    return .refused(AuthError.Reason(rawValue: stored), "the session has ended")
                }
                return .refused(.unknown, "the refresh token was not issued to this client")
            }
            var session = presented.session
            func record(_ event: AuditEvent, _ outcome: AuditOutcome, _ details: [String: String] = [:]) throws {
                try self.dependencies.record(
                    event, outcome, userID: session.userID, context: context, now: now,
                    details: details.merging(["session_id": session.id]) { $1 }, on: connection)
            }
            /// Reuse revokes the session; only the presentation that revoked it records and counts it.
            func reused() throws -> RefreshOutcome {
                guard try self.sessions.revoke(session.id, reason: "reused", now: now, on: connection) else { return .reused(revokedNow: false) }
                try record(.sessionReuseDetected, .revoked)
                return .reused(revokedNow: true)
            }
            // Before anything rotates or counts as reuse: a stolen token without its key changes nothing.
            if let bound = session.dpopKeyThumbprint, context.dpopKeyThumbprint != bound {
                let missing = context.dpopKeyThumbprint == nil
                try record(.sessionDPoPRefused, .failure, ["reason": missing ? "missing" : "other_key"])
                return .dpopRefused(
                    missing ? "the session is bound to a DPoP key; send a DPoP proof by it" : "the DPoP proof is by another key than the session's")
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
                return .refused(AuthError.Reason(rawValue: SessionService.wireReasons.contains(stored) ? stored : "revoked"), "the session has ended")
            }
            if now >= session.expiresAt {
                if try self.sessions.revoke(session.id, reason: "expired", now: now, on: connection) {
                    try record(.sessionExpired, .revoked)
                }
                return .refused(.expired, "the session has expired")
            }
            if session.dpopKeyThumbprint == nil, let key = context.dpopKeyThumbprint, client?.isConfidential != true {
                guard try self.sessionRows.bindDPoP(sessionID: session.id, keyThumbprint: key, on: connection) else {
                    return .dpopRefused("the session was bound to another DPoP key meanwhile")
                }
                session.dpopKeyThumbprint = key
            }
            let newToken = Identifiers.secret()
            // Read above as live, but another request may have rotated it since: the retirement
            // itself decides, and losing it is reuse like any other second presentation.
            let kept = try self.sealForGrace(newToken, now: now)
            guard try self.sessionRows.retire(tokenHash: hash, replacedBy: newToken.sha256, keeping: kept, at: now, on: connection) else {
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
        case .rotated(var session, let token, let user):
            // A confidential client's proof binds the access token, not the session.
            session.dpopKeyThumbprint = session.dpopKeyThumbprint ?? context.dpopKeyThumbprint
            return try await accessTokens.response(session: session, refreshToken: token, user: user, created: false, audience: audience, now: now)
        case .replayed(var session, let token, let user):
            session.dpopKeyThumbprint = session.dpopKeyThumbprint ?? context.dpopKeyThumbprint
            dependencies.metrics.increment(.refreshReplays)
            return try await accessTokens.response(session: session, refreshToken: token, user: user, created: false, audience: audience, now: now)
        case .reused(let revokedNow):
            if revokedNow { dependencies.metrics.increment(.refreshReuse) }
            throw AuthError.invalidGrant(.reused, "the refresh token was already used; the session is revoked")
        case .refused(let reason, let description):
            throw AuthError.invalidGrant(reason, description)
        case .dpopRefused(let description):
            throw AuthError.invalidDPoPProof(description)
        case .dpopReplayed:
            throw DPoPService.replayed
        }
    }

    /// Retires the session's live refresh token, issues its successor and extends the idle
    /// lifetime, inside the caller's transaction (S8): what a step-up does.
    ///
    /// - Returns: The new refresh token.
    /// - Throws: ``AuthError/Code/conflict`` when the session has no live token to retire: a
    ///   concurrent refresh or step-up rotated it first. The caller's transaction must roll back.
    func rotate(of session: inout Session, now: Date, on connection: any SQLConnection) throws -> String {
        let newToken = Identifiers.secret()
        let kept = try sealForGrace(newToken, now: now)
        guard try sessionRows.retireLiveToken(sessionID: session.id, replacedBy: newToken.sha256, keeping: kept, at: now, on: connection) else {
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
            try sessionRows.dropSealedSuccessor(tokenHash: hash, on: connection)
            return nil
        }
        guard presented.session.revokedAt == nil, now < presented.session.expiresAt,
              try sessionRows.holdLive(tokenHash: successorHash, on: connection)
        else { return nil }
        let successor = String(decoding: try masterKey.unseal(sealed, context: Self.successorContext(successorHash)), as: UTF8.self)
        return successor.sha256 == successorHash ? successor : nil
    }

    /// Stores `token` as the session's live refresh token (its predecessor already retired) and
    /// extends the idle lifetime, never past the absolute one.
    private func issue(_ token: String, to session: inout Session, now: Date, on connection: any SQLConnection) throws {
        try sessionRows.insertToken(hash: token.sha256, sessionID: session.id, at: now, on: connection)
        session.lastUsedAt = now
        session.idleExpiresAt = min(now.addingTimeInterval(idleTTL), session.absoluteExpiresAt)
        try sessionRows.touch(sessionID: session.id, at: now, idleExpiresAt: session.idleExpiresAt, on: connection)
    }
}
