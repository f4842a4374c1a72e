import FoundationEssentials
import LatchkeyStore

/// The server's periodic work, in every process: Apple's keys kept fresh, the Apple revocation
/// outbox sent, stored Apple refresh tokens validated, and rows that have done their job
/// deleted. Every 30 to 60 seconds, jittered so several processes do not fall into step; the
/// first pass comes after the first wait. Each job runs through ``BackgroundJobs``, so a failure
/// is logged and counted, and does not stop the others.
struct Housekeeping: Sendable {
    let apple: AppleService
    let database: any SQLDatabase
    let jobs: BackgroundJobs
    let clock: @Sendable () -> Date
    private let retention = RetentionRepository()

    init(apple: AppleService, database: any SQLDatabase, jobs: BackgroundJobs, clock: @escaping @Sendable () -> Date) {
        self.apple = apple
        self.database = database
        self.jobs = jobs
        self.clock = clock
    }

    /// Runs the key refresh and ``runOnce()`` periodically until the task is cancelled.
    func start() -> Task<Void, Never> {
        jobs.repeating(every: { .seconds(.random(in: 30...60)) }) {
            if !apple.settings.allClientIDs.isEmpty {
                await jobs.run(.appleKeyRefresh) { try await apple.keys.refreshIfStale() }
            }
            await runOnce()
        }
    }

    /// One pass of the outbox, the token validation and the purge, in that order; a failing one
    /// does not stop the others.
    ///
    /// - Returns: The first failure, already logged and counted; `nil` when every job succeeded.
    @discardableResult
    func runOnce() async -> (any Error)? {
        let outbox = await jobs.run(.appleRevocationOutbox) { _ = try await apple.outbox.runDue() }
        let validation = await jobs.run(.appleTokenValidation) { _ = try await apple.validateDueTokens() }
        let purge = await jobs.run(.purge) { try await purgeExpired() }
        return outbox ?? validation ?? purge
    }

    /// Deletes what has served its purpose (``RetentionRepository``), in one transaction: expired
    /// replay records, tombstones, challenges and MFA tokens, and login counters whose window and
    /// block are over.
    func purgeExpired() async throws {
        let now = clock()
        let retention = retention
        try await database.write { connection in
            try retention.deleteExpired(now: now, on: connection)
            try retention.dropExpiredSuccessors(now: now, on: connection)
            try retention.deleteFinishedRateLimits(windowStartedBefore: now.addingTimeInterval(-LoginRateLimiter.window), now: now, on: connection)
        }
    }
}
