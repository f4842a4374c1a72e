import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The console's SQL: the `console_sessions` table, whose rows keep only the SHA-256 hash of
/// their cookie's token and end by a compare-and-set (`… WHERE ended_at IS NULL`), and the
/// overview chart's counts.
struct ConsoleRepository: Sendable {
    func insert(_ session: ConsoleSession, tokenHash: [UInt8], on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO console_sessions (id, token_hash, user_id, session_id, amr, auth_time, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(session.id), .blob(tokenHash), .text(session.userID), .text(session.sessionID),
                .text(BrowserSessionRepository.amrText(session.amr)), .time(session.authTime), .time(session.createdAt), .time(session.expiresAt),
            ])
    }

    /// The session whose token has this hash, if it has not ended and expires after `now`.
    func live(tokenHash: [UInt8], at now: Date, on connection: any SQLConnection) throws -> ConsoleSession? {
        try connection.queryOne(
            "SELECT * FROM console_sessions WHERE token_hash = ? AND ended_at IS NULL AND expires_at > ?", [.blob(tokenHash), .time(now)]
        ).map { row in
            let amr = (try? JSONValue(parsing: Array(try row.string("amr").utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
            return ConsoleSession(
                id: try row.string("id"), userID: try row.string("user_id"), sessionID: try row.string("session_id"), amr: amr,
                authTime: try row.date("auth_time"), createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"))
        }
    }

    /// Compare-and-set: ends the session, only if it has not ended.
    ///
    /// - Returns: Whether this call ended it.
    func end(id: String, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("UPDATE console_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL", [.time(now), .text(id)]) == 1
    }

    /// Sign-ins of the last hours, by the hour they started in (seconds since 1970 / 3600) and
    /// whether they succeeded: the audit entries of ``ConsoleService/signInEvents``.
    func signInHours(since: Date, on connection: any SQLConnection) throws -> [(hour: Int64, succeeded: Bool, count: Int64)] {
        let events = ConsoleService.signInEvents.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        return try connection.query(
            """
            SELECT time / 3600 AS hour, CASE WHEN outcome = 'success' THEN 1 ELSE 0 END AS ok, count(*) AS n
            FROM audit_log WHERE time >= ? AND event IN (\(events)) GROUP BY 1, 2
            """, [.time(since)]
        ).map { (hour: try $0.int("hour"), succeeded: try $0.int("ok") == 1, count: try $0.int("n")) }
    }
}
