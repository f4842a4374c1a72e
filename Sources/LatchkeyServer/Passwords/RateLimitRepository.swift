import FoundationEssentials
import LatchkeyStore

/// The `rate_limits` table: failure counters and blocks per account and per address (S14).
///
/// Every write is one statement whose result the caller acts on, so counters neither lose
/// increments nor blocks when several server processes count failures on one key at once.
struct RateLimitRepository: Sendable {
    /// When the block on `key` ends; `nil` when it never had one.
    func blockedUntil(key: String, on connection: any SQLConnection) throws -> Date? {
        try connection.queryOne("SELECT blocked_until FROM rate_limits WHERE key = ?", [.text(key)])?.optionalDate("blocked_until")
    }

    /// Counts one failure on `key` in a single upsert: the window restarts (at `now`, with one
    /// failure) only when it started at or before `windowStartedBefore` and no block is running
    /// at `now`; otherwise the count goes up by one.
    ///
    /// - Returns: The failures in the key's window, this one included.
    func recordFailure(key: String, now: Date, windowStartedBefore cutoff: Date, on connection: any SQLConnection) throws -> Int {
        try count(key: key, now: now, windowStartedBefore: cutoff, on: connection).count
    }

    /// ``recordFailure(key:now:windowStartedBefore:on:)`` for any event counted in a window (the
    /// email-flow requests), with when the window started.
    func count(key: String, now: Date, windowStartedBefore cutoff: Date, on connection: any SQLConnection) throws -> (count: Int, windowStart: Date) {
        let row = try connection.queryOne(
            """
            INSERT INTO rate_limits (key, window_start, failures, blocked_until) VALUES (?, ?, 1, NULL)
            ON CONFLICT (key) DO UPDATE SET
                failures = CASE WHEN rate_limits.window_start <= ? AND (rate_limits.blocked_until IS NULL OR rate_limits.blocked_until <= ?)
                    THEN 1 ELSE rate_limits.failures + 1 END,
                window_start = CASE WHEN rate_limits.window_start <= ? AND (rate_limits.blocked_until IS NULL OR rate_limits.blocked_until <= ?)
                    THEN excluded.window_start ELSE rate_limits.window_start END
            RETURNING failures, window_start
            """,
            [.text(key), .time(now), .time(cutoff), .time(now), .time(cutoff), .time(now)])
        guard let row else { throw StoreError.typeMismatch("rate_limits upsert returned no row") }
        return (Int(try row.int("failures")), try row.date("window_start"))
    }

    /// Blocks `key` until `until`, unless a block that ends later is already set: blocks only
    /// ever grow, whatever order concurrent failures write them in.
    ///
    /// - Returns: Whether this call moved the block's end.
    @discardableResult
    func extendBlock(key: String, until: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE rate_limits SET blocked_until = ? WHERE key = ? AND (blocked_until IS NULL OR blocked_until < ?)",
            [.time(until), .text(key), .time(until)]) > 0
    }

    /// Forgets `key`'s failures and block.
    ///
    /// - Returns: Whether there was a counter to forget.
    func delete(key: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM rate_limits WHERE key = ?", [.text(key)]) > 0
    }
}
