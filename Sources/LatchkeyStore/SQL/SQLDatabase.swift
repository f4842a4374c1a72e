/// A database that runs short synchronous transactions off the caller's thread.
///
/// The closures passed to ``read(_:)`` and ``write(_:)`` run on the database's own threads, so
/// an event-loop thread that awaits them never blocks on disk or on a lock. Keep them short and
/// free of other I/O: a write closure holds the database's only write lock while it runs.
package protocol SQLDatabase: Sendable {
    /// How this database spells placeholders and column types.
    var dialect: SQLDialect { get }

    /// Runs `body` in a read-only transaction: every query in it sees one consistent snapshot,
    /// and may run beside a write.
    ///
    /// - Parameter body: The queries; it must not write.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, ``StoreError/Code/closed`` after ``close()``, or another
    ///   ``StoreError``.
    @discardableResult
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T

    /// Runs `body` as one write transaction: all of it commits, or, when anything in it throws,
    /// none of it does (S28).
    ///
    /// Writes are serialised. When another process holds the write lock, the transaction waits
    /// up to the busy timeout before failing with ``StoreError/Code/busy``; an overloaded
    /// database may also refuse at once with ``StoreError/Code/busy``. Nothing has been written
    /// then, so the caller may retry or answer 503.
    ///
    /// - Parameter body: The statements.
    /// - Returns: What `body` returns, after the commit succeeded.
    /// - Throws: What `body` throws (after the rollback), ``StoreError/Code/busy``,
    ///   ``StoreError/Code/closed`` after ``close()``, or another ``StoreError``.
    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T

    /// Runs `body` while holding a lock named `key` that every process using this database
    /// honours, so that work such as migrating runs in one process at a time.
    ///
    /// PostgreSQL takes an advisory lock; SQLite needs none, since each of its write
    /// transactions already holds the file's one write lock (the default does nothing).
    ///
    /// - Parameters:
    ///   - key: The lock's name.
    ///   - body: The work; it uses the database as usual.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a ``StoreError`` when the lock cannot be taken.
    func withExclusiveLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T

    /// Calls `onChange` after every commit, in this process or another, that announced a change
    /// on `channel` (``SQLConnection/announceChange(on:)``), until the subscription is cancelled.
    ///
    /// A change committed after this returns is told. Delivery is prompt (well under a second on
    /// PostgreSQL, within about a second on SQLite) but not exact: a call may cover several
    /// changes, and calls without a change happen (after a lost connection is made again, where
    /// changes may have been missed; on SQLite, after a write to any table). Treat each call as
    /// "re-read what you cache", and keep a slow full re-read as a safety net.
    ///
    /// - Parameters:
    ///   - channel: The channel's name (``SQLChangeSubscription/isValidChannel(_:)``).
    ///   - onChange: Runs on a thread of the database's own; keep it short (start a task).
    /// - Returns: The running subscription.
    func subscribe(to channel: String, _ onChange: @escaping @Sendable () -> Void) -> SQLChangeSubscription

    /// Whether a trivial query succeeds within a short time; for `/readyz`.
    ///
    /// - Returns: `false` when the database is closed, unreadable or too slow to answer.
    func isHealthy() async -> Bool

    /// Finishes the work already asked for, then closes every connection. Later calls throw
    /// ``StoreError/Code/closed``; closing twice does nothing.
    func close() async
}

extension SQLDatabase {
    /// Runs `body`: a database whose write transactions are serialised needs no other lock.
    ///
    /// - Parameters:
    ///   - key: The lock's name (unused).
    ///   - body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    package func withExclusiveLock<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
        try await body()
    }
}
