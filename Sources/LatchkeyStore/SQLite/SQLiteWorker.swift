internal import Dispatch
import Synchronization

/// One connection and the serial queue that is the only place it is used.
///
/// ``run(_:)`` sends a job to the queue and suspends the calling task on a continuation until
/// the job has run: the caller's thread is free at once, there is no polling, and the hop costs
/// one queue dispatch plus one continuation resume (a few microseconds). The connection sits in
/// a `Mutex` so the worker is `Sendable` without `@unchecked`; only the queue ever takes the
/// lock, so it is never contended.
///
/// The queue is bounded (STYLE §6): past ``limit`` jobs waiting or running, ``run(_:)`` fails
/// at once with ``StoreError/Code/busy`` rather than letting the backlog, and the latency of
/// everything behind it, grow without end.
final class SQLiteWorker: Sendable {
    private let queue: DispatchQueue
    private let connection: Mutex<SQLiteConnection?>
    private let pending = Atomic<Int>(0)
    private let limit: Int
    private let role: String

    init(role: String, limit: Int, connection: sending SQLiteConnection) {
        self.queue = DispatchQueue(label: "latchkey.store.\(role)")
        self.connection = Mutex(connection)
        self.limit = limit
        self.role = role
    }

    /// Jobs waiting for the connection or running on it now.
    var queueDepth: Int { pending.load(ordering: .relaxed) }

    /// Runs `job` with the connection on the worker's queue.
    ///
    /// - Throws: What `job` throws; ``StoreError/Code/busy`` when the queue is full;
    ///   ``StoreError/Code/closed`` when the connection was closed before the job's turn came.
    func run<T: Sendable>(_ job: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        guard pending.wrappingAdd(1, ordering: .relaxed).newValue <= limit else {
            pending.wrappingSubtract(1, ordering: .relaxed)
            throw StoreError.busy("the \(role) queue is full (\(limit) jobs)")
        }
        defer { pending.wrappingSubtract(1, ordering: .relaxed) }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(
                    with: Result {
                        try self.connection.withLock { connection in
                            guard let connection else { throw StoreError.closed("the database is closed") }
                            return try job(connection)
                        }
                    })
            }
        }
    }

    /// Closes the connection at once; only while no job can have been queued (a failed init).
    /// Runs `job` on the queue and reports only whether it succeeded, without an `await`: the
    /// health probe uses it so that a busy cooperative thread pool cannot delay it.
    func probe(_ job: @escaping @Sendable (SQLiteConnection) throws -> Void, done: @escaping @Sendable (Bool) -> Void) {
        queue.async {
            let succeeded: Bool = self.connection.withLock { connection in
                guard let connection else { return false }
                return (try? job(connection)) != nil
            }
            done(succeeded)
        }
    }

    func closeBeforeUse() {
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }

    /// Closes the connection after every job already queued; `final` runs on it first.
    func close(final: (@Sendable (SQLiteConnection) -> Void)? = nil) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.connection.withLock { connection in
                    if let open = connection {
                        final?(open)
                        open.close()
                    }
                    connection = nil
                }
                continuation.resume()
            }
        }
    }
}
