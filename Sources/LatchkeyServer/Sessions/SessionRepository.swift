import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The `sessions`, `refresh_tokens` and `ended_refresh_tokens` tables: sessions, their rotating
/// refresh tokens (only SHA-256 hashes are stored, S7) and the tombstones that name why a
/// deleted account's tokens stopped working.
///
/// Every write whose meaning depends on prior state is a compare-and-set that reports whether it
/// changed a row; the caller acts on `false`, so correctness never rests on a single writer.
struct SessionRepository: Sendable {
    /// A refresh token looked up by its hash, with the session it belongs to.
    struct PresentedToken: Sendable {
        var session: Session
        /// When the token was retired (rotated away), or `nil` while it is live.
        var retiredAt: Date?
        /// The hash of the token that replaced it, once retired.
        var replacedBy: [UInt8]?
        /// The successor itself, sealed, while the reuse grace window is open (S8).
        var sealedSuccessor: [UInt8]?
        var successorExpiresAt: Date?
        /// The session's user, read in the same statement; `nil` when the account is gone.
        var user: User?

        /// Whether the token was already retired when it was read.
        var retired: Bool { retiredAt != nil }
    }

    /// What a rotation keeps of the successor for the reuse grace window (S8).
    struct SealedSuccessor: Sendable {
        var sealed: [UInt8]
        var expiresAt: Date
    }

    // MARK: Sessions

    /// Inserts a new session inside the caller's transaction (unawaited: its id is new).
    func insert(_ session: Session, on connection: any SQLConnection) throws {
        try connection.executeUnawaited(
            """
            INSERT INTO sessions (id, user_id, amr, created_at, last_used_at, idle_expires_at, absolute_expires_at, second_factor_at, revoked_at,
                revoked_reason, user_agent, ip, client_id, scope, browser_session_id, dpop_jkt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(session.id), .text(session.userID), .text(Self.amrText(session.amr)), .time(session.createdAt),
                .time(session.lastUsedAt), .time(session.idleExpiresAt), .time(session.absoluteExpiresAt),
                session.secondFactorAt.map(SQLValue.time) ?? .null, session.revokedAt.map(SQLValue.time) ?? .null,
                SQLValue(session.revokedReason), SQLValue(session.userAgent), SQLValue(session.ip),
                SQLValue(session.grant?.clientID), SQLValue(session.grant?.scope), SQLValue(session.grant?.browserSessionID),
                SQLValue(session.dpopKeyThumbprint),
            ])
    }

    /// The session with this id, whatever its state.
    func find(id: String, on connection: any SQLConnection) throws -> Session? {
        try connection.queryOne("SELECT * FROM sessions WHERE id = ?", [.text(id)]).map(Self.session)
    }

    /// A user's unrevoked sessions, newest first (expired ones included: the caller decides at its `now`).
    func unrevoked(userID: String, on connection: any SQLConnection) throws -> [Session] {
        try connection.query(
            "SELECT * FROM sessions WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id", [.text(userID)]
        ).map(Self.session)
    }

    /// A user's unrevoked sessions that an OAuth grant of the client created (`sessions.client_id`),
    /// newest first.
    func unrevoked(userID: String, clientID: String, on connection: any SQLConnection) throws -> [Session] {
        try connection.query(
            "SELECT * FROM sessions WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id",
            [.text(userID), .text(clientID)]
        ).map(Self.session)
    }

    /// Records a use: the session was last used at `at` and now idles out at `idleExpiresAt`
    /// (unawaited: nothing depends on the count).
    func touch(sessionID: String, at: Date, idleExpiresAt: Date, on connection: any SQLConnection) throws {
        try connection.executeUnawaited(
            "UPDATE sessions SET last_used_at = ?, idle_expires_at = ? WHERE id = ?", [.time(at), .time(idleExpiresAt), .text(sessionID)])
    }

    /// Compare-and-set: revokes the session only if it is not revoked yet.
    ///
    /// A revoked session's successors kept for the reuse grace (S8) go with it: nothing can
    /// use them any more.
    ///
    /// - Returns: whether this call revoked it (false: it was revoked already, or does not exist).
    func revoke(sessionID: String, reason: String, at: Date, on connection: any SQLConnection) throws -> Bool {
        guard try connection.execute(
            "UPDATE sessions SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
            [.time(at), .text(reason), .text(sessionID)]) == 1
        else { return false }
        try connection.execute(
            "UPDATE refresh_tokens SET successor_sealed = NULL, successor_expires_at = NULL WHERE session_id = ? AND successor_sealed IS NOT NULL",
            [.text(sessionID)])
        return true
    }

    /// Compare-and-set: binds an unbound session's refresh-token family to a DPoP key (RFC 9449
    /// §5), when a public client first refreshes it with a proof.
    ///
    /// - Returns: whether this call bound it (false: it was bound already).
    func bindDPoP(sessionID: String, keyThumbprint: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE sessions SET dpop_jkt = ? WHERE id = ? AND dpop_jkt IS NULL", [.text(keyThumbprint), .text(sessionID)]) == 1
    }

    // MARK: Second factors

    /// When the user's session last proved a second factor; nil when it never did or the user
    /// has no such session.
    func secondFactorTime(sessionID: String, userID: String, on connection: any SQLConnection) throws -> Date? {
        try connection.queryOne("SELECT second_factor_at FROM sessions WHERE id = ? AND user_id = ?", [.text(sessionID), .text(userID)])?
            .optionalDate("second_factor_at")
    }

    /// Notes in the session that a second factor was proved at `now`.
    func markSecondFactor(sessionID: String, at now: Date, on connection: any SQLConnection) throws {
        try connection.execute("UPDATE sessions SET second_factor_at = ? WHERE id = ?", [.time(now), .text(sessionID)])
    }

    /// Compare-and-set: gives the session its step-up `amr` and a second-factor time of `now`
    /// only if it has not been revoked.
    ///
    /// - Returns: Whether this call updated it (false: the session was revoked meanwhile).
    func recordStepUp(sessionID: String, amr: [String], at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE sessions SET amr = ?, second_factor_at = ? WHERE id = ? AND revoked_at IS NULL",
            [.text(JSONValue.array(amr.map(JSONValue.string)).serializedString), .time(now), .text(sessionID)]) == 1
    }

    // MARK: Refresh tokens

    /// Stores the hash of a session's new live refresh token (S7), unawaited: the token is new.
    func insertToken(hash: [UInt8], sessionID: String, at: Date, on connection: any SQLConnection) throws {
        try connection.executeUnawaited(
            "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)", [.blob(hash), .text(sessionID), .time(at)])
    }

    /// The token with this hash, its session and the session's user, or `nil` when the hash is
    /// not known.
    func presentedToken(hash: [UInt8], on connection: any SQLConnection) throws -> PresentedToken? {
        guard let row = try connection.queryOne(
            """
            SELECT refresh_tokens.retired_at AS token_retired_at, refresh_tokens.replaced_by AS token_replaced_by,
                   refresh_tokens.successor_sealed AS token_successor_sealed,
                   refresh_tokens.successor_expires_at AS token_successor_expires_at, sessions.*, \(UserRepository.accountColumns)
            FROM refresh_tokens JOIN sessions ON sessions.id = refresh_tokens.session_id LEFT JOIN users ON users.id = sessions.user_id
            WHERE refresh_tokens.token_hash = ?
            """,
            [.blob(hash)])
        else { return nil }
        return PresentedToken(
            session: try Self.session(row), retiredAt: row.optionalDate("token_retired_at"),
            replacedBy: row.optionalBlob("token_replaced_by"), sealedSuccessor: row.optionalBlob("token_successor_sealed"),
            successorExpiresAt: row.optionalDate("token_successor_expires_at"),
            user: row.optionalString("account_id") == nil ? nil : try UserRepository.user(row, prefix: "account_"))
    }

    /// Compare-and-set: whether the token is still live, taking its row lock, so that the answer
    /// holds until the caller's transaction ends. The statement writes nothing (it sets a NULL to
    /// NULL), but as a write it waits for, and then sees, a concurrent rotation of the same token
    /// on any engine: a grace replay (S8) and the successor's own rotation cannot both win.
    ///
    /// - Returns: whether the token was live (false: retired, or not known).
    func holdLive(tokenHash: [UInt8], on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE refresh_tokens SET retired_at = NULL WHERE token_hash = ? AND retired_at IS NULL", [.blob(tokenHash)]) == 1
    }

    /// Drops a successor kept for the grace window, when the window is found over.
    func dropSealedSuccessor(tokenHash: [UInt8], on connection: any SQLConnection) throws {
        try connection.execute(
            "UPDATE refresh_tokens SET successor_sealed = NULL, successor_expires_at = NULL WHERE token_hash = ?", [.blob(tokenHash)])
    }

    /// The id of the session the token with this hash belongs to, live or retired.
    func sessionID(tokenHash: [UInt8], on connection: any SQLConnection) throws -> String? {
        try connection.queryOne("SELECT session_id FROM refresh_tokens WHERE token_hash = ?", [.blob(tokenHash)])?.string("session_id")
    }

    /// Compare-and-set: retires the token only if it is still live (S8).
    ///
    /// - Returns: whether this call retired it (false: someone else did first, or it is not known).
    func retire(
        tokenHash: [UInt8], replacedBy: [UInt8], keeping successor: SealedSuccessor? = nil, at: Date, on connection: any SQLConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE refresh_tokens SET retired_at = ?, replaced_by = ?, successor_sealed = ?, successor_expires_at = ?
            WHERE token_hash = ? AND retired_at IS NULL
            """,
            [.time(at), .blob(replacedBy), successor.map { .blob($0.sealed) } ?? .null, successor.map { .time($0.expiresAt) } ?? .null,
             .blob(tokenHash)]) == 1
    }

    /// Compare-and-set: retires whichever token of the session is live (a step-up rotates the
    /// session's token without presenting it).
    ///
    /// - Returns: whether this call retired one (false: the session has no live token, because a
    ///   concurrent rotation retired it first).
    func retireLiveToken(
        sessionID: String, replacedBy: [UInt8], keeping successor: SealedSuccessor? = nil, at: Date, on connection: any SQLConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE refresh_tokens SET retired_at = ?, replaced_by = ?, successor_sealed = ?, successor_expires_at = ?
            WHERE session_id = ? AND retired_at IS NULL
            """,
            [.time(at), .blob(replacedBy), successor.map { .blob($0.sealed) } ?? .null, successor.map { .time($0.expiresAt) } ?? .null,
             .text(sessionID)]) == 1
    }

    // MARK: Tombstones

    /// Leaves a tombstone for each live refresh token of the user's unexpired sessions, holding
    /// only the token's hash and `reason`, kept until the session would have expired; so a later
    /// refresh with one answers `invalid_grant` with that reason. A token that already has a
    /// tombstone keeps it.
    ///
    /// - Returns: How many tombstones this call left.
    @discardableResult
    func tombstoneLiveTokens(userID: String, reason: String, now: Date, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            """
            INSERT INTO ended_refresh_tokens (token_hash, reason, expires_at)
            SELECT refresh_tokens.token_hash, ?, sessions.absolute_expires_at
            FROM refresh_tokens JOIN sessions ON sessions.id = refresh_tokens.session_id
            WHERE sessions.user_id = ? AND refresh_tokens.retired_at IS NULL AND sessions.absolute_expires_at > ?
            ON CONFLICT DO NOTHING
            """,
            [.text(reason), .text(userID), .time(now)])
    }


    /// Why the token with this hash stopped working with its deleted account (`account_deleted`),
    /// or `nil` when no tombstone names it.
    func endedReason(tokenHash: [UInt8], on connection: any SQLConnection) throws -> String? {
        try connection.queryOne("SELECT reason FROM ended_refresh_tokens WHERE token_hash = ?", [.blob(tokenHash)])?.string("reason")
    }

    // MARK: Rows

    /// `amr` as the column stores it: a JSON array of strings.
    static func amrText(_ amr: [String]) -> String {
        JSONValue.array(amr.map(JSONValue.string)).serializedString
    }

    /// A `sessions` row (or a row holding all of its columns).
    static func session(_ row: SQLRow) throws -> Session {
        let amr = (try? JSONValue(parsing: Array(try row.string("amr").utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        return Session(
            id: try row.string("id"), userID: try row.string("user_id"), amr: amr, createdAt: try row.date("created_at"),
            lastUsedAt: try row.date("last_used_at"), idleExpiresAt: try row.date("idle_expires_at"),
            absoluteExpiresAt: try row.date("absolute_expires_at"), secondFactorAt: row.optionalDate("second_factor_at"),
            revokedAt: row.optionalDate("revoked_at"), revokedReason: row.optionalString("revoked_reason"),
            userAgent: row.optionalString("user_agent"), ip: row.optionalString("ip"),
            grant: row.optionalString("client_id").map {
                OAuthGrant(clientID: $0, scope: row.optionalString("scope") ?? "", browserSessionID: row.optionalString("browser_session_id"))
            }, dpopKeyThumbprint: row.optionalString("dpop_jkt"))
    }
}
