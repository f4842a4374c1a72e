internal import Dispatch
import Synchronization

/// A PostgreSQL database, used through a bounded pool of connections, each on a serial queue
/// of its own.
///
/// ## Threading
///
/// libpq blocks on the network. As with ``SQLiteDatabase``, ``read(_:)`` and ``write(_:)``
/// never run it on the calling thread: they take a free connection from the pool (waiting up
/// to ``Configuration/waitTimeout``, else ``StoreError/Code/busy``), send the transaction to that
/// connection's queue and suspend the caller on a continuation until it is done.
///
/// ## Transactions
///
/// Writes run at `SERIALIZABLE`, so a body that reads and then writes is as safe as on
/// SQLite's single writer, and the repositories' compare-and-set writes report the rows they
/// changed the same way. Where PostgreSQL finds two transactions that could not have run one
/// after the other it fails one with a serialization failure (40001), or a deadlock (40P01):
/// that transaction is rolled back and its body runs again, up to
/// ``Configuration/transactionAttempts`` times, after which the write fails with
/// ``StoreError/Code/busy``. A body may therefore run more than once; it must do nothing but its
/// SQL. Reads run at `REPEATABLE READ READ ONLY`: one snapshot, no writes.
///
/// A transaction costs few round trips (``PostgreSQLConnection``): its `BEGIN` travels with its
/// first statement, statements sent unawaited (``SQLConnection/executeUnawaited(_:_:)``) with
/// the next one, and a read's `COMMIT` is not waited for. A refresh grant is three.
///
/// PostgreSQL aborts a transaction at its first failed statement. A body that catches a
/// store error and carries on would commit nothing, so the transaction's first failure is
/// what ``write(_:)`` throws in that case, not the body's result.
///
/// ## Failures
///
/// A server that is down, restarting or unreachable makes the transaction fail with
/// ``StoreError/Code/unavailable`` (503 `unavailable` in the route layer). The connection is
/// dropped and the next transaction on its slot connects afresh, so service returns as soon as
/// the server does. Each statement is bounded by ``Configuration/statementTimeout``
/// (`statement_timeout`; 57014 becomes ``StoreError/Code/busy``).
package final class PostgreSQLDatabase: SQLDatabase {
    /// Where the database is and how it is used.
    package struct Configuration: Sendable {
        /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETERS]`, or `postgresql://`;
        /// libpq reads the parameters (`sslmode`, …).
        package var url: String
        /// The password, when it does not come in the URL (from a file or the environment);
        /// it wins over one in the URL.
        package var password: String?
        /// How many connections, at least 1.
        package var poolSize: Int = 8
        /// How long a transaction waits for a free connection before failing with
        /// ``StoreError/Code/busy``.
        package var waitTimeout: Duration = .seconds(2)
        /// How many callers may wait for a connection; beyond that they fail at once with
        /// ``StoreError/Code/busy``.
        package var queueLimit: Int = 1000
        /// The longest one statement may run (`statement_timeout`).
        package var statementTimeout: Duration = .seconds(5)
        /// How long the driver waits for the server to answer one call before it gives the
        /// connection up (a frozen server, a network that drops packets) and fails with
        /// ``StoreError/Code/unavailable``; `nil`: the statement timeout plus 2 seconds.
        package var responseTimeout: Duration?
        /// How long one connection attempt may take (libpq's `connect_timeout`, whole seconds,
        /// at least 2).
        package var connectTimeout: Duration = .seconds(3)
        /// How many prepared statements each connection keeps, at least 1.
        package var statementCacheSize: Int = 128
        /// How many times a write runs when it keeps failing with a serialization failure or a
        /// deadlock.
        package var transactionAttempts: Int = 20
        /// How long a `LISTEN` connection (``PostgreSQLDatabase/subscribe(to:_:)``) may stay
        /// silent before it is asked `SELECT 1`; no answer within ``responseTimeout`` and it is
        /// given up and made again.
        package var listenerCheckInterval: Duration = .seconds(15)
        /// How long ``PostgreSQLDatabase/isHealthy()`` waits for its probe.
        package var healthCheckTimeout: Duration = .seconds(1)
        /// `application_name`, as `pg_stat_activity` shows it.
        package var applicationName = "latchkey"

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - url: The database URL.
        ///   - password: The password, when not in the URL.
        package init(url: String, password: String? = nil) {
            self.url = url
            self.password = password
        }
    }

    /// The configuration the database was opened with.
    package let configuration: Configuration
    /// ``SQLDialect/postgreSQL``.
    package let dialect = SQLDialect.postgreSQL

    private let pool: PostgreSQLPool
    private let connector: PostgreSQLConnector
    private let closed = Atomic<Bool>(false)
    private let retries = Atomic<Int>(0)

    /// Checks the configuration and opens the first connection, so that a wrong URL, password
    /// or unreachable server shows at start-up.
    ///
    /// - Parameter configuration: The URL and settings.
    /// - Throws: ``StoreError/Code/misuse`` for a configuration out of range or a URL that is
    ///   not PostgreSQL's; ``StoreError/Code/unavailable`` when the server cannot be reached or
    ///   refuses the login.
    package init(configuration: Configuration) async throws {
        _ = try PostgreSQLURL(configuration.url)
        guard configuration.poolSize >= 1, configuration.queueLimit >= 1, configuration.statementCacheSize >= 1,
            configuration.transactionAttempts >= 1, configuration.waitTimeout >= .zero,
            configuration.statementTimeout > .zero
        else {
            throw StoreError.misuse(
                "PostgreSQLDatabase needs a pool size, queue limit, statement cache size and transaction attempts of at least 1")
        }
        self.configuration = configuration
        let connector = PostgreSQLConnector(configuration: configuration)
        self.connector = connector
        self.pool = PostgreSQLPool(size: configuration.poolSize, queueLimit: configuration.queueLimit, connector: connector)
        do {
            try await pool.run(timeout: configuration.waitTimeout) { connection in
                _ = try connection.queryOne("SELECT 1 AS one", [])
            }
        } catch {
            await pool.close()
            throw error
        }
    }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction on a free connection.
    ///
    /// - Parameter body: The queries; a write in it fails with ``StoreError/Code/misuse``.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; ``StoreError/Code/busy`` when no connection came free in
    ///   time; ``StoreError/Code/unavailable`` when the server cannot be reached;
    ///   ``StoreError/Code/closed`` after ``close()``.
    @discardableResult
    package func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try checkOpen()
        return try await pool.run(timeout: configuration.waitTimeout) { connection in
            try Self.transaction(
                on: connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", readOnly: true, attempts: 1, retried: nil, body)
        }
    }

    /// Runs `body` as one `SERIALIZABLE` transaction: all of it or none of it (S28), run again
    /// on a serialization failure or a deadlock.
    ///
    /// - Parameter body: The statements; it may run more than once.
    /// - Returns: What `body` returns, after the commit.
    /// - Throws: What `body` throws (after the rollback); ``StoreError/Code/busy`` when no
    ///   connection came free in time or the transaction kept conflicting; the first failure of
    ///   the transaction when the body caught it; ``StoreError/Code/unavailable`` when the server
    ///   cannot be reached; ``StoreError/Code/closed`` after ``close()``.
    @discardableResult
    package func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try checkOpen()
        let attempts = configuration.transactionAttempts
        return try await pool.run(timeout: configuration.waitTimeout) { [self] connection in
            try Self.transaction(
                on: connection, begin: "BEGIN ISOLATION LEVEL SERIALIZABLE", readOnly: false, attempts: attempts,
                retried: { self.retries.wrappingAdd(1, ordering: .relaxed) }, body)
        }
    }

    /// Runs `body` in a transaction, again after a serialization failure or deadlock while
    /// attempts remain, backing off a little longer each time.
    private static func transaction<T>(
        on connection: PostgreSQLConnection, begin: String, readOnly: Bool, attempts: Int, retried: (() -> Void)?,
        _ body: (any SQLConnection) throws -> T
    ) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                connection.begin(begin)
                connection.guardsTransactionControl = true
                let result: T
                do {
                    result = try body(connection)
                    connection.guardsTransactionControl = false
                } catch {
                    connection.guardsTransactionControl = false
                    throw error
                }
                if readOnly {
                    try connection.commitReadOnly()
                } else {
                    try connection.commit()
                }
                return result
            } catch {
                let failure = connection.transactionFailure
                connection.rollbackIfOpen()
                guard let failure, PostgreSQLError.isRetryable(failure.state) else { throw error }
                guard attempt < attempts else {
                    throw StoreError.busy(
                        "the transaction conflicted with others \(attempts) times (SQLSTATE \(failure.state)); try again")
                }
                retried?()
                // 0.5 ms, 1 ms, 1.5 ms, …: the winner of the conflict commits meanwhile.
                Platform.sleep(microseconds: UInt32(min(attempt, 20) * 500))
            }
        }
    }

    /// Holds a PostgreSQL advisory lock (`pg_advisory_lock`) on a connection of its own while
    /// `body` runs, so that several processes (instances starting together, `latchkey migrate`)
    /// do the same work one after the other.
    ///
    /// The lock is a session lock, taken and released outside any transaction of `body`, which
    /// uses the pool as usual; it is released when `body` ends, or by the server when the
    /// connection drops. Waiting for it may take up to ten minutes (another instance running a
    /// long migration), past the statement timeout of ordinary requests.
    ///
    /// - Parameters:
    ///   - key: The lock's name, hashed to PostgreSQL's 64-bit key.
    ///   - body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; ``StoreError/Code/unavailable`` when the lock's connection
    ///   cannot be made.
    package func withExclusiveLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
        try checkOpen()
        let lock = PostgreSQLSlot(
            index: -1, connector: connector.with(statementTimeout: Self.lockWait, responseTimeout: Self.lockWait + .seconds(5)))
        let number = Self.lockNumber(key)
        try await lock.run { connection in
            _ = try connection.queryOne("SELECT pg_advisory_lock(?) AS locked", [.integer(number)])
        }
        do {
            let result = try await body()
            _ = try? await lock.run { connection in
                try connection.queryOne("SELECT pg_advisory_unlock(?) AS unlocked", [.integer(number)])
            }
            await lock.close()
            return result
        } catch {
            await lock.close()
            throw error
        }
    }

    /// How long an instance waits for another's migrations before it gives up starting.
    static let lockWait: Duration = .seconds(600)

    /// FNV-1a of the key: stable across processes and builds, unlike `Hasher`.
    static func lockNumber(_ key: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Listens on `channel` with a connection of its own (`LISTEN`, outside the pool) on a
    /// thread of its own, made again after it is lost; `onChange` runs after each batch of
    /// notifications and once after each reconnection.
    ///
    /// - Parameters:
    ///   - channel: The channel (``SQLChangeSubscription/isValidChannel(_:)``).
    ///   - onChange: Runs on the listener's thread.
    /// - Returns: The subscription; ``close()`` does not end it, ``SQLChangeSubscription/cancel()`` does.
    package func subscribe(to channel: String, _ onChange: @escaping @Sendable () -> Void) -> SQLChangeSubscription {
        precondition(SQLChangeSubscription.isValidChannel(channel), "PostgreSQLDatabase: invalid change channel name")
        let listener = PostgreSQLListener(
            channel: channel, connector: connector, checkInterval: configuration.listenerCheckInterval, onChange: onChange)
        listener.start()
        return SQLChangeSubscription { listener.stop() }
    }

    /// Whether `SELECT 1` on a pooled connection answers within
    /// ``Configuration/healthCheckTimeout``.
    ///
    /// - Returns: `false` when the database is closed, the server cannot be reached, or every
    ///   connection stays busy past the timeout.
    package func isHealthy() async -> Bool {
        guard !closed.load(ordering: .acquiring) else { return false }
        let gate = OneShot()
        let timeout = configuration.healthCheckTimeout
        let pool = pool
        return await withCheckedContinuation { continuation in
            gate.arm(continuation)
            // A serial queue of its own: a timer on the global queue waits for a free thread of its
            // width-limited pool, about a second late for each thread blocked beyond the cores.
            Self.healthTimer.asyncAfter(deadline: .now() + DispatchTimeInterval(timeout)) { gate.resume(false) }
            Task {
                let healthy = (try? await pool.run(timeout: timeout) { connection in
                    try connection.queryOne("SELECT 1 AS one", []) != nil
                }) ?? false
                gate.resume(healthy)
            }
        }
    }

    /// Where the health probe's timeout fires.
    private static let healthTimer = DispatchQueue(label: "latchkey.store.health-timer")

    /// Pool and statement-cache figures, for metrics and tests.
    package struct Statistics: Sendable, Hashable {
        /// Connections in the pool (open or not yet opened).
        package var poolSize = 0
        /// Connections free now.
        package var idle = 0
        /// Callers waiting for a connection now.
        package var waiting = 0
        /// Prepared statements held now.
        package var cachedStatements = 0
        /// Statements taken from a cache.
        package var cacheHits = 0
        /// Statements that had to be prepared.
        package var cacheMisses = 0
        /// Writes run again after a serialization failure or deadlock.
        package var retries = 0
    }

    /// The pool's figures now.
    ///
    /// - Returns: The figures.
    package func statistics() async -> Statistics {
        var figures = Statistics(
            poolSize: pool.slots.count, idle: pool.idle, waiting: pool.waiting, retries: retries.load(ordering: .relaxed))
        for slot in pool.slots {
            let (cached, hits, misses) = await slot.statistics()
            figures.cachedStatements += cached
            figures.cacheHits += hits
            figures.cacheMisses += misses
        }
        return figures
    }

    /// Fails the callers still waiting for a connection, lets the running transactions finish,
    /// then closes every connection. Later calls throw ``StoreError/Code/closed``.
    package func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        await pool.close()
    }

    private func checkOpen() throws {
        guard !closed.load(ordering: .acquiring) else { throw StoreError.closed("the database is closed") }
    }
}
