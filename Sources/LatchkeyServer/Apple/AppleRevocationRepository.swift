import FoundationEssentials
import LatchkeyStore

/// One queued revocation of an Apple refresh token.
struct AppleRevocation: Sendable, Hashable {
    var id: String
    /// The deleted account it came from; no foreign key, the row outlives the account.
    var userID: String
    var clientID: String
    /// The refresh token, sealed under the master key (context ``AppleRevocationOutbox``'s).
    var sealedToken: [UInt8]
    var createdAt: Date
    /// How many sends failed so far.
    var attempts: Int
    /// When it is due; while a sender holds it, the end of that sender's lease.
    var nextAttemptAt: Date
    var lastError: String?
}

/// The `apple_revocations` table: the outbox of Apple refresh tokens to revoke at Apple.
///
/// A sender claims a due row by moving its `next_attempt_at` to the end of a lease; that new
/// value is the claim. Only the claimer may delete the row or schedule its retry
/// (``delete(id:claim:on:)``, ``release(id:claim:retryAt:error:on:)``), so two processes never
/// both act on one send. A claimed row's new `next_attempt_at` is always later than the one it
/// replaced (the row was due), so a claim value is never handed out twice.
struct AppleRevocationRepository: Sendable {
    /// Queues a revocation inside the caller's transaction.
    func insert(_ revocation: AppleRevocation, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO apple_revocations (id, user_id, client_id, token, created_at, attempts, next_attempt_at, last_error)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(revocation.id), .text(revocation.userID), .text(revocation.clientID), .blob(revocation.sealedToken),
                .time(revocation.createdAt), .integer(Int64(revocation.attempts)), .time(revocation.nextAttemptAt), SQLValue(revocation.lastError),
            ])
    }

    /// Revocations due at `now`, the longest waiting first.
    func due(at now: Date, limit: Int, on connection: any SQLConnection) throws -> [AppleRevocation] {
        try connection.query(
            "SELECT * FROM apple_revocations WHERE next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
            [.time(now), .integer(Int64(limit))]
        ).map(Self.revocation)
    }

    /// Compare-and-set: claims a revocation that is due at `now` until `leaseEnd` (later than `now`).
    ///
    /// The row is chosen with `FOR UPDATE SKIP LOCKED`: on PostgreSQL a row another instance is
    /// claiming at this moment is skipped rather than waited for; SQLite's one writer claims
    /// alone (its connection drops the clause).
    ///
    /// - Returns: The claim to pass to ``delete(id:claim:on:)`` or ``release(id:claim:retryAt:error:on:)``,
    ///   or `nil` when the row is gone or another sender holds it.
    func claim(id: String, dueAt now: Date, until leaseEnd: Date, on connection: any SQLConnection) throws -> Date? {
        let changed = try connection.execute(
            """
            UPDATE apple_revocations SET next_attempt_at = ?
            WHERE id = (SELECT id FROM apple_revocations WHERE id = ? AND next_attempt_at <= ? FOR UPDATE SKIP LOCKED)
            """, [.time(leaseEnd), .text(id), .time(now)])
        return changed == 1 ? Date(timeIntervalSince1970: TimeInterval(Self.seconds(leaseEnd))) : nil
    }

    /// Compare-and-set: deletes a revocation Apple accepted, only while `claim` holds.
    ///
    /// - Returns: Whether this call deleted it (false: the lease ran out and another sender claimed it).
    func delete(id: String, claim: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM apple_revocations WHERE id = ? AND next_attempt_at = ?", [.text(id), .time(claim)]) == 1
    }

    /// Compare-and-set: records a failed send and schedules the retry, only while `claim` holds.
    ///
    /// - Returns: Whether the claim still held.
    func release(id: String, claim: Date, retryAt: Date, error: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE apple_revocations SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ? AND next_attempt_at = ?",
            [.time(retryAt), .text(error), .text(id), .time(claim)]) == 1
    }

    /// How many revocations of a (deleted) user are still queued.
    func count(userID: String, on connection: any SQLConnection) throws -> Int {
        Int(try connection.queryOne("SELECT count(*) AS n FROM apple_revocations WHERE user_id = ?", [.text(userID)])?.int("n") ?? 0)
    }

    /// Whole unix seconds, as the table stores times.
    private static func seconds(_ date: Date) -> Int64 {
        SQLValue.time(date).integerValue ?? 0
    }

    static func revocation(_ row: SQLRow) throws -> AppleRevocation {
        AppleRevocation(
            id: try row.string("id"), userID: try row.string("user_id"), clientID: try row.string("client_id"), sealedToken: try row.blob("token"),
            createdAt: try row.date("created_at"), attempts: Int(try row.int("attempts")), nextAttemptAt: try row.date("next_attempt_at"),
            lastError: row.optionalString("last_error"))
    }
}
