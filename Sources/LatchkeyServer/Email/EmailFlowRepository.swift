import FoundationEssentials
import LatchkeyStore

/// The `email_flows` table.
///
/// A flow ends once: every write that ends it or counts a wrong code is a compare-and-set on
/// `ended_at IS NULL`, whose result the caller acts on, so concurrent confirmations of one flow
/// (on one process or several) produce one success.
struct EmailFlowRepository: Sendable {
    /// Inserts a flow inside the caller's transaction.
    func insert(_ flow: EmailFlow, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO email_flows (id, purpose, email, user_id, new_email, may_create, token_hash, code_hash, attempts, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
            """,
            [
                .text(flow.id), .text(flow.purpose.rawValue), .text(flow.email), SQLValue(flow.userID), SQLValue(flow.newEmail),
                .bool(flow.mayCreate), .blob(flow.tokenHash), .blob(flow.codeHash), .time(flow.createdAt), .time(flow.expiresAt),
            ])
    }

    /// Ends every open flow of `purpose` for `email` (a newer one replaces them).
    ///
    /// - Returns: How many it ended.
    @discardableResult
    func supersede(email: String, purpose: EmailPurpose, now: Date, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            "UPDATE email_flows SET ended_at = ?, ended_reason = 'superseded' WHERE email = ? AND purpose = ? AND ended_at IS NULL",
            [.time(now), .text(email), .text(purpose.rawValue)])
    }

    func find(id: String, on connection: any SQLConnection) throws -> EmailFlow? {
        try connection.queryOne("SELECT * FROM email_flows WHERE id = ?", [.text(id)]).map(Self.flow)
    }

    func find(tokenHash: [UInt8], on connection: any SQLConnection) throws -> EmailFlow? {
        try connection.queryOne("SELECT * FROM email_flows WHERE token_hash = ?", [.blob(tokenHash)]).map(Self.flow)
    }

    /// Compare-and-set: ends an open flow.
    ///
    /// - Returns: Whether this call ended it (false: it had ended already).
    func end(id: String, reason: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE email_flows SET ended_at = ?, ended_reason = ? WHERE id = ? AND ended_at IS NULL",
            [.time(now), .text(reason), .text(id)]) == 1
    }

    /// Compare-and-set: counts a wrong code on an open flow, and ends it with
    /// `too_many_attempts` when that was the last one it survives.
    ///
    /// - Returns: Whether the count was taken (false: the flow had ended already).
    func recordWrongCode(id: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE email_flows SET attempts = attempts + 1,
                ended_at = CASE WHEN attempts + 1 >= ? THEN ? ELSE NULL END,
                ended_reason = CASE WHEN attempts + 1 >= ? THEN 'too_many_attempts' ELSE NULL END
            WHERE id = ? AND ended_at IS NULL
            """,
            [.integer(Int64(EmailFlow.maximumAttempts)), .time(now), .integer(Int64(EmailFlow.maximumAttempts)), .text(id)]) == 1
    }

    static func flow(_ row: SQLRow) throws -> EmailFlow {
        guard let purpose = EmailPurpose(rawValue: try row.string("purpose")) else {
            throw StoreError.typeMismatch("email_flows.purpose holds an unknown purpose")
        }
        return EmailFlow(
            id: try row.string("id"), purpose: purpose, email: try row.string("email"), userID: row.optionalString("user_id"),
            newEmail: row.optionalString("new_email"), mayCreate: try row.bool("may_create"), tokenHash: try row.blob("token_hash"),
            codeHash: try row.blob("code_hash"), attempts: Int(try row.int("attempts")), createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"), endedAt: row.optionalDate("ended_at"), endedReason: row.optionalString("ended_reason"))
    }
}
