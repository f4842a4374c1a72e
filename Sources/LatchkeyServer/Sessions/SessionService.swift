import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// Who asked, for audit entries and the sessions list.
public struct RequestContext: Sendable {
    public var ip: String?
    public var userAgent: String?
    public var requestID: String?

    public init(ip: String? = nil, userAgent: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.requestID = requestID
    }

    init(_ request: HTTPRequest) {
        self.init(ip: request.remoteAddress, userAgent: request.headers["User-Agent"].map { String($0.prefix(256)) }, requestID: request.requestID)
    }
}

/// The key table has no active key: a broken deployment, answered as a plain 500.
struct NoActiveSigningKey: Error {}

/// What every sign-in, refresh and step-up returns (docs/reference.md "Token response").
public struct TokenResponse: Sendable {
    public var accessToken: String
    public var expiresIn: Int
    public var refreshToken: String
    public var session: Session
    public var user: User
    public var created: Bool
}

/// Sessions and their tokens: creation, refresh-token rotation with reuse detection, expiry and
/// revocation (docs/security.md S7–S9), each written with its audit entry in one transaction (S27, S28).
public final class SessionService: Sendable {
    let database: any SQLDatabase
    let users: UserRepository
    let audit: AuditLog
    let keys: SigningKeyRing
    let metrics: Metrics
    let clock: @Sendable () -> Date
    let accessTokenTTL: Int
    let idleTTL: TimeInterval
    let absoluteTTL: TimeInterval
    /// The issuer and audience; known only once the server has bound its port.
    let identity: Mutex<(issuer: String, audience: String)>
    /// Recent answers to "whose live session is this?" (`nil`: nobody's, it has ended or never
    /// existed), so bearer checks rarely touch the database.
    private let liveness = Mutex<[String: (owner: String?, checkedAt: Date)]>([:])

    /// How long another process's revocation may take to reach this one's bearer checks.
    static let livenessTTL: TimeInterval = 1

    init(
        database: any SQLDatabase, keys: SigningKeyRing, metrics: Metrics, configuration: Configuration,
        clock: @escaping @Sendable () -> Date
    ) {
        self.database = database
        self.users = UserRepository(database: database)
        self.audit = AuditLog(database: database)
        self.keys = keys
        self.metrics = metrics
        self.clock = clock
        self.accessTokenTTL = configuration.accessTokenTTL
        self.idleTTL = TimeInterval(configuration.refreshTokenIdleTTL)
        self.absoluteTTL = TimeInterval(configuration.refreshTokenAbsoluteTTL)
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
    /// `secondFactorAt` is set when the sign-in included a second factor (MFA at sign-in).
    func createSession(
        userID: String, amr: [String], secondFactorAt: Date? = nil, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> (Session, String) {
        let session = Session(
            id: Identifiers.make("ses"), userID: userID, amr: amr, createdAt: now, lastUsedAt: now,
            idleExpiresAt: now.addingTimeInterval(min(idleTTL, absoluteTTL)), absoluteExpiresAt: now.addingTimeInterval(absoluteTTL),
            secondFactorAt: secondFactorAt, userAgent: context.userAgent, ip: context.ip)
        let refreshToken = Identifiers.secret()
        let dialect = database.dialect
        try connection.execute(
            dialect.sql(
                """
                INSERT INTO sessions (id, user_id, amr, created_at, last_used_at, idle_expires_at, absolute_expires_at, second_factor_at, user_agent, ip)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """),
            [
                .text(session.id), .text(userID), .text(JSONValue.array(amr.map(JSONValue.string)).serializedString), .time(now),
                .time(now), .time(session.idleExpiresAt), .time(session.absoluteExpiresAt), secondFactorAt.map(SQLValue.time) ?? .null,
                SQLValue(context.userAgent), SQLValue(context.ip),
            ])
        try connection.execute(
            dialect.sql("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)"),
            [.blob(refreshToken.sha256), .text(session.id), .time(now)])
        try audit.record(
            .init(time: now, userID: userID, event: .sessionCreated, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: ["session_id": session.id, "amr": amr.joined(separator: " ")]),
            on: connection)
        return (session, refreshToken)
    }

    /// Starts a session for a user in a transaction of its own and returns the token response.
    public func startSession(userID: String, amr: [String], context: RequestContext, created: Bool = false) async throws -> TokenResponse {
        let now = clock()
        let (session, refreshToken, user) = try await database.write { connection in
            guard let user = try self.users.find(userID, on: connection) else { throw HTTPError.notFound("no such user") }
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
    /// session (``beginSecondFactor(after:context:now:on:)``), so every method inherits MFA.
    func signIn(
        method: String, context: RequestContext,
        authenticate: @escaping @Sendable (any SQLConnection, Date) throws -> FirstFactor
    ) async throws -> TokenResponse {
        enum Outcome: Sendable {
            case signedIn(FirstFactor, Session, String)
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
                let (session, refreshToken) = try self.createSession(
                    userID: factor.user.id, amr: [factor.method], context: context, now: now, on: connection)
                return .signedIn(factor, session, refreshToken)
            }
        } catch {
            metrics.increment(.signIns, ["method": method, "outcome": "failure"])
            throw error
        }
        switch outcome {
        case .secondFactorRequired(let mfaRequired):
            metrics.increment(.signIns, ["method": method, "outcome": "mfa_required"])
            throw mfaRequired
        case .signedIn(let factor, let session, let refreshToken):
            metrics.increment(.signIns, ["method": method, "outcome": "success"])
            return try await tokenResponse(session: session, refreshToken: refreshToken, user: factor.user, created: factor.created, now: now)
        }
    }

    /// Signs an access token for the session and assembles the token response.
    func tokenResponse(session: Session, refreshToken: String, user: User, created: Bool, now: Date) async throws -> TokenResponse {
        TokenResponse(
            accessToken: try await accessToken(for: session, now: now), expiresIn: accessTokenTTL, refreshToken: refreshToken,
            session: session, user: user, created: created)
    }

    /// An access token exactly as docs/reference.md describes: `typ: at+jwt` (RFC 9068), ES256, `kid`.
    func accessToken(for session: Session, now: Date) async throws -> String {
        guard let signer = try await keys.current(now: now).signer else {
            throw NoActiveSigningKey()
        }
        var claims = JWTClaims()
        let (issuer, audience) = identity.withLock { $0 }
        claims.issuer = issuer
        claims.subject = session.userID
        claims.audience = [audience]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(TimeInterval(accessTokenTTL))
        claims.tokenID = Identifiers.secret()
        claims["sid"] = .string(session.id)
        claims["amr"] = .array(session.amr.map(JSONValue.string))
        return try signer.sign(claims, type: "at+jwt")
    }

    // MARK: Refreshing

    private enum RefreshOutcome: Sendable {
        case rotated(Session, String, User)
        case refused(HTTPError.GrantFailure, String)
        /// A retired token came back; `revokedNow` when this presentation revoked the session.
        case reused(revokedNow: Bool)
    }

    /// Rotates a refresh token (S8): the presented token retires and a new one is issued.
    ///
    /// A token that was already retired is reuse: the whole session is revoked and logged, and
    /// the answer is `invalid_grant` with reason `reused`. Writes are serialised, so of two
    /// concurrent presentations of one token exactly one rotates it; the other is reuse.
    public func refresh(_ refreshToken: String, context: RequestContext) async throws -> TokenResponse {
        let now = clock()
        let hash = refreshToken.sha256
        let dialect = database.dialect
        let outcome: RefreshOutcome = try await database.write { connection in
            guard let row = try connection.queryOne(
                dialect.sql(
                    """
                    SELECT refresh_tokens.retired_at AS token_retired_at, sessions.*
                    FROM refresh_tokens JOIN sessions ON sessions.id = refresh_tokens.session_id
                    WHERE refresh_tokens.token_hash = ?
                    """),
                [.blob(hash)])
            else {
                // The account may be gone with its sessions; a tombstone says so (docs/reference.md reasons).
                if let ended = try connection.queryOne(
                    dialect.sql("SELECT reason FROM ended_refresh_tokens WHERE token_hash = ?"), [.blob(hash)]) {
                    return .refused(HTTPError.GrantFailure(rawValue: try ended.string("reason")), "the account was deleted")
                }
                return .refused(.unknown, "the refresh token is not known")
            }
            var session = try Session.session(row)
            func record(_ event: AuditEvent, _ outcome: AuditOutcome, _ details: [String: String] = [:]) throws {
                try self.audit.record(
                    .init(time: now, userID: session.userID, event: event, outcome: outcome, ip: context.ip, requestID: context.requestID,
                          details: details.merging(["session_id": session.id]) { $1 }),
                    on: connection)
            }
            if row.optionalInt("token_retired_at") != nil {
                guard session.revokedAt == nil else { return .reused(revokedNow: false) }
                try self.revoke(session.id, reason: "reused", now: now, on: connection)
                try record(.sessionReuseDetected, .revoked)
                return .reused(revokedNow: true)
            }
            if session.revokedAt != nil {
                let stored = session.revokedReason ?? "revoked"
                let reason = HTTPError.GrantFailure(rawValue: Self.wireReasons.contains(stored) ? stored : "revoked")
                return .refused(reason, "the session has ended")
            }
            if now >= session.expiresAt {
                try self.revoke(session.id, reason: "expired", now: now, on: connection)
                try record(.sessionExpired, .revoked)
                return .refused(.expired, "the session has expired")
            }
            // The presented token is the session's one live token (checked above), so rotating
            // the session's live token retires exactly it.
            let newToken = try self.rotateRefreshToken(of: &session, now: now, on: connection)
            try record(.sessionRefreshed, .success)
            guard let user = try self.users.find(session.userID, on: connection) else {
                return .refused(.revoked, "the account no longer exists")
            }
            return .rotated(session, newToken, user)
        }
        switch outcome {
        case .rotated(let session, let token, let user):
            return try await tokenResponse(session: session, refreshToken: token, user: user, created: false, now: now)
        case .reused(let revokedNow):
            if revokedNow { metrics.increment(.refreshReuse) }
            throw HTTPError.invalidGrant(.reused, "the refresh token was already used; the session is revoked")
        case .refused(let reason, let description):
            throw HTTPError.invalidGrant(reason, description)
        }
    }

    /// Retires the session's live refresh token, issues its successor and extends the idle
    /// lifetime, inside the caller's transaction (S8): what a refresh grant and a step-up do.
    ///
    /// - Returns: The new refresh token.
    func rotateRefreshToken(of session: inout Session, now: Date, on connection: any SQLConnection) throws -> String {
        let dialect = database.dialect
        let newToken = Identifiers.secret()
        try connection.execute(
            dialect.sql("UPDATE refresh_tokens SET retired_at = ?, replaced_by = ? WHERE session_id = ? AND retired_at IS NULL"),
            [.time(now), .blob(newToken.sha256), .text(session.id)])
        try connection.execute(
            dialect.sql("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)"),
            [.blob(newToken.sha256), .text(session.id), .time(now)])
        session.lastUsedAt = now
        session.idleExpiresAt = min(now.addingTimeInterval(idleTTL), session.absoluteExpiresAt)
        try connection.execute(
            dialect.sql("UPDATE sessions SET last_used_at = ?, idle_expires_at = ? WHERE id = ?"),
            [.time(now), .time(session.idleExpiresAt), .text(session.id)])
        return newToken
    }

    /// Revocation reasons stored in `sessions.revoked_reason` that the wire reports as such.
    static let wireReasons: Set<String> = ["consent_revoked", "account_deleted", "transferred", "expired", "reused"]

    // MARK: Revoking

    /// Marks a session revoked inside the caller's transaction; later refreshes fail and bearer
    /// checks in this process see it at once.
    func revoke(_ sessionID: String, reason: String, now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            database.dialect.sql("UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL"),
            [.time(now), .text(reason), .text(sessionID)])
        liveness.withLock { $0[sessionID] = (nil, now) }
    }

    /// Ends sessions of a user (`logout`, `DELETE /v1/sessions/{id}`, `sessions revoke`), with an
    /// audit entry each.
    ///
    /// - Parameters:
    ///   - userID: Whose sessions; `nil` for an operator revoking by session id alone.
    ///   - sessionIDs: Which sessions; `nil` for all of the user's live sessions.
    /// - Returns: The sessions that were live and are now revoked.
    @discardableResult
    public func revokeSessions(userID: String?, sessionIDs: [String]?, reason: String, context: RequestContext) async throws -> [String] {
        let now = clock()
        let dialect = database.dialect
        return try await database.write { connection in
            var rows = [SQLRow]()
            if let sessionIDs {
                for id in sessionIDs {
                    if let row = try connection.queryOne(dialect.sql("SELECT id, user_id FROM sessions WHERE id = ? AND revoked_at IS NULL"), [.text(id)]),
                        userID == nil || (try? row.string("user_id")) == userID
                    {
                        rows.append(row)
                    }
                }
            } else if let userID {
                return try self.revokeAll(userID: userID, reason: reason, context: context, now: now, on: connection)
            }
            return try self.revoke(rows, reason: reason, context: context, now: now, on: connection)
        }
    }

    /// Ends every live session of a user but `kept` inside the caller's transaction, with an
    /// audit entry each (consent revoked, password changed or reset, account deleted).
    @discardableResult
    func revokeAll(
        userID: String, except kept: String? = nil, reason: String, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> [String] {
        let rows = try connection.query(
            database.dialect.sql("SELECT id, user_id FROM sessions WHERE user_id = ? AND revoked_at IS NULL"), [.text(userID)])
        return try revoke(rows.filter { (try? $0.string("id")) != kept }, reason: reason, context: context, now: now, on: connection)
    }

    private func revoke(_ rows: [SQLRow], reason: String, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> [String] {
        var revoked = [String]()
        for row in rows {
            let id = try row.string("id")
            try revoke(id, reason: reason, now: now, on: connection)
            try audit.record(
                .init(time: now, userID: try row.string("user_id"), event: .sessionRevoked, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["session_id": id, "reason": reason]),
                on: connection)
            revoked.append(id)
        }
        return revoked
    }

    /// Revokes the session a refresh token belongs to (RFC 7009); unknown tokens are ignored.
    public func revoke(refreshToken: String, context: RequestContext) async throws {
        let hash = refreshToken.sha256
        let dialect = database.dialect
        let sessionID = try await database.read { connection in
            try connection.queryOne(dialect.sql("SELECT session_id FROM refresh_tokens WHERE token_hash = ?"), [.blob(hash)])?.string("session_id")
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
        let dialect = database.dialect
        let session = try await database.read { connection in
            try connection.queryOne(dialect.sql("SELECT * FROM sessions WHERE id = ?"), [.text(sessionID)]).map(Session.session)
        }
        let owner = session.flatMap { $0.isLive(at: now) ? $0.userID : nil }
        liveness.withLock { cache in
            if cache.count > 100_000 { cache.removeAll(keepingCapacity: true) }
            cache[sessionID] = (owner, now)
        }
        return owner == userID
    }

    /// A user's sessions, newest first; revoked and expired ones are left out.
    public func sessions(userID: String) async throws -> [Session] {
        let now = clock()
        let dialect = database.dialect
        return try await database.read { connection in
            try connection.query(
                dialect.sql("SELECT * FROM sessions WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id"), [.text(userID)]
            ).map(Session.session).filter { $0.isLive(at: now) }
        }
    }

    /// One session by id, whatever its state.
    public func session(_ id: String) async throws -> Session? {
        let dialect = database.dialect
        return try await database.read { connection in
            try connection.queryOne(dialect.sql("SELECT * FROM sessions WHERE id = ?"), [.text(id)]).map(Session.session)
        }
    }
}
