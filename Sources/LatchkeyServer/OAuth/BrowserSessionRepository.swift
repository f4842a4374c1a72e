import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The `browser_sessions` table. A row keeps only the SHA-256 hash of its cookie's token (S29).
///
/// Ending is a compare-and-set (`… WHERE ended_at IS NULL`) whose row count the caller acts on.
struct BrowserSessionRepository: Sendable {
    /// Inserts a new session inside the caller's transaction.
    func insert(
        _ session: BrowserSession, tokenHash: [UInt8], ip: String?, userAgent: String?, on connection: any SQLConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO browser_sessions (id, token_hash, user_id, amr, auth_time, created_at, last_used_at, expires_at, user_agent, ip)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(session.id), .blob(tokenHash), .text(session.userID), .text(Self.amrText(session.amr)), .time(session.authTime),
                .time(session.createdAt), .time(session.createdAt), .time(session.expiresAt), SQLValue(userAgent), SQLValue(ip),
            ])
    }

    /// The session whose token has this hash, if it has not ended and expires after `now`.
    func live(tokenHash: [UInt8], at now: Date, on connection: any SQLConnection) throws -> BrowserSession? {
        try connection.queryOne(
            "SELECT * FROM browser_sessions WHERE token_hash = ? AND ended_at IS NULL AND expires_at > ?", [.blob(tokenHash), .time(now)]
        ).map(Self.session)
    }

    /// Records a use at `at`; a session that ended meanwhile is left alone.
    func touch(id: String, at: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            "UPDATE browser_sessions SET last_used_at = ? WHERE id = ? AND ended_at IS NULL", [.time(at), .text(id)])
    }

    /// Compare-and-set: ends the session whose token has this hash, only if it has not ended.
    ///
    /// - Returns: The session this call ended, or `nil` (unknown token, or ended already).
    func end(tokenHash: [UInt8], reason: String, at: Date, on connection: any SQLConnection) throws -> BrowserSession? {
        guard let row = try connection.queryOne("SELECT * FROM browser_sessions WHERE token_hash = ?", [.blob(tokenHash)]) else {
            return nil
        }
        let session = try Self.session(row)
        guard try connection.execute(
            "UPDATE browser_sessions SET ended_at = ?, ended_reason = ? WHERE id = ? AND ended_at IS NULL",
            [.time(at), .text(reason), .text(session.id)]) == 1
        else { return nil }
        return session
    }

    /// Ends every browser session of a user that has not ended, inside the caller's transaction
    /// (the events that end all of a user's API sessions end these too, S29).
    ///
    /// - Returns: The ids of the sessions this call ended, each ended by a compare-and-set.
    func endAll(userID: String, reason: String, at: Date, on connection: any SQLConnection) throws -> [String] {
        let ids = try connection.query(
            "SELECT id FROM browser_sessions WHERE user_id = ? AND ended_at IS NULL ORDER BY created_at, id", [.text(userID)]
        ).map { try $0.string("id") }
        var ended = [String]()
        for id in ids {
            if try connection.execute(
                "UPDATE browser_sessions SET ended_at = ?, ended_reason = ? WHERE id = ? AND ended_at IS NULL",
                [.time(at), .text(reason), .text(id)]) == 1
            {
                ended.append(id)
            }
        }
        return ended
    }

    static func amrText(_ amr: [String]) -> String {
        JSONValue.array(amr.map(JSONValue.string)).serializedString
    }

    /// A `browser_sessions` row.
    static func session(_ row: SQLRow) throws -> BrowserSession {
        let amr = (try? JSONValue(parsing: Array(try row.string("amr").utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        return BrowserSession(
            id: try row.string("id"), userID: try row.string("user_id"), amr: amr, authTime: try row.date("auth_time"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"))
    }
}
