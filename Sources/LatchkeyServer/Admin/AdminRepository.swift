import FoundationEssentials
import LatchkeyStore

/// The admin API's SQL: the `admin_roles` table, the user search, and the audit log's pages.
///
/// Every listing is a keyset walk, newest first: a page asks for the rows after the cursor's
/// `(time, id)`, which the `(created_at, id)` and `(time, id)` indexes of migration 13 answer
/// without counting past rows as OFFSET would.
struct AdminRepository: Sendable {
    /// The prefix ranges compare bytewise, as the search indexes of migration 13 do.
    let bytewise = " " + SQLDialect.bytewise

    // MARK: Roles

    /// Gives `userID` `role`, replacing any role it had.
    func grant(userID: String, role: AdminRole, at now: Date, on connection: any SQLConnection) throws {
        _ = try connection.execute(
            """
            INSERT INTO admin_roles (user_id, role, granted_at) VALUES (?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET role = excluded.role, granted_at = excluded.granted_at
            """,
            [.text(userID), .text(role.rawValue), .time(now)])
    }

    /// Takes `userID`'s role away; returns the role it held, `nil` when it held none.
    func revoke(userID: String, on connection: any SQLConnection) throws -> AdminRole? {
        guard let role = try role(userID: userID, on: connection) else { return nil }
        return try connection.execute("DELETE FROM admin_roles WHERE user_id = ?", [.text(userID)]) == 1 ? role : nil
    }

    /// The role `userID` holds, `nil` for none.
    func role(userID: String, on connection: any SQLConnection) throws -> AdminRole? {
        try connection.queryOne("SELECT role FROM admin_roles WHERE user_id = ?", [.text(userID)]).flatMap {
            AdminRole(rawValue: try $0.string("role"))
        }
    }

    /// Every account holding a role, by the time it was granted.
    func grants(on connection: any SQLConnection) throws -> [AdminGrant] {
        try connection.query(
            """
            SELECT admin_roles.role, admin_roles.granted_at, \(UserRepository.accountColumns)
            FROM admin_roles JOIN users ON users.id = admin_roles.user_id ORDER BY admin_roles.granted_at, admin_roles.user_id
            """, []
        ).map { row in
            AdminGrant(
                user: try UserRepository.user(row, prefix: "account_"), role: AdminRole(rawValue: try row.string("role")) ?? .support,
                grantedAt: try row.date("granted_at"))
        }
    }

    // MARK: Users

    /// Users newest first, after `cursor`, each with what the listing shows of it; with a
    /// query, only those whose lowercased email, given name or family name, or whose username,
    /// starts with `query.prefix`, or whose id is `query.id`.
    ///
    /// - Parameter query: The prefix, lowercased (each match is a range over its index), and the
    ///   query as typed, for the id.
    func users(
        matching query: (prefix: String, id: String)?, after cursor: AdminCursor?, limit: Int, on connection: any SQLConnection
    ) throws -> [AdminUserSummary] {
        let (sql, bindings) = usersQuery(matching: query, after: cursor, limit: limit)
        return try summaries(connection.query(sql, bindings))
    }

    /// What the listing shows of one user, `nil` when there is no such user.
    func user(id: String, on connection: any SQLConnection) throws -> AdminUserSummary? {
        let (sql, bindings) = Self.summariesQuery(page: "SELECT * FROM users WHERE id = ?", [.text(id)])
        return try summaries(connection.query(sql, bindings)).first
    }

    /// The statement of ``users(matching:after:limit:on:)``, for its contract test to explain.
    ///
    /// The page is chosen first, by the `(created_at, id)` index or the search indexes, then
    /// only its rows are joined to what the listing shows: one statement a page, whatever its
    /// size, with each lookup an index probe by user id.
    func usersQuery(matching query: (prefix: String, id: String)?, after cursor: AdminCursor?, limit: Int) -> (sql: String, bindings: [SQLValue]) {
        var conditions: [String] = []
        var bindings: [SQLValue] = []
        if let cursor {
            // A row value is one range over the index, where the equivalent OR is not.
            conditions.append("(created_at, id) < (?, ?)")
            bindings += [.time(cursor.time), .text(cursor.id)]
        }
        if let (prefix, id) = query {
            // One bounded range per index; the end is the prefix followed by the highest code
            // point, above every byte sequence that continues the prefix.
            let (low, high) = (SQLValue.text(prefix), SQLValue.text(prefix + "\u{10FFFF}"))
            let range = { (expression: String) in "\(expression)\(self.bytewise) >= ? AND \(expression)\(self.bytewise) < ?" }
            conditions.append(
                """
                id IN (
                    SELECT id FROM users WHERE \(range("lower(email)"))
                    UNION SELECT id FROM users WHERE \(range("lower(given_name)"))
                    UNION SELECT id FROM users WHERE \(range("lower(family_name)"))
                    UNION SELECT user_id FROM password_credentials WHERE \(range("username"))
                    UNION SELECT id FROM users WHERE id = ?
                )
                """)
            bindings += [low, high, low, high, low, high, low, high, .text(id)]
        }
        bindings.append(.integer(Int64(limit)))
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return Self.summariesQuery(page: "SELECT * FROM users\(filter) ORDER BY created_at DESC, id DESC LIMIT ?", bindings)
    }

    /// The users `page` selects (a `SELECT * FROM users …`), each with its username, its newest
    /// session's creation (its last sign-in, ended or not), whether it has each second factor
    /// and a passkey, and one row per identity (`provider` is NULL without any). The rows come
    /// in no order: ``summaries(_:)`` puts them back in the page's.
    private static func summariesQuery(page: String, _ bindings: [SQLValue]) -> (sql: String, bindings: [SQLValue]) {
        let exists = { (table: String, condition: String) in "EXISTS (SELECT 1 FROM \(table) WHERE \(table).user_id = page.id\(condition))" }
        return (
            """
            SELECT page.*, password_credentials.username, identities.provider,
                (SELECT max(sessions.created_at) FROM sessions WHERE sessions.user_id = page.id) AS last_sign_in_at,
                \(exists("device_keys", "")) AS has_device_key,
                \(exists("totp_factors", " AND totp_factors.confirmed_at IS NOT NULL")) AS has_totp,
                \(exists("recovery_codes", " AND recovery_codes.used_at IS NULL")) AS has_recovery_code,
                \(exists("passkeys", "")) AS has_passkey
            FROM (\(page)) AS page
            LEFT JOIN password_credentials ON password_credentials.user_id = page.id
            LEFT JOIN identities ON identities.user_id = page.id
            """, bindings
        )
    }

    /// Folds the rows of ``summariesQuery(page:_:)`` into one summary a user, newest first.
    ///
    /// The methods and factors are those ``SecondFactors/list(userID:on:)`` and the sign-in
    /// methods give: recovery codes count beside a confirmed TOTP, a passkey as a factor beside
    /// another one.
    private func summaries(_ rows: [SQLRow]) throws -> [AdminUserSummary] {
        var summaries: [String: AdminUserSummary] = [:]
        var providers: [String: Set<String>] = [:]
        var passkeys: Set<String> = []
        for row in rows {
            let user = try UserRepository.user(row)
            if let provider = row.optionalString("provider") { providers[user.id, default: []].insert(provider) }
            guard summaries[user.id] == nil else { continue }
            let (deviceKey, totp) = (try row.bool("has_device_key"), try row.bool("has_totp"))
            if try row.bool("has_passkey") { passkeys.insert(user.id) }
            var factors: [String] = []
            if deviceKey { factors.append("device_key") }
            if totp { factors.append("totp") }
            if totp, try row.bool("has_recovery_code") { factors.append("recovery_code") }
            if !factors.isEmpty, passkeys.contains(user.id) { factors.append("passkey") }
            let username = row.optionalString("username")
            summaries[user.id] = AdminUserSummary(
                user: user, username: username, lastSignInAt: row.optionalDate("last_sign_in_at"), disabledAt: row.optionalDate("disabled_at"),
                methods: username == nil ? [] : ["password"], factors: factors.sorted())
        }
        return summaries.values.map { summary in
            var summary = summary
            summary.methods += (providers[summary.user.id] ?? []).sorted() + (passkeys.contains(summary.user.id) ? ["passkey"] : [])
            return summary
        }.sorted { ($0.user.createdAt, $0.user.id) > ($1.user.createdAt, $1.user.id) }
    }

    // MARK: Stats

    /// Counts for `GET /v1/admin/stats`, read in one snapshot.
    func stats(now: Date, on connection: any SQLConnection) throws -> AdminStats {
        let count = { (sql: String, bindings: [SQLValue]) in try connection.queryOne(sql, bindings)?.int("n") ?? 0 }
        let since = now.addingTimeInterval(-86_400)
        var events: [String: [String: Int64]] = [:]
        for row in try connection.query(
            "SELECT event, outcome, count(*) AS n FROM audit_log WHERE time >= ? GROUP BY event, outcome", [.time(since)])
        {
            events[try row.string("event"), default: [:]][try row.string("outcome")] = try row.int("n")
        }
        // Apple revocations and mail share the outbox; both are listed, empty or not.
        var outbox: [String: Int64] = ["apple_revocation": 0, "mail": 0]
        for row in try connection.query("SELECT kind, count(*) AS n FROM outbox GROUP BY kind", []) {
            outbox[try row.string("kind")] = try row.int("n")
        }
        return AdminStats(
            accounts: try count("SELECT count(*) AS n FROM users", []),
            liveSessions: try count(
                "SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL AND idle_expires_at > ? AND absolute_expires_at > ?",
                [.time(now), .time(now)]),
            events: events, outboxDepths: outbox)
    }

    // MARK: The audit log

    /// What `GET /v1/admin/audit` filters on; every member is optional.
    struct AuditFilter: Sendable, Hashable {
        var userID: String?
        var event: String?
        /// At or after.
        var since: Date?
        /// Before.
        var until: Date?
    }

    /// Audit entries newest first after `cursor` (whose id is the entry's row id), with their
    /// row ids.
    func audit(_ filter: AuditFilter, after cursor: AdminCursor?, limit: Int, on connection: any SQLConnection) throws -> [(
        id: Int64, entry: AuditLog.Entry
    )] {
        var conditions: [String] = []
        var bindings: [SQLValue] = []
        if let userID = filter.userID {
            conditions.append("user_id = ?")
            bindings.append(.text(userID))
        }
        if let event = filter.event {
            conditions.append("event = ?")
            bindings.append(.text(event))
        }
        if let since = filter.since {
            conditions.append("time >= ?")
            bindings.append(.time(since))
        }
        if let until = filter.until {
            conditions.append("time < ?")
            bindings.append(.time(until))
        }
        if let cursor {
            guard let id = Int64(cursor.id) else { throw AuthError.invalidRequest("cursor is not one this server handed out") }
            conditions.append("(time, id) < (?, ?)")
            bindings += [.time(cursor.time), .integer(id)]
        }
        bindings.append(.integer(Int64(limit)))
        let clause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return try connection.query(
            "SELECT id, time, user_id, event, outcome, ip, request_id, details FROM audit_log\(clause) ORDER BY time DESC, id DESC LIMIT ?",
            bindings
        ).map { row in
            (
                try row.int("id"),
                AuditLog.Entry(
                    time: try row.date("time"), userID: row.optionalString("user_id"), event: AuditEvent(rawValue: try row.string("event")),
                    outcome: AuditOutcome(rawValue: try row.string("outcome")), ip: row.optionalString("ip"),
                    requestID: row.optionalString("request_id"), details: try AuditLog.decode(row.string("details")))
            )
        }
    }
}
