package import FoundationEssentials
package import LatchkeyStore

/// Browser sessions of the hosted pages (S29): started by a sign-in there, found again by the
/// cookie's token, ended by signing out and by every event that ends all of a user's API
/// sessions (``SessionService`` calls ``endAll(userID:reason:context:now:on:)``).
///
/// The cookie holds a 256-bit random token; the database holds only its SHA-256 hash, so a copy
/// of the database does not sign anyone in. Each change is written with its audit entry in one
/// transaction.
package struct BrowserSessionService: Sendable {
    let database: any SQLDatabase
    let clock: @Sendable () -> Date
    /// How long a session lasts from its start, used or not.
    package let lifetime: TimeInterval
    let repository = BrowserSessionRepository()
    let audit: AuditLog

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - database: A migrated database.
    ///   - clock: The time of every check and row.
    ///   - lifetime: Seconds from start to expiry; a day by default.
    package init(database: any SQLDatabase, clock: @escaping @Sendable () -> Date, lifetime: TimeInterval = 86_400) {
        self.database = database
        self.clock = clock
        self.lifetime = lifetime
        self.audit = AuditLog(database: database)
    }

    /// Starts a session for a user who has just signed in on a hosted page.
    ///
    /// - Parameters:
    ///   - userID: Who signed in.
    ///   - amr: How (RFC 8176), e.g. `["pwd", "otp", "mfa"]`.
    ///   - ip: The browser's address, for the audit entry and the row.
    ///   - userAgent: The browser's `User-Agent`.
    /// - Returns: The session, and the token for its cookie (never stored; only its hash is).
    package func start(userID: String, amr: [String], ip: String?, userAgent: String?) async throws -> (session: BrowserSession, token: String) {
        let context = RequestContext(ip: ip, userAgent: userAgent)
        let now = clock()
        return try await database.write { connection in
            try self.start(userID: userID, amr: amr, context: context, now: now, on: connection)
        }
    }

    /// ``start(userID:amr:ip:userAgent:)`` inside the caller's transaction: the end of a sign-in
    /// on a hosted page (``SignInPipeline/admit(_:target:context:now:on:)``).
    ///
    /// - Parameter replacing: The token of the browser session the request's cookie carried. A
    ///   sign-in in a browser that already has a session (`prompt=login`, `max_age`, another
    ///   user) ends that one here, audited with reason `replaced`: the new cookie overwrites the
    ///   old one, so nothing else would ever end it (ASVS 5.0 V7.2.4, V7.4.1).
    func start(
        userID: String, amr: [String], replacing: String? = nil, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> (session: BrowserSession, token: String) {
        // Whole seconds, as the row keeps them: the value returned equals the one read back.
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = Identifiers.secret()
        let session = BrowserSession(
            id: Identifiers.make("bs"), userID: userID, amr: amr, authTime: now, createdAt: now, expiresAt: now.addingTimeInterval(lifetime))
        if let replacing, !replacing.isEmpty,
            let replaced = try repository.end(tokenHash: replacing.sha256, reason: "replaced", at: now, on: connection)
        {
            try audit.record(
                .init(time: now, userID: replaced.userID, event: .browserSessionEnded, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["browser_session_id": replaced.id, "reason": "replaced", "replaced_by": session.id]),
                on: connection)
        }
        try repository.insert(session, tokenHash: token.sha256, ip: context.ip, userAgent: context.userAgent, on: connection)
        try audit.record(
            .init(time: now, userID: userID, event: .browserSessionStarted, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: ["browser_session_id": session.id, "amr": amr.joined(separator: " ")]),
            on: connection)
        return (session, token)
    }

    /// The live session a cookie's token stands for, noting the use.
    ///
    /// - Returns: `nil` when the token is unknown, or its session has ended or expired.
    package func current(token: String) async throws -> BrowserSession? {
        guard !token.isEmpty else { return nil }
        let now = clock()
        let hash = token.sha256
        return try await database.write { connection in
            guard let session = try self.repository.live(tokenHash: hash, at: now, on: connection) else { return nil }
            try self.repository.touch(id: session.id, at: now, on: connection)
            return session
        }
    }

    /// Ends the session a cookie's token stands for (signing out on a hosted page).
    ///
    /// - Parameters:
    ///   - token: The cookie's token.
    ///   - reason: Stored in `ended_reason` and the audit entry, e.g. `logout`.
    ///   - context: The browser's address and the request id, for the audit entry (S27).
    /// - Returns: The session this call ended; `nil` when the token is unknown or its session had
    ///   ended already (another request ended it, and audited it).
    @discardableResult
    package func end(token: String, reason: String, context: RequestContext = RequestContext()) async throws -> BrowserSession? {
        guard !token.isEmpty else { return nil }
        let now = clock()
        let hash = token.sha256
        return try await database.write { connection in
            guard let session = try self.repository.end(tokenHash: hash, reason: reason, at: now, on: connection) else { return nil }
            try self.audit.record(
                .init(time: now, userID: session.userID, event: .browserSessionEnded, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["browser_session_id": session.id, "reason": reason]),
                on: connection)
            return session
        }
    }

    /// Ends every browser session of a user inside the caller's transaction, with an audit entry
    /// each: what logging out everywhere, a password change or reset, Apple consent revoked and
    /// account deletion do to the API sessions, they do to these (S29).
    ///
    /// - Returns: The ids of the sessions this call ended.
    @discardableResult
    func endAll(userID: String, reason: String, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> [String] {
        let ended = try repository.endAll(userID: userID, reason: reason, at: now, on: connection)
        for id in ended {
            try audit.record(
                context.entry(.browserSessionEnded, .success, userID: userID, now: now, details: ["browser_session_id": id, "reason": reason]),
                on: connection)
        }
        return ended
    }
}
