import FoundationEssentials
import LatchkeyStore

/// The server's periodic work, in every process: Apple's keys kept fresh, the Apple revocation
/// outbox sent, stored Apple refresh tokens validated, and rows that have done their job
/// deleted. Every 30 to 60 seconds, jittered so several processes do not fall into step; the
/// first pass comes after the first wait.
struct Housekeeping: Sendable {
    let apple: AppleService
    let database: any SQLDatabase
    let clock: @Sendable () -> Date

    /// Runs ``runOnce()`` periodically until the task is cancelled.
    func start() -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(.random(in: 30...60)))
                guard !Task.isCancelled else { return }
                if !apple.settings.clientIDs.isEmpty { await apple.keys.refreshIfStale() }
                try? await runOnce()
            }
        }
    }

    /// One pass; a failing step does not stop the others.
    func runOnce() async throws {
        var failure: (any Error)?
        do { try await apple.outbox.runDue() } catch { failure = error }
        do { try await apple.validateDueTokens() } catch { failure = error }
        do { try await purgeExpired() } catch { failure = error }
        if let failure { throw failure }
    }

    /// Deletes what has served its purpose: remembered Apple identity tokens and notifications
    /// past their expiry, refresh-token tombstones of sessions that would have ended, spent or
    /// expired challenges and MFA tokens, and login counters whose window and block are over
    /// (equivalent to no row at all).
    func purgeExpired() async throws {
        let now = clock()
        let dialect = database.dialect
        try await database.write { connection in
            for table in ["apple_identity_tokens", "apple_notifications", "ended_refresh_tokens", "challenges", "mfa_tokens"] {
                try connection.execute(dialect.sql("DELETE FROM \(table) WHERE expires_at < ?"), [.time(now)])
            }
            try connection.execute(
                dialect.sql("DELETE FROM rate_limits WHERE window_start <= ? AND (blocked_until IS NULL OR blocked_until <= ?)"),
                [.time(now.addingTimeInterval(-LoginRateLimiter.window)), .time(now)])
        }
    }
}
