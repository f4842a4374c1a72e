/// A database connection, lent to the body of ``SQLDatabase/read(_:)`` or
/// ``SQLDatabase/write(_:)`` for the length of one transaction.
///
/// It is not `Sendable`: use it only inside the closure it was passed to, on the thread that
/// called the closure, and never keep it. SQL takes one statement per call, written once in
/// portable SQL with `?` placeholders: the connection turns it into its database's dialect
/// itself (``SQLDialect/sql(_:)``), so callers never name the dialect. Values always travel as
/// bindings, never spliced into the text.
package protocol SQLConnection {
    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    ///
    /// Rows the statement returns (a `PRAGMA`, an `INSERT … RETURNING`) are read and dropped;
    /// use ``query(_:_:)`` to see them.
    ///
    /// - Parameters:
    ///   - sql: One statement in portable SQL.
    ///   - bindings: One value per `?`, in order.
    /// - Returns: The number of rows changed; 0 for statements that change none.
    /// - Throws: ``StoreError``, for example ``StoreError/Code/constraint`` when a UNIQUE or
    ///   FOREIGN KEY constraint refuses the change.
    @discardableResult
    func execute(_ sql: String, _ bindings: [SQLValue]) throws -> Int

    /// Runs one statement whose row count the caller does not need, perhaps after returning:
    /// PostgreSQL sends it ahead of the transaction's next statement or its commit, in the same
    /// round trip, instead of waiting for its answer now; SQLite runs it at once. Its failure
    /// fails the transaction all the same, thrown by that later call or by the commit; so use
    /// it only where the caller would not catch the error (an audit entry, a row that cannot
    /// clash).
    ///
    /// - Parameters:
    ///   - sql: One statement in portable SQL.
    ///   - bindings: One value per `?`, in order.
    /// - Throws: ``StoreError``: this statement's failure, or an earlier one's.
    func executeUnawaited(_ sql: String, _ bindings: [SQLValue]) throws

    /// Runs one statement and returns every row it produces.
    ///
    /// - Parameters:
    ///   - sql: One statement in portable SQL.
    ///   - bindings: One value per `?`, in order.
    /// - Returns: The rows, in the order the database produced them.
    /// - Throws: ``StoreError``.
    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [SQLRow]

    /// Runs one statement and returns its first row, if any; the rest are not read.
    ///
    /// - Parameters:
    ///   - sql: One statement in portable SQL.
    ///   - bindings: One value per `?`, in order.
    /// - Returns: The first row, or `nil` when there is none.
    /// - Throws: ``StoreError``.
    func queryOne(_ sql: String, _ bindings: [SQLValue]) throws -> SQLRow?

    /// Tells the subscribers of `channel` (``SQLDatabase/subscribe(to:_:)``), in every process,
    /// that this transaction changed what it names; they hear of it after the commit, and never
    /// when the transaction rolls back.
    ///
    /// PostgreSQL sends `pg_notify`; on SQLite it does nothing, since its subscribers see every
    /// commit through `PRAGMA data_version`.
    ///
    /// - Parameter channel: The channel's name (``SQLChangeSubscription/isValidChannel(_:)``).
    /// - Throws: ``StoreError``.
    func announceChange(on channel: String) throws
}

extension SQLConnection {
    /// Runs the statement at once: a database that answers each statement as it runs it, such
    /// as SQLite.
    ///
    /// - Parameters:
    ///   - sql: One statement.
    ///   - bindings: One value per `?`, in order.
    /// - Throws: ``StoreError``.
    package func executeUnawaited(_ sql: String, _ bindings: [SQLValue]) throws {
        try execute(sql, bindings)
    }

    /// Does nothing: a database without a notification channel, such as SQLite, whose
    /// subscribers notice commits by themselves.
    ///
    /// - Parameter channel: The channel's name (unused).
    package func announceChange(on channel: String) throws {}

    /// Runs one statement without bindings and returns how many rows it changed.
    ///
    /// - Parameter sql: One statement.
    /// - Returns: The number of rows changed.
    /// - Throws: ``StoreError``.
    @discardableResult
    package func execute(_ sql: String) throws -> Int {
        try execute(sql, [])
    }

    /// Runs one statement without bindings and returns its rows.
    ///
    /// - Parameter sql: One statement.
    /// - Returns: The rows.
    /// - Throws: ``StoreError``.
    package func query(_ sql: String) throws -> [SQLRow] {
        try query(sql, [])
    }

    /// Runs one statement without bindings and returns its first row, if any.
    ///
    /// - Parameter sql: One statement.
    /// - Returns: The first row, or `nil`.
    /// - Throws: ``StoreError``.
    package func queryOne(_ sql: String) throws -> SQLRow? {
        try queryOne(sql, [])
    }

    /// Writes `rows` into `table` in multi-row `INSERT`s of up to 500 rows and 30,000 bound
    /// values each (PostgreSQL binds at most 65,535, SQLite 32,766): what copies and seeds a
    /// whole table, many times faster than one statement a row.
    ///
    /// - Parameters:
    ///   - table: The table's name, quoted here.
    ///   - columns: The columns each row fills, in order; quoted here.
    ///   - rows: One value per column each.
    /// - Throws: ``StoreError``.
    package func insertRows(into table: String, columns: [String], _ rows: some Collection<[SQLValue]>) throws {
        guard !rows.isEmpty, !columns.isEmpty else { return }
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let head = "INSERT INTO \(SQLIdentifier.quoted(table)) (\(columns.map(SQLIdentifier.quoted).joined(separator: ", "))) VALUES "
        let batch = max(1, min(500, 30_000 / columns.count))
        var start = rows.startIndex
        while start != rows.endIndex {
            let end = rows.index(start, offsetBy: batch, limitedBy: rows.endIndex) ?? rows.endIndex
            let count = rows.distance(from: start, to: end)
            try execute(head + Array(repeating: tuple, count: count).joined(separator: ", "), Array(rows[start..<end].joined()))
            start = end
        }
    }
}

/// SQL identifiers as both engines read them.
package enum SQLIdentifier {
    /// `name` in double quotes, any double quote in it doubled.
    package static func quoted(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
}
