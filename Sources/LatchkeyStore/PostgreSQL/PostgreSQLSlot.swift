internal import Dispatch
import Synchronization

/// One place in the pool: a serial queue, the only place its connection is used, and the
/// connection, opened when first needed and again after it was lost.
///
/// Jobs run on the queue only: the pool's (``PostgreSQLPool``) through ``runHere(_:)``, others
/// through ``run(_:)``, which sends the job there and suspends the caller on a continuation. So
/// libpq blocks a dispatch thread of the pool's own, never an event loop or a thread of Swift's
/// cooperative pool.
final class PostgreSQLSlot: Sendable {
    private struct State {
        var connection: PostgreSQLConnection?
        var closed = false
        var cacheHits = 0
        var cacheMisses = 0
    }

    let index: Int
    /// Where the connection is used, and only there.
    let queue: DispatchQueue
    private let connector: PostgreSQLConnector
    private let state = Mutex(State())

    init(index: Int, connector: PostgreSQLConnector) {
        self.index = index
        self.connector = connector
        self.queue = DispatchQueue(label: "latchkey.store.postgresql\(index)")
    }

    /// Runs `job` with the slot's connection on the slot's queue, connecting first when there is
    /// no usable connection. A connection that failed with a lost connection is dropped after
    /// the job, so the next job connects afresh.
    ///
    /// - Throws: What `job` throws; ``StoreError/Code/unavailable`` when no connection can be
    ///   made; ``StoreError/Code/closed`` after ``close()``.
    func run<T: Sendable>(_ job: @escaping @Sendable (PostgreSQLConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.runHere(job) })
            }
        }
    }

    /// Runs `job` on the calling thread, which must be the slot's queue. When the job finds a
    /// kept connection lost before it began (``StaleConnection``), it runs once more on a new
    /// one; a new connection that fails the same way is the outage it looks like.
    func runHere<T: Sendable>(_ job: @Sendable (PostgreSQLConnection) throws -> T) throws -> T {
        try state.withLock { state in
            guard !state.closed else { throw StoreError.closed("the database is closed") }
            if let connection = state.connection, !connection.isUsable {
                Self.retire(connection, into: &state)
                state.connection = nil
            }
            var fresh = state.connection == nil
            while true {
                let connection: PostgreSQLConnection
                if let open = state.connection {
                    connection = open
                } else {
                    connection = try PostgreSQLConnection.open(connector)
                    state.connection = connection
                }
                do {
                    defer {
                        if !connection.isConnected {
                            Self.retire(connection, into: &state)
                            state.connection = nil
                        }
                    }
                    return try job(connection)
                } catch let stale as StaleConnection {
                    if state.connection === connection {
                        Self.retire(connection, into: &state)
                        state.connection = nil
                    }
                    guard !fresh else { throw stale.error }
                    fresh = true
                }
            }
        }
    }

    private static func retire(_ connection: PostgreSQLConnection, into state: inout State) {
        state.cacheHits += connection.cacheHits
        state.cacheMisses += connection.cacheMisses
        connection.close()
    }

    /// Statement-cache figures of this slot's connections, past and present.
    func statistics() async -> (cached: Int, hits: Int, misses: Int) {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(
                    returning: self.state.withLock { state in
                        let connection = state.connection
                        return (
                            connection?.cachedStatements ?? 0, state.cacheHits + (connection?.cacheHits ?? 0),
                            state.cacheMisses + (connection?.cacheMisses ?? 0)
                        )
                    })
            }
        }
    }

    /// Closes the connection after the job running now; later jobs throw
    /// ``StoreError/Code/closed``.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.state.withLock { state in
                    state.connection?.close()
                    state.connection = nil
                    state.closed = true
                }
                continuation.resume()
            }
        }
    }
}
