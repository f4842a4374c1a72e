internal import Dispatch
import Synchronization

/// One connection and the serial queue that is the only place it is used.
///
/// ``run(_:)`` sends a job to the queue and suspends the calling task on a continuation until
/// the job has run: the caller's thread is free at once, there is no polling, and the hop costs
/// one queue dispatch plus one continuation resume (a few microseconds). The connection sits in
/// a `Mutex` so the worker is `Sendable` without `@unchecked`; only the queue ever takes the
/// lock, so it is never contended.
final class SQLiteWorker: Sendable {
    private let queue: DispatchQueue
    private let connection: Mutex<SQLiteConnection?>

    init(label: String, connection: sending SQLiteConnection) {
        self.queue = DispatchQueue(label: label)
        self.connection = Mutex(connection)
    }

    /// Runs `job` with the connection on the worker's queue.
    ///
    /// - Throws: What `job` throws, or ``StoreError/Code/closed`` when the connection was closed
    ///   before the job's turn came.
    func run<T: Sendable>(_ job: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
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
