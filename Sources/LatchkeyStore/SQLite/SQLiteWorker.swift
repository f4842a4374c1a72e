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

    /// Counts one more job waiting or running, or refuses it when the queue is full; the caller
    /// subtracts it when the job is done.
    private func reserve() throws {
        guard pending.wrappingAdd(1, ordering: .relaxed).newValue <= limit else {
            pending.wrappingSubtract(1, ordering: .relaxed)
            throw StoreError.busy("the \(role) queue is full (\(limit) jobs)")
        }
    }

    /// Runs `job` with the connection on the worker's queue.
    ///
    /// - Throws: What `job` throws; ``StoreError/Code/busy`` when the queue is full;
    ///   ``StoreError/Code/closed`` when the connection was closed before the job's turn came.
    func run<T: Sendable>(_ job: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try reserve()
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

    /// Runs `job` with the connection on the worker's queue and waits for it on the calling
    /// thread: only for a short read that a synchronous caller needs at once (a change feed's
    /// starting point). Never call it from the worker's own queue.
    func runSynchronously<T: Sendable>(_ job: (SQLiteConnection) throws -> T) throws -> T {
        try queue.sync {
            try connection.withLock { connection in
                guard let connection else { throw StoreError.closed("the database is closed") }
                return try job(connection)
            }
        }
    }

    /// Runs `body` as a write on the connection, sharing one transaction with the writes that
    /// queued up beside it (group commit; see ``SQLiteDatabase/write(_:)``).
    ///
    /// - Throws: What `body` throws (its own changes undone); ``StoreError/Code/busy`` when the
    ///   queue is full or the lock stayed taken; a ``StoreError`` when the group's commit failed.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try reserve()
        defer { pending.wrappingSubtract(1, ordering: .relaxed) }
        return try await withCheckedThrowingContinuation { continuation in
            let write = GroupedWrite(body: body, continuation: continuation)
            let startDrain = group.withLock { group in
                group.writes.append(write)
                defer { group.draining = true }
                return !group.draining
            }
            if startDrain { queue.async { self.drainWrites() } }
        }
    }

    /// Writes waiting for the next group transaction, and whether a drain is on the queue.
    private let group = Mutex<(writes: [any GroupWrite], draining: Bool)>(([], false))

    /// The most writes one transaction takes.
    static let maximumGroup = 64

    /// Runs the waiting writes in group transactions until none is left.
    private func drainWrites() {
        while true {
            let writes: [any GroupWrite] = group.withLock { group in
                let taken = Array(group.writes.prefix(Self.maximumGroup))
                group.writes.removeFirst(taken.count)
                if taken.isEmpty { group.draining = false }
                return taken
            }
            guard !writes.isEmpty else { return }
            connection.withLock { connection in
                guard let connection else {
                    writes.forEach { $0.fail(StoreError.closed("the database is closed")) }
                    return
                }
                Self.commit(writes, on: connection)
            }
        }
    }

    /// `BEGIN IMMEDIATE`, each write inside a savepoint of its own (a write that throws undoes
    /// only its own changes), `COMMIT`; then every write learns its outcome. A write is answered
    /// only after the commit that made it durable. If SQLite ends the transaction itself (a full
    /// disk, an I/O error), the writes before are lost with it and fail too.
    private static func commit(_ writes: [any GroupWrite], on connection: SQLiteConnection) {
        var remaining = writes[...]
        while !remaining.isEmpty {
            do {
                try connection.beginImmediate()
            } catch {
                remaining.forEach { $0.fail(error) }
                return
            }
            var applied: [any GroupWrite] = []
            var abort: (any Error)?
            while abort == nil, let write = remaining.popFirst() {
                do {
                    try connection.execute("SAVEPOINT latchkey_write", [])
                    try write.apply(GuardedConnection(connection: connection))
                    try connection.execute("RELEASE latchkey_write", [])
                    applied.append(write)
                } catch {
                    write.fail(error)
                    do {
                        guard connection.isInTransaction else { throw error }
                        try connection.execute("ROLLBACK TO latchkey_write", [])
                        try connection.execute("RELEASE latchkey_write", [])
                    } catch {
                        abort = error
                    }
                }
            }
            if let abort {
                connection.rollbackIfOpen()
                applied.forEach { $0.fail(abort) }
                continue
            }
            do {
                try connection.commit()
                applied.forEach { $0.succeed() }
            } catch {
                connection.rollbackIfOpen()
                applied.forEach { $0.fail(error) }
            }
        }
    }

    /// Runs `job` on the queue and reports whether it succeeded (with its error when not),
    /// without an `await`: the health probe uses it so that a busy cooperative thread pool
    /// cannot delay it.
    func probe(
        _ job: @escaping @Sendable (SQLiteConnection) throws -> Void, done: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        queue.async {
            let outcome: Result<Void, any Error> = self.connection.withLock { connection in
                guard let connection else { return .failure(StoreError.closed("the database is closed")) }
                return Result { try job(connection) }
            }
            switch outcome {
            case .success: done(true, nil)
            case .failure(let error): done(false, error)
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

/// A write waiting in a group: it runs its body, keeps the result until the commit, then
/// resumes its caller.
private protocol GroupWrite: Sendable {
    func apply(_ connection: any SQLConnection) throws
    func succeed()
    func fail(_ error: any Error)
}

private final class GroupedWrite<T: Sendable>: GroupWrite {
    private let body: @Sendable (any SQLConnection) throws -> T
    private let continuation: CheckedContinuation<T, any Error>
    private let result = Mutex<T?>(nil)

    init(body: @escaping @Sendable (any SQLConnection) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    func apply(_ connection: any SQLConnection) throws {
        let value = try body(connection)
        result.withLock { $0 = value }
    }

    func succeed() {
        continuation.resume(returning: result.withLock { $0.take()! })
    }

    func fail(_ error: any Error) {
        continuation.resume(throwing: error)
    }
}

/// The connection a write's body sees: everything but transaction control, which belongs to
/// the group (a body that committed or rolled back would end its neighbours' transaction).
private struct GuardedConnection: SQLConnection {
    let connection: SQLiteConnection

    func execute(_ sql: String, _ bindings: [SQLValue]) throws -> Int {
        try Self.check(sql)
        return try connection.execute(sql, bindings)
    }

    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [SQLRow] {
        try Self.check(sql)
        return try connection.query(sql, bindings)
    }

    func queryOne(_ sql: String, _ bindings: [SQLValue]) throws -> SQLRow? {
        try Self.check(sql)
        return try connection.queryOne(sql, bindings)
    }

    private static let transactionWords = ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"].map { Array($0.utf8) }

    /// Refuses a statement whose first word is transaction control. It runs for every statement
    /// on the writer, so it compares bytes in place instead of making a string.
    private static func check(_ sql: String) throws {
        let bytes = sql.utf8.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        for word in transactionWords where bytes.starts(with: word, by: { $0 & 0xDF == $1 }) {
            // The whole word: a first word `ENDS` is not `END`.
            let next = bytes.dropFirst(word.count).first.map { $0 & 0xDF }
            if next.map({ !(0x41...0x5A).contains($0) }) ?? true {
                throw StoreError.misuse("the transaction was ended inside the closure; never run BEGIN, COMMIT or ROLLBACK there")
            }
        }
    }
}
