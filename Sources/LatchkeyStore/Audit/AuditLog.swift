package import FoundationEssentials
import LatchkeyJSON

/// The audit log (S27): who did what, when, from where, and how it ended.
///
/// Record an entry with ``record(_:on:)`` inside the write transaction of the change it
/// describes, so both commit together or neither does (S28): a sign-in that rolls back leaves no
/// "success" entry, and a committed change never lacks its entry. Use ``record(_:)`` for events
/// that change nothing else (a failed login).
///
/// Entries keep the user id after the user is deleted; they never hold a secret (S26), so
/// ``Entry/details`` carries ids, reasons and counts, never tokens, codes or passwords.
///
/// This is the pattern for every repository: portable SQL through the database's
/// ``SQLDialect``, one method taking a connection for use inside a caller's transaction, and
/// an `async` convenience that opens its own.
package struct AuditLog: Sendable {
    /// One event.
    package struct Entry: Sendable, Hashable {
        /// When it happened; stored in whole seconds.
        package var time: Date
        /// The user concerned, when known.
        package var userID: String?
        /// What happened, for example `password.login`, `session.reuse_detected`, `device_key.added`.
        package var event: AuditEvent
        /// How it ended, for example `success`, `failure`, `rate_limited`.
        package var outcome: AuditOutcome
        /// The client's address.
        package var ip: String?
        /// The request it came from, to find the matching log lines.
        package var requestID: String?
        /// More facts, as strings; never a secret.
        package var details: [String: String]

        /// Creates an entry.
        ///
        /// - Parameters:
        ///   - time: When it happened.
        ///   - userID: The user concerned, when known.
        ///   - event: What happened.
        ///   - outcome: How it ended.
        ///   - ip: The client's address.
        ///   - requestID: The request it came from.
        ///   - details: More facts; never a secret.
        package init(
            time: Date, userID: String? = nil, event: AuditEvent, outcome: AuditOutcome, ip: String? = nil,
            requestID: String? = nil, details: [String: String] = [:]
        ) {
            self.time = time
            self.userID = userID
            self.event = event
            self.outcome = outcome
            self.ip = ip
            self.requestID = requestID
            self.details = details
        }
    }

    /// The database the log lives in.
    package let database: any SQLDatabase

    /// Creates the log's repository over a migrated database.
    ///
    /// - Parameter database: The database.
    package init(database: any SQLDatabase) {
        self.database = database
    }

    /// Records `entry` inside the caller's transaction, unawaited
    /// (``SQLConnection/executeUnawaited(_:_:)``): on PostgreSQL it rides with the
    /// transaction's next statement or its commit.
    ///
    /// - Parameters:
    ///   - entry: The event.
    ///   - connection: The connection of the write transaction that makes the change.
    /// - Throws: ``StoreError``.
    package func record(_ entry: Entry, on connection: any SQLConnection) throws {
        try connection.executeUnawaited(
            """
                INSERT INTO audit_log (time, user_id, event, outcome, ip, request_id, details)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            [
                .time(entry.time), SQLValue(entry.userID), .text(entry.event.rawValue), .text(entry.outcome.rawValue), SQLValue(entry.ip),
                SQLValue(entry.requestID), .text(Self.encode(entry.details)),
            ])
    }

    /// Records `entry` in a transaction of its own.
    ///
    /// - Parameter entry: The event.
    /// - Throws: ``StoreError``.
    package func record(_ entry: Entry) async throws {
        try await database.write { try self.record(entry, on: $0) }
    }

    /// Strips the IP address and details from a deleted user's entries inside the caller's
    /// transaction; the user id, event, outcome and time stay (docs/reference.md, "Account deletion").
    ///
    /// - Parameters:
    ///   - userID: The deleted user.
    ///   - connection: The connection of the deletion's write transaction.
    /// - Returns: How many entries were scrubbed.
    /// - Throws: ``StoreError``.
    @discardableResult
    package func scrub(userID: String, on connection: any SQLConnection) throws -> Int {
        try connection.execute("UPDATE audit_log SET ip = NULL, details = '{}' WHERE user_id = ?", [.text(userID)])
    }

    /// The newest entries first, optionally for one user, one event and/or a time onwards.
    ///
    /// - Parameters:
    ///   - userID: Only this user's entries.
    ///   - event: Only this event's entries.
    ///   - since: Only entries at or after this time (compared in whole seconds, as stored).
    ///   - limit: At most this many, at least 0.
    /// - Returns: The entries, newest first.
    /// - Throws: ``StoreError``; ``StoreError/Code/misuse`` for a negative limit.
    package func entries(userID: String? = nil, event: String? = nil, since: Date? = nil, limit: Int = 100) async throws -> [Entry] {
        guard limit >= 0 else { throw StoreError.misuse("audit log limit must be at least 0, got \(limit)") }
        // Fixed fragments only; the values travel as bindings.
        var conditions: [String] = []
        var bindings: [SQLValue] = []
        if let userID {
            conditions.append("user_id = ?")
            bindings.append(.text(userID))
        }
        if let event {
            conditions.append("event = ?")
            bindings.append(.text(event))
        }
        if let since {
            conditions.append("time >= ?")
            bindings.append(.time(since))
        }
        bindings.append(.integer(Int64(limit)))
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql =
            "SELECT time, user_id, event, outcome, ip, request_id, details FROM audit_log\(filter)"
            + " ORDER BY time DESC, id DESC LIMIT ?"
        return try await database.read { [bindings] connection in
            try connection.query(sql, bindings).map { row in
                Entry(
                    time: try row.date("time"), userID: row.optionalString("user_id"), event: AuditEvent(rawValue: try row.string("event")),
                    outcome: AuditOutcome(rawValue: try row.string("outcome")), ip: row.optionalString("ip"),
                    requestID: row.optionalString("request_id"), details: try Self.decode(row.string("details")))
            }
        }
    }

    /// A flat JSON object of strings with sorted keys, through the project's JSON serializer
    /// (Foundation's encoder cost more than the insert on every sign-in and refresh).
    static func encode(_ details: [String: String]) -> String {
        details.isEmpty ? "{}" : JSONValue.object(details.mapValues(JSONValue.string)).serializedString
    }

    package static func decode(_ json: String) throws -> [String: String] {
        guard json != "{}" else { return [:] }
        guard case .object(let members)? = try? JSONValue(parsing: Array(json.utf8)) else {
            throw StoreError.typeMismatch("audit_log.details is not a JSON object of strings")
        }
        var details = [String: String]()
        for (name, value) in members {
            guard let text = value.stringValue else { throw StoreError.typeMismatch("audit_log.details is not a JSON object of strings") }
            details[name] = text
        }
        return details
    }
}
