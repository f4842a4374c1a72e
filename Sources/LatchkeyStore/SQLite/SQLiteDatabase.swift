internal import CLatchkeySQLite
internal import Dispatch
import Synchronization

/// An SQLite database file in WAL mode, used through one writer connection and a few reader
/// connections, each on a serial queue of its own.
///
/// ## Threading
///
/// SQLite calls block: on the disk, on `fsync`, and on another process's lock for up to the
/// busy timeout. The HTTP server's event-loop threads must never block, and neither may Swift's
/// cooperative thread pool (one thread per core: a blocked one stalls every task queued behind
/// it). So ``read(_:)`` and ``write(_:)`` never run SQLite on the calling thread. They send the
/// closure to a serial dispatch queue that owns one connection and suspend the calling task on
/// a continuation; the queue runs the closure on a libdispatch thread, where blocking is
/// allowed, and resumes the continuation when done. The caller's thread goes back to its work
/// at once, nothing polls or sleeps, and the round trip costs microseconds (two thread
/// wake-ups; see the benchmark in the tests).
///
/// - **One writer.** SQLite allows one writer at a time per file. All writes of this process
///   go through one connection on one serial queue, so our own writes queue up in memory in
///   arrival order instead of fighting over the file lock with `SQLITE_BUSY`. Serial execution
///   also makes a read-modify-write inside one ``write(_:)`` safe against our other writes.
///   Writes that wait together commit together (see ``write(_:)``).
/// - **N readers** (``Configuration/readers``, default 2). WAL lets readers read the last
///   committed snapshot while the writer writes, so each reader connection has its own serial
///   queue, and a read goes to the reader with the fewest jobs in flight. Readers run with
///   `PRAGMA query_only`.
/// - **Other processes** (`latchkey migrate`, a second server, the `sqlite3` shell) share the
///   file through SQLite's own locks. Each write transaction starts with `BEGIN IMMEDIATE`,
///   taking the write lock before reading anything (a deferred transaction that reads and then
///   writes can fail with `SQLITE_BUSY` without waiting at all), and a busy handler waits for
///   the lock in short sleeps up to ``Configuration/busyTimeout``; only then does the write fail
///   with ``StoreError/Code/busy``, having written nothing. SQLite keeps no queue of waiters: the
///   short sleeps find the gaps between another process's transactions, but behind a sustained
///   back-to-back write load a write can wait hundreds of milliseconds (measured: up to 0.65 s
///   behind 6 ms transactions), and in the worst case the whole busy timeout.
///
/// Each connection caches up to ``Configuration/statementCacheSize`` prepared statements by SQL
/// text, dropping the least recently used, prepared with `SQLITE_PREPARE_PERSISTENT`, and reset
/// with their bindings cleared after every use. Values are bound with `SQLITE_TRANSIENT`, so
/// SQLite copies them during the bind call and no Swift buffer has to outlive it.
///
/// ## Durability
///
/// `journal_mode=WAL`, `foreign_keys=ON`, and `synchronous` from ``Configuration/durability``:
/// `FULL` by default, so every commit syncs the WAL to the disk before ``write(_:)`` returns and
/// an answered write survives a power cut or a kernel panic. A group commit syncs once for the
/// whole group, so the cost is shared by every write in it. ``Durability/normal`` skips that
/// sync: a commit survives a crash of the process, but a power loss may roll back the last
/// commits (never half of one, S28).
///
/// ## Storage failures
///
/// A full disk, a file made read-only or moved away, an I/O error: SQLite answers
/// `SQLITE_FULL`, `SQLITE_IOERR_*`, `SQLITE_READONLY_*`, `SQLITE_CANTOPEN`, which become
/// ``StoreError/Code/io``; the write fails whole (its transaction rolls back) and the service
/// resumes by itself once the cause is gone. The outcome of the latest write is kept: while it
/// is a storage failure ``isHealthy()`` answers `false`, and the start and end of each outage go
/// to ``Configuration/onStorageEvent`` (the error log).
///
/// The file's directory must exist; the file is created when missing. Call ``close()`` before
/// letting go of the database.
package final class SQLiteDatabase: SQLDatabase {
    /// Where the database lives and how it is used.
    package struct Configuration: Sendable {
        /// The database file's path; its directory must exist. `:memory:` is not supported,
        /// because each connection would get a database of its own.
        package var path: String
        /// How many reader connections, at least 1.
        package var readers: Int = 2
        /// How long a transaction waits for another process's lock before failing with
        /// ``StoreError/Code/busy``.
        package var busyTimeout: Duration = .seconds(5)
        /// How many prepared statements each connection keeps; 0 prepares every time.
        package var statementCacheSize: Int = 64
        /// How long ``SQLiteDatabase/isHealthy()`` waits for its probe.
        package var healthCheckTimeout: Duration = .seconds(1)
        /// How many jobs may wait for or run on one connection; beyond that, reads and writes
        /// fail at once with ``StoreError/Code/busy``, which the server answers with 503.
        package var queueLimit: Int = 1000
        /// Whether a commit waits for the disk; see ``Durability``.
        package var durability: Durability = .full
        /// Called when writes start failing on the storage and when they succeed again; runs
        /// on the writing task, so it must be quick.
        package var onStorageEvent: (@Sendable (StorageEvent) -> Void)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - path: The database file's path.
        ///   - readers: How many reader connections, at least 1.
        ///   - busyTimeout: How long to wait for another process's lock.
        ///   - statementCacheSize: Prepared statements kept per connection.
        ///   - healthCheckTimeout: How long the health probe may take.
        ///   - queueLimit: How many jobs may wait for one connection.
        package init(
            path: String, readers: Int = 2, busyTimeout: Duration = .seconds(5), statementCacheSize: Int = 64,
            healthCheckTimeout: Duration = .seconds(1), queueLimit: Int = 1000, durability: Durability = .full,
            onStorageEvent: (@Sendable (StorageEvent) -> Void)? = nil
        ) {
            self.path = path
            self.readers = readers
            self.busyTimeout = busyTimeout
            self.statementCacheSize = statementCacheSize
            self.healthCheckTimeout = healthCheckTimeout
            self.queueLimit = queueLimit
            self.durability = durability
            self.onStorageEvent = onStorageEvent
        }
    }

    /// How far a commit goes before ``SQLiteDatabase/write(_:)`` returns.
    package enum Durability: String, Sendable, CaseIterable {
        /// `synchronous=FULL`: the WAL is synced to the disk at every commit (once per group
        /// commit), so an answered write survives a power cut.
        case full
        /// `synchronous=NORMAL`: the WAL is synced only at checkpoints. A crash of the process
        /// loses nothing, but a power cut or kernel panic may roll back the last commits.
        case normal
    }

    /// Figures summed over every connection, for metrics and tests.
    package struct Statistics: Sendable, Hashable {
        /// Prepared statements held in the caches now.
        package var cachedStatements: Int = 0
        /// Statements taken from a cache.
        package var cacheHits: Int = 0
        /// Statements that had to be prepared.
        package var cacheMisses: Int = 0
        /// Times a connection found the file locked by another connection (in practice another
        /// process or another `SQLiteDatabase`) and waited.
        package var busyWaits: Int = 0
        /// Writes waiting for the writer or running on it, when the figures were taken.
        package var queuedWrites: Int = 0
        /// Reads waiting for a reader or running on one, when the figures were taken.
        package var queuedReads: Int = 0

        mutating func add(_ other: Statistics) {
            cachedStatements += other.cachedStatements
            cacheHits += other.cacheHits
            cacheMisses += other.cacheMisses
            busyWaits += other.busyWaits
        }
    }

    /// The configuration the database was opened with.
    package let configuration: Configuration
    /// ``SQLDialect/sqlite``.
    package let dialect = SQLDialect.sqlite

    private let writer: SQLiteWorker
    private let readers: [SQLiteWorker]
    private let closed = Atomic<Bool>(false)
    private let health: WriteHealth

    /// Opens (or creates) the database file and its connections.
    ///
    /// - Parameter configuration: The path and settings.
    /// - Throws: ``StoreError``: ``StoreError/Code/io`` when the file cannot be opened, written
    ///   or put in WAL mode; ``StoreError/Code/corrupt`` when it is not a database;
    ///   ``StoreError/Code/misuse`` for a configuration out of range.
    package init(configuration: Configuration) throws {
        guard configuration.readers >= 1 else {
            throw StoreError.misuse("SQLiteDatabase needs at least 1 reader, got \(configuration.readers)")
        }
        guard configuration.statementCacheSize >= 0, configuration.busyTimeout >= .zero, configuration.queueLimit >= 1
        else {
            throw StoreError.misuse(
                "SQLiteDatabase needs a statement cache size and busy timeout of at least 0 and a queue limit of at least 1")
        }
        guard sqlite3_threadsafe() != 0 else {
            throw StoreError.misuse("the SQLite library was built without thread support")
        }
        self.configuration = configuration
        self.health = WriteHealth(observer: configuration.onStorageEvent)
        let writer = SQLiteWorker(
            role: "writer", limit: configuration.queueLimit,
            connection: try SQLiteConnection.open(
                path: configuration.path, role: .writer, busyTimeout: configuration.busyTimeout,
                statementCacheSize: configuration.statementCacheSize, durability: configuration.durability))
        var readers: [SQLiteWorker] = []
        do {
            for index in 0..<configuration.readers {
                readers.append(
                    SQLiteWorker(
                        role: "reader\(index)", limit: configuration.queueLimit,
                        connection: try SQLiteConnection.open(
                            path: configuration.path, role: .reader, busyTimeout: configuration.busyTimeout,
                            statementCacheSize: configuration.statementCacheSize, durability: configuration.durability)))
            }
        } catch {
            readers.forEach { $0.closeBeforeUse() }
            writer.closeBeforeUse()
            throw error
        }
        self.writer = writer
        self.readers = readers
    }

    /// Runs `body` in a read transaction on the least busy reader connection.
    ///
    /// - Parameter body: The queries; a write in it fails with ``StoreError/Code/misuse``.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, ``StoreError/Code/busy`` when the chosen reader's queue is
    ///   full, ``StoreError/Code/closed`` after ``close()``, or another ``StoreError``.
    @discardableResult
    package func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try checkOpen()
        // The least busy reader; two reads racing here may pick the same one, which only costs
        // a little balance.
        let reader = readers.min { $0.queueDepth < $1.queueDepth }!
        return try await reader.run { connection in
            try connection.beginDeferred()
            return try Self.finish(connection, body)
        }
    }

    /// Runs `body` as a write on the writer connection: all of it or none of it (S28), answered
    /// after the commit that makes it durable (synced to the disk with ``Durability/full``).
    ///
    /// Writes that queue up while the writer is busy share one transaction (group commit):
    /// `BEGIN IMMEDIATE`, each body inside a savepoint of its own, `COMMIT`. A body that throws
    /// rolls back to its savepoint, so it leaves nothing and its neighbours keep their changes;
    /// pages every write touches (the end of the audit log, of an index) reach the WAL once per
    /// group instead of once per write. Bodies still run one at a time, in arrival order.
    ///
    /// - Parameter body: The statements.
    /// - Returns: What `body` returns, after the commit.
    /// - Throws: What `body` throws (after the rollback), ``StoreError/Code/busy`` when another
    ///   process held the lock for the whole busy timeout or the writer's queue is full (nothing
    ///   was written then), ``StoreError/Code/closed`` after ``close()``, or another
    ///   ``StoreError``: ``StoreError/Code/io`` when the storage refused it (a full disk, a
    ///   read-only file), nothing written.
    @discardableResult
    package func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try checkOpen()
        do {
            let result = try await writer.write(body)
            health.record(nil)
            return result
        } catch {
            health.record(error)
            throw error
        }
    }

    /// The storage failure of the latest write, with when the outage began, or `nil` when the
    /// latest write succeeded.
    package var writeFailure: (error: StoreError, since: ContinuousClock.Instant, failedWrites: Int)? {
        health.current.map { ($0.error, $0.since, $0.failedWrites) }
    }

    /// Runs the body of an open transaction and commits, or rolls back when anything throws.
    private static func finish<T>(
        _ connection: SQLiteConnection, _ body: (any SQLConnection) throws -> T
    ) throws -> T {
        do {
            let result = try body(connection)
            try connection.commit()
            return result
        } catch {
            connection.rollbackIfOpen()
            throw error
        }
    }

    /// Whether a reader and the writer both answer within ``Configuration/healthCheckTimeout``,
    /// and the latest write did not fail on the storage.
    ///
    /// The reader probe reads the schema table, so it touches the file. The writer probe is a
    /// trivial query while writes succeed; after a write failed on the storage it is a real
    /// write (page 1 rewritten unchanged: `PRAGMA user_version` set to itself, one WAL frame),
    /// so the outage ends as soon as the disk takes writes again, even when no client writes
    /// (a load balancer sends none to a server that is not ready). A read-only probe alone
    /// would call a full disk healthy.
    ///
    /// - Returns: `false` when the database is closed, a query or the write probe fails, or the
    ///   answer is late (a wedged queue or a file system that hangs).
    package func isHealthy() async -> Bool {
        guard !closed.load(ordering: .acquiring) else { return false }
        let gate = OneShot()
        // The probe and its timer run on dispatch threads, not in tasks: when the cooperative
        // pool is busy, a healthy database must not look late.
        let reader = readers.min { $0.queueDepth < $1.queueDepth }!
        let answers = Atomic<Int>(0)
        let timeout = DispatchTimeInterval(configuration.healthCheckTimeout)
        return await withCheckedContinuation { continuation in
            gate.arm(continuation)
            // A serial queue of its own: a timer on the global queue waits for a free thread of its
            // width-limited pool, about a second late for each thread blocked beyond the cores.
            Self.healthTimer.asyncAfter(deadline: .now() + timeout) { gate.resume(false) }
            let done: @Sendable (Bool) -> Void = { succeeded in
                guard succeeded else { return gate.resume(false) }
                if answers.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == 2 { gate.resume(true) }
            }
            reader.probe({ _ = try $0.queryOne("SELECT count(*) AS n FROM sqlite_master") }, done: { succeeded, _ in done(succeeded) })
            if health.isFailing {
                writer.probe(Self.probeWrite) { [health] succeeded, error in
                    health.record(error)
                    done(succeeded)
                }
            } else {
                writer.probe({ _ = try $0.queryOne("SELECT 1 AS one") }, done: { succeeded, _ in done(succeeded) })
            }
        }
    }

    /// Where the health probe's timeout fires.
    private static let healthTimer = DispatchQueue(label: "latchkey.store.health-timer")

    /// The smallest write that reaches the file: `user_version` (unused by Latchkey) set to its
    /// own value dirties page 1, which the commit appends to the WAL.
    private static func probeWrite(_ connection: SQLiteConnection) throws {
        try connection.beginImmediate()
        do {
            let version = try connection.queryOne("PRAGMA user_version")?.int("user_version") ?? 0
            try connection.execute("PRAGMA user_version = \(version)", [])
            try connection.commit()
        } catch {
            connection.rollbackIfOpen()
            throw error
        }
    }

    /// Runs `PRAGMA integrity_check` on a reader.
    ///
    /// It reads the whole file, so it takes time in proportion to the database's size.
    ///
    /// - Returns: Whether SQLite found the database intact (`ok`).
    /// - Throws: ``StoreError``, for example ``StoreError/Code/corrupt`` when the damage stops
    ///   the check itself.
    package func integrityCheck() async throws -> Bool {
        let rows = try await read { try $0.query("PRAGMA integrity_check") }
        return rows.count == 1 && rows[0].values.first == .text("ok")
    }

    /// Polls `PRAGMA data_version` on the first reader connection once a second and calls
    /// `onChange` when it moved: some connection, of this process or another, committed a
    /// change to the file since the last poll. The first value is read before this returns, so a
    /// commit right after it is seen. SQLite has no channels, so every subscription fires on any
    /// commit, whatever `channel` is; subscribers re-read what they cache.
    ///
    /// - Parameters:
    ///   - channel: The channel (checked, otherwise unused).
    ///   - onChange: Runs in the polling task.
    /// - Returns: The subscription; it also ends by itself when the database closes.
    package func subscribe(to channel: String, _ onChange: @escaping @Sendable () -> Void) -> SQLChangeSubscription {
        precondition(SQLChangeSubscription.isValidChannel(channel), "SQLiteDatabase: invalid change channel name")
        let reader = readers[0]
        let first = try? reader.runSynchronously { try $0.queryOne("PRAGMA data_version", [])?.int("data_version") }
        let task = Task {
            var last = first
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                do {
                    let version = try await reader.run { try $0.queryOne("PRAGMA data_version", [])?.int("data_version") }
                    if let last, version != last { onChange() }
                    last = version
                } catch let error as StoreError where error.code == .closed {
                    return
                } catch {
                    // A busy or failing poll is tried again next second.
                }
            }
        }
        return SQLChangeSubscription { task.cancel() }
    }

    /// Statement-cache, lock-wait and queue figures over every connection; the connections'
    /// figures are zero after ``close()``.
    ///
    /// - Returns: The figures.
    package func statistics() async -> Statistics {
        var total = Statistics(
            queuedWrites: writer.queueDepth, queuedReads: readers.reduce(0) { $0 + $1.queueDepth })
        for worker in [writer] + readers {
            if let figures = try? await worker.run({ $0.statistics }) {
                total.add(figures)
            }
        }
        return total
    }

    /// Lets the jobs already queued finish, then closes every connection (the writer last,
    /// after `PRAGMA optimize`). Later calls throw ``StoreError/Code/closed``; a second
    /// `close()` returns at once.
    package func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for reader in readers {
            await reader.close()
        }
        await writer.close { connection in
            _ = try? connection.execute("PRAGMA optimize", [])
        }
    }

    private func checkOpen() throws {
        guard !closed.load(ordering: .acquiring) else { throw StoreError.closed("the database is closed") }
    }
}
