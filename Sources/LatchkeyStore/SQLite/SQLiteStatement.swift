internal import CLatchkeySQLite

/// A prepared `sqlite3_stmt`, finalized when the last reference goes.
///
/// Memory-only, so `deinit` frees it (STYLE §2). It belongs to one ``SQLiteConnection`` and is
/// used only on that connection's thread; it is not `Sendable`.
final class SQLiteStatement {
    let pointer: OpaquePointer
    /// The SQL it was prepared from, for error reasons.
    let sql: String

    init(taking pointer: OpaquePointer, sql: String) {
        self.pointer = pointer
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(pointer)
    }

    /// Binds one value per placeholder.
    ///
    /// Text and blobs are bound with `SQLITE_TRANSIENT`, so SQLite copies them and no Swift
    /// buffer has to outlive the call. Lengths are passed explicitly, so NUL bytes survive.
    ///
    /// - Throws: ``StoreError/Code/misuse`` when the count is wrong; a ``StoreError`` from SQLite.
    func bind(_ values: [SQLValue], handle: OpaquePointer) throws {
        let expected = Int(sqlite3_bind_parameter_count(pointer))
        guard expected == values.count else {
            throw StoreError.misuse(
                "\(SQLiteResult.excerpt(sql)) takes \(expected) bindings, \(values.count) given")
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null:
                code = sqlite3_bind_null(pointer, index)
            case .integer(let integer):
                code = sqlite3_bind_int64(pointer, index, integer)
            case .real(let real):
                code = sqlite3_bind_double(pointer, index, real)
            case .text(var text):
                code = text.withUTF8 { utf8 in
                    // A NULL pointer would bind SQL NULL, so an empty string needs a real one.
                    guard let base = utf8.baseAddress, !utf8.isEmpty else {
                        return sqlite3_bind_text64(pointer, index, "", 0, SQLiteResult.transient, UInt8(SQLITE_UTF8))
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                        sqlite3_bind_text64(
                            pointer, index, $0, UInt64(utf8.count), SQLiteResult.transient, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes):
                // Likewise: an empty blob is a zero-length blob, not NULL.
                code = bytes.withUnsafeBytes { raw in
                    guard let base = raw.baseAddress, !raw.isEmpty else {
                        return sqlite3_bind_zeroblob(pointer, index, 0)
                    }
                    return sqlite3_bind_blob64(pointer, index, base, UInt64(raw.count), SQLiteResult.transient)
                }
            }
            guard code == SQLITE_OK else {
                throw SQLiteResult.error(
                    code, handle: handle, context: "bind \(value.typeName) to \(SQLiteResult.excerpt(sql))")
            }
        }
    }

    /// The result's column names.
    func columnNames() -> [String] {
        (0..<sqlite3_column_count(pointer)).map { String(cString: sqlite3_column_name(pointer, $0)) }
    }

    /// The current row's values, after `sqlite3_step` returned `SQLITE_ROW`.
    func rowValues(count: Int) -> [SQLValue] {
        (0..<Int32(count)).map(value(at:))
    }

    private func value(at column: Int32) -> SQLValue {
        switch sqlite3_column_type(pointer, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(pointer, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(pointer, column))
        case SQLITE_TEXT:
            // The pointer first, then the length: that order keeps SQLite from converting twice.
            guard let text = sqlite3_column_text(pointer, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(pointer, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let blob = sqlite3_column_blob(pointer, column) else { return .blob([]) }
            let count = Int(sqlite3_column_bytes(pointer, column))
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }

    /// Makes the statement ready for its next use and drops the bound values, so no secret
    /// stays referenced by a cached statement.
    func reset() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }
}
