internal import CLatchkeySQLite

/// One `sqlite3*` connection with its statement cache.
///
/// It does I/O, so it has an explicit ``close()`` and `deinit` only asserts that it ran
/// (STYLE §2). It is used from one thread at a time: its ``SQLiteWorker``'s queue, under that
/// worker's lock. SQLite is opened with `SQLITE_OPEN_NOMUTEX` accordingly.
final class SQLiteConnection: SQLConnection {
    /// What the connection is for; decides the open flags and pragmas.
    enum Role {
        /// The one connection that writes: creates the file and switches it to WAL.
        case writer
        /// A connection that only reads (`PRAGMA query_only`).
        case reader
    }

    private var handle: OpaquePointer?
    private var cache: StatementCache
    private let busyTimeout: Duration
    /// When the current wait for another connection's lock began; see ``busyHandler``.
    private var busySince: ContinuousClock.Instant?
    /// How many times this connection has had to wait for another connection's lock.
    private(set) var busyWaits = 0

    private init(handle: OpaquePointer, busyTimeout: Duration, cacheSize: Int) {
        self.handle = handle
        self.busyTimeout = busyTimeout
        self.cache = StatementCache(capacity: cacheSize)
    }

    deinit {
        assert(handle == nil, "leak of an open SQLite connection: call SQLiteDatabase.close()")
    }

    /// Opens a connection and applies the per-connection settings.
    ///
    /// - Throws: ``StoreError``: ``StoreError/Code/io`` when the file cannot be opened or
    ///   written or WAL is unavailable, ``StoreError/Code/corrupt`` when it is not a database.
    static func open(
        path: String, role: Role, busyTimeout: Duration, statementCacheSize: Int, durability: SQLiteDatabase.Durability
    ) throws -> SQLiteConnection {
        // Readers never create the file: the writer opened it first, and a reader finding it
        // gone should fail rather than read a new empty database.
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if role == .writer { flags |= SQLITE_OPEN_CREATE }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteResult.error(code, handle: handle, context: "open \(path)")
            sqlite3_close_v2(handle)
            throw error
        }
        let connection = SQLiteConnection(handle: handle, busyTimeout: busyTimeout, cacheSize: statementCacheSize)
        do {
            try connection.configure(role: role, path: path, durability: durability)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    private func configure(role: Role, path: String, durability: SQLiteDatabase.Durability) throws {
        guard let handle else { return }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_handler(handle, SQLiteConnection.busyHandler, Unmanaged.passUnretained(self).toOpaque())
        if role == .writer {
            guard sqlite3_db_readonly(handle, "main") == 0 else {
                throw StoreError.io("open \(path): the database file or its directory is read-only")
            }
            // WAL is a property of the file, so the writer sets it once for every connection and
            // process; it lets readers run beside the writer.
            let mode = try uncachedQuery("PRAGMA journal_mode = WAL").first?.optionalString("journal_mode")
            guard mode?.lowercased() == "wal" else {
                throw StoreError.io("open \(path): WAL journal mode unavailable (got \(mode ?? "nothing"))")
            }
            // The WAL is reset after each checkpoint but keeps its largest size on disk; past 64 MiB
            // it is truncated back, so one burst of writes does not hold the space for good.
            try uncachedQuery("PRAGMA journal_size_limit = 67108864")
            // Checkpoint every 10,000 WAL pages (40 MiB) instead of SQLite's 1,000: the checkpoint
            // runs inside a commit on the writer, and pages that every write touches (the end
            // of the audit log, index roots) are copied once per checkpoint however often they
            // changed. Apple sign-ins under load: about 3,250/s against 2,980/s (A/B, same run).
            try uncachedQuery("PRAGMA wal_autocheckpoint = 10000")
        }
        // FULL in WAL mode syncs the WAL at each commit, so a commit that returned survives a
        // power cut; NORMAL syncs only at checkpoints: a crash of the process loses nothing and
        // the database never corrupts, but a power loss may drop the last commits, never half
        // of one (S28). Only the writer commits changes; readers get the same for consistency.
        try uncachedQuery(durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        try uncachedQuery("PRAGMA foreign_keys = ON")
        // Page caches are most of the store's memory, and each fills up to its size as the
        // database grows (a refresh grant adds a token, a tombstone and an audit row), then
        // stays resident. The writer had 32 MiB, all of it resident after `make bench`'s
        // sessions sitting: 64.7 MB resident against 22.8 MB after start (issue 9). Now it
        // keeps 4 MiB: the pages every write touches (index roots, the ends of the audit log
        // and token tables) are a few hundred, a token lookup lands on a random index leaf
        // that no cache short of the whole index would hold, and a page the cache lacks is one
        // pread from the OS's cache. Readers keep SQLite's 2 MiB each, said here so the bound
        // is visible. No mmap (`mmap_size` stays 0): mapped pages would count as resident too.
        try uncachedQuery(role == .writer ? "PRAGMA cache_size = -4096" : "PRAGMA cache_size = -2048")
        if role == .writer {
            // Each grouped write runs in a savepoint, whose undo pages (the statement journal)
            // go to a temporary file once they pass 64 KiB; a group of sign-ins passes that, and
            // those file writes cost as much as the WAL's. Kept in memory (at most a group's
            // pages), Apple sign-ins under load wrote 28 KB each instead of 100 KB and ran 12%
            // faster (A/B, same run).
            try uncachedQuery("PRAGMA temp_store = MEMORY")
        }
        // No SQL functions with side effects from inside the schema (views, triggers).
        try uncachedQuery("PRAGMA trusted_schema = OFF")
        if role == .reader {
            try uncachedQuery("PRAGMA query_only = ON")
        }
    }

    /// Waits for another connection's lock in short sleeps until the busy timeout.
    ///
    /// SQLite's own `sqlite3_busy_timeout` sleeps up to 100 ms between tries; a process that
    /// writes back to back then keeps the lock almost all the time and the waiter starves. Short
    /// sleeps (50 µs, doubling up to 1.6 ms) find the gaps between its transactions.
    private static let busyHandler: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, count in
        guard let context else { return 0 }
        let connection = Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue()
        let now = ContinuousClock.now
        if count == 0 || connection.busySince == nil {
            connection.busySince = now
            connection.busyWaits += 1
        }
        guard let since = connection.busySince, now - since < connection.busyTimeout else {
            connection.busySince = nil
            return 0
        }
        Platform.sleep(microseconds: UInt32(50 << min(count, 5)))
        return 1
    }

    /// Finalizes the cached statements and closes the connection; idempotent.
    ///
    /// `sqlite3_close_v2` defers the close if a statement is still alive somewhere, rather than
    /// failing, so nothing leaks even then.
    func close() {
        guard let handle else { return }
        cache.removeAll()
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Statement-cache figures and lock waits.
    var statistics: SQLiteDatabase.Statistics {
        SQLiteDatabase.Statistics(
            cachedStatements: cache.count, cacheHits: cache.hits, cacheMisses: cache.misses, busyWaits: busyWaits)
    }

    // MARK: Transactions

    /// `BEGIN IMMEDIATE`: takes the write lock now, waiting for other processes up to the busy
    /// timeout, so no statement inside the transaction can meet `SQLITE_BUSY` (a deferred
    /// transaction that reads first and then writes can, without the busy handler ever running).
    ///
    /// - Throws: ``StoreError/Code/busy`` when the lock stayed taken for the whole timeout.
    func beginImmediate() throws {
        let deadline = ContinuousClock.now + busyTimeout
        var attempt: UInt32 = 0
        while true {
            do {
                try execute("BEGIN IMMEDIATE", [])
                return
            } catch let error as StoreError where error.code == .busy && ContinuousClock.now < deadline {
                // SQLite skips the busy handler when waiting could deadlock or while another
                // connection recovers the WAL; back off and try again until the deadline.
                attempt += 1
                busyWaits += 1
                Platform.sleep(microseconds: 100 << min(attempt, 5))
            }
        }
    }

    /// `BEGIN`: a read transaction, so every query in it sees one snapshot.
    func beginDeferred() throws {
        try execute("BEGIN", [])
    }

    /// `COMMIT`.
    ///
    /// - Throws: ``StoreError/Code/misuse`` when the body already ended the transaction itself;
    ///   a ``StoreError`` from SQLite.
    func commit() throws {
        guard let handle else { throw StoreError.closed("commit on a closed connection") }
        guard sqlite3_get_autocommit(handle) == 0 else {
            throw StoreError.misuse("the transaction was ended inside the closure; never run BEGIN, COMMIT or ROLLBACK there")
        }
        try execute("COMMIT", [])
    }

    /// Whether a transaction is open.
    var isInTransaction: Bool {
        handle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// `ROLLBACK` when a transaction is open; SQLite may already have rolled back after some
    /// errors (a full disk, an interrupt). Errors are ignored: the caller is already throwing.
    func rollbackIfOpen() {
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        _ = try? execute("ROLLBACK", [])
    }

    // MARK: SQLConnection

    @discardableResult
    func execute(_ sql: String, _ bindings: [SQLValue]) throws -> Int {
        let handle = try openHandle()
        try withStatement(sql, bindings) { statement in
            while try step(statement, handle: handle) {}
        }
        return Int(sqlite3_changes64(handle))
    }

    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [SQLRow] {
        let handle = try openHandle()
        return try withStatement(sql, bindings) { statement in
            var rows: [SQLRow] = []
            guard try step(statement, handle: handle) else { return rows }
            let columns = statement.columnNames()
            repeat {
                rows.append(SQLRow(columns: columns, values: statement.rowValues(count: columns.count)))
            } while try step(statement, handle: handle)
            return rows
        }
    }

    func queryOne(_ sql: String, _ bindings: [SQLValue]) throws -> SQLRow? {
        let handle = try openHandle()
        return try withStatement(sql, bindings) { statement in
            guard try step(statement, handle: handle) else { return nil }
            let columns = statement.columnNames()
            return SQLRow(columns: columns, values: statement.rowValues(count: columns.count))
        }
    }

    // MARK: Statements

    private func openHandle() throws -> OpaquePointer {
        guard let handle else { throw StoreError.closed("the connection is closed") }
        return handle
    }

    /// Runs `body` with the cached (or newly prepared and cached) statement for `sql`, bound to
    /// `bindings`; resets it and clears its bindings afterwards, whatever happens.
    private func withStatement<T>(
        _ sql: String, _ bindings: [SQLValue], _ body: (SQLiteStatement) throws -> T
    ) throws -> T {
        let handle = try openHandle()
        let statement: SQLiteStatement
        if let cached = cache.statement(for: sql) {
            statement = cached
        } else {
            statement = try prepare(SQLDialect.sqlite.sql(sql), handle: handle, persistent: cache.capacity > 0)
            cache.insert(statement, for: sql)
        }
        defer { statement.reset() }
        try statement.bind(bindings, handle: handle)
        return try body(statement)
    }

    /// Reads every row of a statement that is not worth caching (the pragmas at open).
    @discardableResult
    private func uncachedQuery(_ sql: String) throws -> [SQLRow] {
        let handle = try openHandle()
        let statement = try prepare(sql, handle: handle, persistent: false)
        var rows: [SQLRow] = []
        while try step(statement, handle: handle) {
            let columns = statement.columnNames()
            rows.append(SQLRow(columns: columns, values: statement.rowValues(count: columns.count)))
        }
        return rows
    }

    /// `sqlite3_prepare_v3`, refusing text that holds more than one statement, so a value
    /// spliced into SQL by mistake cannot smuggle in a second one.
    private func prepare(_ sql: String, handle: OpaquePointer, persistent: Bool) throws -> SQLiteStatement {
        // C strings end at the first NUL; SQL with one inside would be cut short silently.
        guard !sql.utf8.contains(0) else {
            throw StoreError.misuse("prepare \(SQLiteResult.excerpt(sql)): a NUL byte in SQL text; bind the value instead")
        }
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        // The length includes the terminating NUL, which spares SQLite a copy.
        let length = Int32(clamping: sql.utf8.count + 1)
        return try sql.withCString { text in
            var pointer: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, text, length, flags, &pointer, &tail)
            guard code == SQLITE_OK else {
                throw SQLiteResult.error(code, handle: handle, context: "prepare \(SQLiteResult.excerpt(sql))")
            }
            guard let pointer else {
                throw StoreError.misuse("prepare \(SQLiteResult.excerpt(sql)): no statement in the text")
            }
            let statement = SQLiteStatement(taking: pointer, sql: sql)
            if let tail, tail.pointee != 0 {
                // Whatever follows must be only whitespace and comments: preparing it gives no
                // statement then.
                var rest: OpaquePointer?
                let restCode = sqlite3_prepare_v3(handle, tail, -1, 0, &rest, nil)
                sqlite3_finalize(rest)
                guard restCode == SQLITE_OK, rest == nil else {
                    throw StoreError.misuse("prepare \(SQLiteResult.excerpt(sql)): one statement per call")
                }
            }
            return statement
        }
    }

    /// `sqlite3_step`: `true` for a row, `false` when done.
    private func step(_ statement: SQLiteStatement, handle: OpaquePointer) throws -> Bool {
        switch sqlite3_step(statement.pointer) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            throw SQLiteResult.error(code, handle: handle, context: "step \(SQLiteResult.excerpt(statement.sql))")
        }
    }
}
