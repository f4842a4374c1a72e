internal import CLatchkeySQLite

/// Turns SQLite result codes into ``StoreError``s.
enum SQLiteResult {
    /// `SQLITE_TRANSIENT`: SQLite copies a bound text or blob before the bind call returns, so
    /// the Swift buffer only has to live for the call (the C macro is `((sqlite3_destructor_type)-1)`).
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// The error for a failed call.
    ///
    /// - Parameters:
    ///   - code: The extended result code the call returned.
    ///   - handle: The connection, for `sqlite3_errmsg`; read it before any other call on it.
    ///   - context: What was being done, for example `step "INSERT INTO users …"`.
    /// - Returns: The error, with a reason naming the context, SQLite's message and code.
    static func error(_ code: Int32, handle: OpaquePointer?, context: String) -> StoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return StoreError(storeCode(code), "\(context): \(message) (SQLite code \(code))")
    }

    /// The ``StoreError/Code`` for an extended result code.
    static func storeCode(_ code: Int32) -> StoreError.Code {
        switch code & 0xff {
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH: .constraint
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
        case SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_PROTOCOL, SQLITE_NOLFS: .io
        // The writer refuses to open a read-only file, so a bare SQLITE_READONLY later is a
        // write inside `read` (the readers run with `PRAGMA query_only`); the extended
        // SQLITE_READONLY_* codes are environment problems.
        case SQLITE_READONLY: code == SQLITE_READONLY ? .misuse : .io
        case SQLITE_ERROR, SQLITE_SCHEMA: .schema
        case SQLITE_MISUSE, SQLITE_RANGE: .misuse
        default: .library
        }
    }

    /// SQL shortened for an error reason: statements are ours and carry no values, but a long
    /// one would drown the message.
    static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count <= 160 ? "\"\(flat)\"" : "\"\(flat.prefix(160))…\""
    }
}
