internal import CLatchkeyPQ
#if canImport(Glibc)
private import Glibc
#elseif canImport(Musl)
private import Musl
#endif

/// One `PGconn*` with its prepared statements.
///
/// It does I/O, so it has an explicit ``close()`` and `deinit` only asserts that it ran
/// (STYLE §2). Every call blocks on the network; it is used only on its
/// ``PostgreSQLSlot``'s queue, one thread at a time, never on an event loop.
///
/// Every call is sent and then awaited with a deadline (`PQsend…`, `poll`, `PQgetResult`), so a
/// server that stops answering (a frozen host, a network that drops packets) costs at most
/// ``PostgreSQLConnector/responseTimeout`` before the connection is given up and the statement
/// fails with ``StoreError/Code/unavailable``; libpq's blocking calls would wait for TCP to give
/// up, many minutes.
///
/// The connection stays in libpq's pipeline mode: each call sends its requests and a Sync in one
/// write and reads their results up to the Sync's. That lets a transaction's `BEGIN` travel with
/// its first statement instead of costing a round trip of its own, and a read-only
/// transaction's `COMMIT` go out without waiting for its answer, which the next call on the
/// connection reads before its own: a one-statement read is one round trip, not three.
///
/// Statements are prepared once per connection (`PQprepare`, named `lk1`, `lk2`, …) and run
/// with `PQexecPrepared`; the cache is keyed by the SQL text and the parameter types, since
/// PostgreSQL fixes a prepared statement's parameter types. Parameters travel in binary: `int8`
/// big-endian, `float8` as its bits, `text` as UTF-8, `bytea` as the bytes, NULL without a type
/// so that the server takes the column's. Results come back as text and are read by column type
/// (``PostgreSQLValue``).
/// A transaction could not begin because its connection was already lost.
struct StaleConnection: Error {
    var error: StoreError
}

final class PostgreSQLConnection: SQLConnection {
    private var handle: OpaquePointer?
    private var cache: [String: Prepared] = [:]
    private let cacheCapacity: Int
    private var tick: UInt64 = 0
    private var nextName = 0
    /// The SQLSTATE and error of the first statement that failed in the open transaction:
    /// PostgreSQL aborts the whole transaction then, whatever the caller did with the error.
    private(set) var transactionFailure: (state: String, error: StoreError)?
    private var inTransaction = false
    /// The open transaction's `BEGIN`, not sent yet: it goes out with the first statement.
    private var pendingBegin: String?
    /// Whether the transaction's failure was its `BEGIN`'s, on a connection found lost.
    private var failedAtBegin = false
    /// Whether a read-only transaction's `COMMIT` was sent and its answer is still to be read.
    private var unansweredCommit = false
    /// The requests sent since the last Sync, whose results are still to be read (as error
    /// contexts).
    private var unread: [String] = []
    /// Whether the transaction's `BEGIN` is among ``unread``.
    private var beginUnread = false
    /// Set while a transaction's body runs: transaction control belongs to the database then.
    var guardsTransactionControl = false
    /// Statements taken from the cache and statements prepared, for tests and metrics.
    private(set) var cacheHits = 0
    private(set) var cacheMisses = 0

    private struct Prepared {
        var name: String
        var parameterCount: Int
        var lastUse: UInt64
    }

    private let responseTimeout: Duration

    private init(handle: OpaquePointer, cacheCapacity: Int, responseTimeout: Duration) {
        self.handle = handle
        self.cacheCapacity = max(1, cacheCapacity)
        self.responseTimeout = responseTimeout
    }

    deinit {
        assert(handle == nil, "leak of an open PostgreSQL connection: call PostgreSQLDatabase.close()")
    }

    /// Connects and applies the per-session settings: the statement timeout, UTF-8, and no
    /// notices on standard error.
    ///
    /// - Throws: ``StoreError/Code/unavailable`` when the server cannot be reached or refuses
    ///   the login; ``StoreError/Code/misuse`` for a connection string libpq cannot read.
    static func open(_ connector: PostgreSQLConnector) throws -> PostgreSQLConnection {
        let handle = try connector.connect()
        guard PQenterPipelineMode(handle) == 1 else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw StoreError.unavailable("PostgreSQL: the connection could not enter pipeline mode: \(message)")
        }
        let connection = PostgreSQLConnection(
            handle: handle, cacheCapacity: connector.statementCacheSize, responseTimeout: connector.responseTimeout)
        do {
            let milliseconds = connector.statementTimeout.components.seconds * 1000
                + connector.statementTimeout.components.attoseconds / 1_000_000_000_000_000
            try connection.simple("SET statement_timeout = \(milliseconds)")
            // A transaction left open by a wedged client would hold its locks for good.
            try connection.simple("SET idle_in_transaction_session_timeout = \(max(milliseconds * 2, 10_000))")
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Whether the connection still works, as far as can be told without a round trip: reads
    /// what the server may have sent meanwhile (a shutdown notice, the end of the stream).
    var isUsable: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        return PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    /// Whether libpq still counts the connection as up (no I/O).
    var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Closes the connection; idempotent.
    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        cache.removeAll()
    }

    var cachedStatements: Int { cache.count }

    // MARK: Transactions

    /// Opens a transaction: `statement` (`BEGIN …`) goes out with the transaction's first
    /// statement; a transaction that runs none costs no round trip at all.
    func begin(_ statement: String) {
        transactionFailure = nil
        failedAtBegin = false
        pendingBegin = statement
        inTransaction = true
    }

    /// Commits the open transaction. PostgreSQL answers `COMMIT` of a failed transaction with a
    /// rollback and no error; that is reported as the failure that aborted it.
    ///
    /// - Throws: ``StaleConnection`` when the transaction's first exchange found the connection
    ///   lost (the server ended it while it sat in the pool): nothing ran, so the caller may
    ///   run again on a new one.
    func commit() throws {
        try checkCommittable()
        if pendingBegin != nil {
            pendingBegin = nil
        } else {
            try simple("COMMIT")
        }
        inTransaction = false
    }

    /// Commits a read-only transaction without waiting for the answer, which cannot change what
    /// the transaction read; the next call on the connection reads it. A connection that cannot
    /// send it is closed, so the next transaction on its slot connects afresh.
    func commitReadOnly() throws {
        guard unread.isEmpty else { return try commit() }
        try checkCommittable()
        inTransaction = false
        guard pendingBegin == nil else {
            pendingBegin = nil
            return
        }
        guard let handle, PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 0) == 1, PQpipelineSync(handle) == 1 else {
            close()
            return
        }
        unansweredCommit = true
    }

    private func checkCommittable() throws {
        guard let failure = transactionFailure else { return }
        if failedAtBegin { throw StaleConnection(error: failure.error) }
        throw failure.error
    }

    /// `ROLLBACK` when a transaction is open; errors are ignored, the caller is already
    /// throwing (and a lost connection has no transaction left).
    func rollbackIfOpen() {
        guard inTransaction else { return }
        inTransaction = false
        guard pendingBegin == nil else {
            pendingBegin = nil
            return
        }
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return }
        // A failure among the unread results makes the server skip what follows it up to the
        // Sync, a ROLLBACK in the same batch included.
        if !unread.isEmpty, let (result, _) = try? awaitResults() { PQclear(result) }
        _ = try? simple("ROLLBACK")
    }

    // MARK: SQLConnection

    @discardableResult
    func execute(_ sql: String, _ bindings: [SQLValue]) throws -> Int {
        let result = try run(sql, bindings)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Sends the statement behind those before it and returns: its result is read with the next
    /// statement's or the commit's, in the same round trip.
    func executeUnawaited(_ sql: String, _ bindings: [SQLValue]) throws {
        _ = try send(sql, bindings)
    }

    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [SQLRow] {
        let result = try run(sql, bindings)
        defer { PQclear(result) }
        return PostgreSQLValue.rows(of: result, limit: nil)
    }

    func queryOne(_ sql: String, _ bindings: [SQLValue]) throws -> SQLRow? {
        let result = try run(sql, bindings)
        defer { PQclear(result) }
        return PostgreSQLValue.rows(of: result, limit: 1).first
    }

    /// Sends `pg_notify(channel, '')` in the open transaction: PostgreSQL delivers it to every
    /// `LISTEN`ing session at the commit, and drops it on a rollback or a retried attempt.
    func announceChange(on channel: String) throws {
        guard SQLChangeSubscription.isValidChannel(channel) else { throw StoreError.misuse("not a valid change channel name") }
        _ = try queryOne("SELECT pg_notify(?, '') AS notified", [.text(channel)])
    }

    // MARK: Statements

    private func openHandle() throws -> OpaquePointer {
        guard let handle else { throw StoreError.closed("the connection is closed") }
        return handle
    }

    /// Runs a statement without parameters or a prepared statement (session settings,
    /// transaction control).
    private func simple(_ sql: String) throws {
        let handle = try openHandle()
        try enqueue(context: sql) { PQsendQueryParams($0, sql, 0, nil, nil, nil, nil, 0) }
        let (result, context) = try awaitResults()
        guard let result else { throw fail(nil, handle: handle, context: context) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw fail(result, handle: handle, context: context)
        }
    }

    /// Runs one statement and waits for its result, which the caller clears.
    ///
    /// - Throws: ``StaleConnection`` when the exchange that carries the transaction's `BEGIN`
    ///   finds the connection lost: nothing ran, so the transaction may run again on a new
    ///   connection.
    private func run(_ sql: String, _ bindings: [SQLValue]) throws -> OpaquePointer {
        let begins = pendingBegin != nil || beginUnread
        do {
            let handle = try openHandle()
            let key = try send(sql, bindings)
            let (result, context) = try awaitResults()
            guard let result else { throw fail(nil, handle: handle, context: context) }
            let status = PQresultStatus(result)
            guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
                defer { PQclear(result) }
                let error = fail(result, handle: handle, context: context)
                if context == sql, error.code == .schema || error.code == .misuse {
                    // The statement may be what is wrong (a table it names was dropped):
                    // prepare afresh next time.
                    forget(key)
                }
                throw error
            }
            return result
        } catch let error as StoreError where begins && error.code == .unavailable {
            failedAtBegin = true
            throw StaleConnection(error: error)
        }
    }

    /// Checks, prepares (or takes from the cache) and sends one statement without waiting for
    /// its result.
    ///
    /// - Returns: The statement's key in the cache.
    private func send(_ sql: String, _ bindings: [SQLValue]) throws -> String {
        let handle = try openHandle()
        if guardsTransactionControl { try TransactionControl.refuse(sql) }
        if let failure = transactionFailure {
            // PostgreSQL would refuse it anyway (25P02); say why.
            throw StoreError(failure.error.code, "the transaction already failed: \(failure.error.message)")
        }
        guard !sql.utf8.contains(0) else {
            throw StoreError.misuse("prepare \(Self.excerpt(sql)): a NUL byte in SQL text; bind the value instead")
        }
        let types = bindings.map(PostgreSQLValue.typeOID)
        let key = types.isEmpty ? sql : sql + "\u{0}" + types.map(String.init).joined(separator: ",")
        let prepared = try statement(for: key, sql: sql, types: types, handle: handle)
        guard prepared.parameterCount == bindings.count else {
            throw StoreError.misuse(
                "\(Self.excerpt(sql)): \(bindings.count) bindings for \(prepared.parameterCount) placeholders")
        }
        try enqueue(context: sql) { handle in
            try PostgreSQLValue.withParameters(bindings) { values, lengths, formats in
                PQsendQueryPrepared(handle, prepared.name, Int32(bindings.count), values, lengths, formats, 0)
            }
        }
        return key
    }

    private func statement(for key: String, sql: String, types: [UInt32], handle: OpaquePointer) throws -> Prepared {
        tick &+= 1
        if cache[key] != nil {
            cacheHits += 1
            cache[key]!.lastUse = tick
            return cache[key]!
        }
        cacheMisses += 1
        if cache.count >= cacheCapacity, let oldest = cache.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            forget(oldest)
        }
        nextName += 1
        let name = "lk\(nextName)"
        let portable = SQLDialect.postgreSQL.sql(sql)
        // Parse and Describe in one round trip: the description is the last result, or the
        // failure the first one.
        try enqueue(context: sql) { handle in
            types.withUnsafeBufferPointer { types in
                PQsendPrepare(handle, name, portable, Int32(types.count), types.baseAddress)
            }
        }
        try enqueue(context: sql) { PQsendDescribePrepared($0, name) }
        let (description, context) = try awaitResults()
        guard let description else { throw fail(nil, handle: handle, context: context) }
        defer { PQclear(description) }
        guard PQresultStatus(description) == PGRES_COMMAND_OK else { throw fail(description, handle: handle, context: context) }
        let prepared = Prepared(name: name, parameterCount: Int(PQnparams(description)), lastUse: tick)
        cache[key] = prepared
        return prepared
    }

    /// Drops a prepared statement from the cache and the server. Outside a transaction, or in
    /// one that has not failed, the `DEALLOCATE` cannot fail for a reason worth reporting.
    private func forget(_ key: String) {
        guard let prepared = cache.removeValue(forKey: key), handle != nil, transactionFailure == nil else { return }
        try? simple("DEALLOCATE \(prepared.name)")
    }

    /// Sends one request with `send` without waiting for its result, behind the open
    /// transaction's `BEGIN` when that has not gone out yet.
    private func enqueue(context: String, _ send: (OpaquePointer) throws -> Int32) throws {
        let handle = try openHandle()
        if let begin = pendingBegin {
            pendingBegin = nil
            guard PQsendQueryParams(handle, begin, 0, nil, nil, nil, nil, 0) == 1 else { throw fail(nil, handle: handle, context: begin) }
            unread.append(begin)
            beginUnread = true
        }
        guard try send(handle) == 1 else { throw fail(nil, handle: handle, context: context) }
        unread.append(context)
    }

    /// Sends a Sync and reads the results of every request sent since the last one, at most the
    /// response timeout; the answer of an unanswered read-only `COMMIT` comes first and is
    /// dropped.
    ///
    /// - Returns: The last request's result, or the first error result (a failed request makes
    ///   the server skip the rest up to the Sync), with the request it belongs to; `nil` when
    ///   there was no result (the caller reports the connection's error).
    /// - Throws: ``StoreError/Code/unavailable`` when the server did not answer in time: the
    ///   connection is closed then, since its protocol state is unknown.
    private func awaitResults() throws -> (result: OpaquePointer?, context: String) {
        let handle = try openHandle()
        let requests = unread
        unread.removeAll(keepingCapacity: true)
        beginUnread = false
        var dropping = unansweredCommit
        unansweredCommit = false
        var context = requests.last ?? "Sync"
        guard PQpipelineSync(handle) == 1 else { return (nil, context) }
        let deadline = ContinuousClock.now + responseTimeout
        var kept: OpaquePointer?
        var index = 0
        var ends = 0
        while true {
            while PQisBusy(handle) == 1 {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else {
                    if let kept { PQclear(kept) }
                    close()
                    let error = StoreError.unavailable(
                        "\(Self.excerpt(context)): PostgreSQL did not answer within \(responseTimeout); the connection was dropped")
                    if inTransaction, transactionFailure == nil { transactionFailure = ("08006", error) }
                    throw error
                }
                let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, milliseconds) < 0, errno != EINTR { break }
                if PQconsumeInput(handle) == 0 { break }
            }
            guard let result = PQgetResult(handle) else {
                // NULL ends each request's results; two in a row, nothing more is coming.
                ends += 1
                if ends > 1 || PQstatus(handle) != CONNECTION_OK { break }
                if !dropping { index += 1 }
                continue
            }
            ends = 0
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(result)
                guard dropping else { break }
                dropping = false
                continue
            }
            if dropping || status == PGRES_PIPELINE_ABORTED {
                PQclear(result)
            } else if kept.map({ PQresultStatus($0) != PGRES_FATAL_ERROR }) ?? true {
                // A later request's result replaces an earlier one's; the first error stays.
                if let kept { PQclear(kept) }
                kept = result
                if index < requests.count { context = requests[index] }
            } else {
                PQclear(result)
            }
            // A lost connection yields results without end; stop at the first one.
            if PQstatus(handle) != CONNECTION_OK { break }
        }
        return (kept, context)
    }

    /// The error of a failed call, remembered as the transaction's failure when one is open.
    private func fail(_ result: OpaquePointer?, handle: OpaquePointer, context: String) -> StoreError {
        let (state, error) = PostgreSQLError.error(result: result, connection: handle, context: Self.excerpt(context))
        if inTransaction, transactionFailure == nil { transactionFailure = (state, error) }
        return error
    }

    /// The start of a statement, for error messages (SQL text holds no values, only `?`).
    static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count <= 120 ? flat : String(flat.prefix(117)) + "..."
    }
}
