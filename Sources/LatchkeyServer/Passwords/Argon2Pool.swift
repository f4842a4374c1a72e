import Dispatch
import FoundationEssentials
import Glibc
import LatchkeyBasics
// Only the thread starter, which lives with the HTTP server's workers; nothing of HTTP itself.
import Synchronization

/// A fixed set of threads that run Argon2id, fed through a bounded queue (docs/security.md S15).
///
/// Argon2id takes tens of milliseconds of one core and 19 MiB or more by design. Run on the
/// event loops it would stall every connection; run on the Swift task pool (one thread per core)
/// it would stall every other request. So hashes run here, on threads of their own, one per core
/// by default, and callers await the result. When ``queueLimit`` hashes already wait for a
/// thread, ``run(_:)`` refuses at once with ``AuthError/Code/overloaded`` and a retry time (503
/// with `Retry-After`), so a flood of logins costs the server a bounded amount of memory and
/// leaves `/healthz`, refreshes and the JWKS as fast as before.
final class Argon2Pool: Sendable {
    /// The jobs waiting, shared with the threads (a `Mutex` cannot be captured by them itself).
    private final class Queue: Sendable {
        private struct State {
            var jobs: [@Sendable () -> Void] = []
            var head = 0
            var stopped = false

            var waiting: Int { jobs.count - head }
        }

        private let state = Mutex(State())
        /// One signal per queued job, and one per thread at shutdown.
        let available = DispatchSemaphore(value: 0)
        /// Signalled by each thread as it ends.
        let ended = DispatchSemaphore(value: 0)

        var waiting: Int { state.withLock { $0.waiting } }

        /// Appends a job unless `limit` jobs wait or the queue has stopped.
        func append(_ job: @escaping @Sendable () -> Void, limit: Int) -> Bool {
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped, state.waiting < limit else { return false }
                state.jobs.append(job)
                return true
            }
            if accepted { available.signal() }
            return accepted
        }

        /// The oldest job; nil tells a thread to end.
        func next() -> (@Sendable () -> Void)? {
            state.withLock { state in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return job
            }
        }

        /// Marks the queue stopped; returns whether it already was.
        func stop() -> Bool {
            state.withLock { state in
                defer { state.stopped = true }
                return state.stopped
            }
        }
    }

    /// How many threads hash at once.
    let threadCount: Int
    /// How many hashes may wait for a thread.
    let queueLimit: Int
    private let queue = Queue()

    /// The hashing threads' nice value (Linux: per thread; 0 is normal, 19 the lowest).
    static let niceness: Int32 = 5

    /// Seconds a refused caller is told to wait (`Retry-After`).
    static let retryAfter = 1

    /// Starts the threads.
    ///
    /// - Parameters:
    ///   - threads: Threads that hash; 0 means one per core.
    ///   - queueLimit: Hashes that may wait; at least 1.
    /// - Throws: ``LatchkeyHTTP/DetachedThread/Failure`` when the system cannot make a thread.
    init(threads: Int, queueLimit: Int) throws {
        self.threadCount = threads > 0 ? threads : ProcessInfo.processInfo.activeProcessorCount
        self.queueLimit = max(1, queueLimit)
        for _ in 0..<threadCount {
            try DetachedThread.start { [queue] in
                // Hashing yields to the event loops and the task pool when they compete for a
                // core, so health checks, refreshes and the JWKS stay fast under a login flood;
                // an idle core still runs it at full speed. On Linux the nice value belongs to a
                // thread, and `who` 0 names the calling one.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
                while true {
                    queue.available.wait()
                    guard let job = queue.next() else { break }
                    job()
                }
                queue.ended.signal()
            }
        }
    }

    /// Hashes waiting for a thread, for the `latchkey_queue_depth` gauge.
    var depth: Int { queue.waiting }

    /// Throws ``AuthError/Code/overloaded`` when the queue is full now, so a request that would be
    /// refused anyway is refused before it reads the database. ``run(_:)`` still decides: the
    /// queue may fill up in between.
    func refuseIfFull() throws {
        if queue.waiting >= queueLimit { throw AuthError.overloaded(retryAfter: Self.retryAfter) }
    }

    /// Runs `work` on one of the pool's threads and returns its result.
    ///
    /// - Parameter work: The hashing; it runs on a pool thread, never on the caller's.
    /// - Returns: What `work` returns.
    /// - Throws: ``AuthError/overloaded(retryAfter:)`` at once when the queue is
    ///   full or the pool has stopped; otherwise what `work` throws.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = queue.append({ continuation.resume(with: Result { try work() }) }, limit: queueLimit)
            if !accepted {
                continuation.resume(throwing: AuthError.overloaded(retryAfter: Self.retryAfter))
            }
        }
    }

    /// Refuses new work, lets the threads finish what is queued, and returns once they have
    /// ended. Call it at shutdown, after the HTTP server has stopped; later calls do nothing.
    func shutdown() async {
        guard !queue.stop() else { return }
        for _ in 0..<threadCount { queue.available.signal() }
        let (threadCount, queue) = (threadCount, queue)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                for _ in 0..<threadCount { queue.ended.wait() }
                continuation.resume()
            }
        }
    }
}
