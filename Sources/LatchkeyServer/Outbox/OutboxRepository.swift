import FoundationEssentials
import LatchkeyStore

/// One piece of work in the outbox: its sealed payload and its delivery state.
struct OutboxItem: Sendable, Hashable {
    var id: String
    /// Which sender handles it: `apple_revocation`, `mail`.
    var kind: String
    /// Sealed under the master key, with the context its sender uses.
    var payload: [UInt8]
    /// Whose it is, for its audit entry; no foreign key, it may outlive the account.
    var userID: String?
    /// What it is, in words that are no secret: an Apple client id, a mail purpose.
    var label: String?
    var createdAt: Date
    /// Failed attempts so far.
    var attempts: Int
    /// When it is due; while a sender holds it, the end of that sender's lease.
    var nextAttemptAt: Date
    /// After this, a failed attempt drops it instead of retrying.
    var giveUpAt: Date
    var lastError: String?
}

/// The `outbox` table: work written in the transaction that decided it and done later, by
/// whichever process claims it first.
///
/// A sender claims a due row by moving its `next_attempt_at` to the end of a lease; that value is
/// the claim, and only the claimer deletes the row or schedules its retry, so two processes never
/// both act on one item. A claimed row's new `next_attempt_at` is later than the one it replaced
/// (the row was due), so a claim is never handed out twice.
struct OutboxRepository: Sendable {
    /// Queues an item inside the caller's transaction.
    func insert(_ item: OutboxItem, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO outbox (id, kind, payload, user_id, label, created_at, attempts, next_attempt_at, give_up_at, last_error)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(item.id), .text(item.kind), .blob(item.payload), SQLValue(item.userID), SQLValue(item.label), .time(item.createdAt),
                .integer(Int64(item.attempts)),
                .time(item.nextAttemptAt), .time(item.giveUpAt), SQLValue(item.lastError),
            ])
    }

    /// Items of `kind` due at `now`, the longest waiting first.
    func due(kind: String, at now: Date, limit: Int, on connection: any SQLConnection) throws -> [OutboxItem] {
        try connection.query(
            "SELECT * FROM outbox WHERE kind = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
            [.text(kind), .time(now), .integer(Int64(limit))]
        ).map(Self.item)
    }

    /// Compare-and-set: claims an item that is due at `now` until `leaseEnd` (later than `now`),
    /// skipping a row another PostgreSQL instance is claiming at this moment.
    ///
    /// - Returns: The claim for ``delete(id:claim:on:)`` and ``release(id:claim:retryAt:error:on:)``,
    ///   or `nil` when the item is gone or another sender holds it.
    func claim(id: String, dueAt now: Date, until leaseEnd: Date, on connection: any SQLConnection) throws -> Date? {
        let changed = try connection.execute(
            """
            UPDATE outbox SET next_attempt_at = ?
            WHERE id = (SELECT id FROM outbox WHERE id = ? AND next_attempt_at <= ? FOR UPDATE SKIP LOCKED)
            """, [.time(leaseEnd), .text(id), .time(now)])
        return changed == 1 ? Date(timeIntervalSince1970: TimeInterval(SQLValue.time(leaseEnd).integerValue ?? 0)) : nil
    }

    /// Compare-and-set: deletes a finished item, only while `claim` holds.
    ///
    /// - Returns: Whether this call deleted it.
    func delete(id: String, claim: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM outbox WHERE id = ? AND next_attempt_at = ?", [.text(id), .time(claim)]) == 1
    }

    /// Compare-and-set: records a failed attempt and schedules the retry, only while `claim` holds.
    ///
    /// - Returns: Whether the claim still held.
    func release(id: String, claim: Date, retryAt: Date, error: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ? AND next_attempt_at = ?",
            [.time(retryAt), .text(error), .text(id), .time(claim)]) == 1
    }

    /// How many items of `kind` wait; with `userID`, only that user's.
    func count(kind: String, userID: String? = nil, on connection: any SQLConnection) throws -> Int {
        let row = if let userID {
            try connection.queryOne("SELECT count(*) AS n FROM outbox WHERE kind = ? AND user_id = ?", [.text(kind), .text(userID)])
        } else {
            try connection.queryOne("SELECT count(*) AS n FROM outbox WHERE kind = ?", [.text(kind)])
        }
        return Int(try row?.int("n") ?? 0)
    }

    static func item(_ row: SQLRow) throws -> OutboxItem {
        OutboxItem(
            id: try row.string("id"), kind: try row.string("kind"), payload: try row.blob("payload"), userID: row.optionalString("user_id"),
            label: row.optionalString("label"), createdAt: try row.date("created_at"),
            attempts: Int(try row.int("attempts")), nextAttemptAt: try row.date("next_attempt_at"), giveUpAt: try row.date("give_up_at"),
            lastError: row.optionalString("last_error"))
    }
}
