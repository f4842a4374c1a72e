package import FoundationEssentials

/// One result row: values by column name.
///
/// The typed accessors are strict, so a schema mistake shows up as an error rather than as a
/// silently wrong value: ``int(_:)`` wants an integer, ``string(_:)`` text, ``blob(_:)`` a blob,
/// ``bool(_:)`` the integer 0 or 1; each throws ``StoreError/Code/typeMismatch`` for NULL, another
/// type or a column the query did not return. The `optional…` accessors return `nil` for NULL
/// and for a missing column, and also throw nothing for another type: they answer "is there a
/// value of this type here".
///
/// When a query returns two columns of one name (a join), the first wins; alias them in the SQL.
package struct SQLRow: Sendable {
    /// The column names, in query order.
    package let columns: [String]
    /// The values, in query order.
    package let values: [SQLValue]

    /// Creates a row.
    ///
    /// - Parameters:
    ///   - columns: The column names.
    ///   - values: One value per column.
    package init(columns: [String], values: [SQLValue]) {
        precondition(columns.count == values.count, "SQLRow needs one value per column")
        self.columns = columns
        self.values = values
    }

    /// The value of `column`, or ``SQLValue/null`` when the query returned no such column.
    ///
    /// - Parameter column: A column name, as spelled in the query (case-sensitive).
    package subscript(_ column: String) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else { return .null }
        return values[index]
    }

    /// Whether the query returned a column named `column`.
    ///
    /// - Parameter column: A column name.
    /// - Returns: Whether it is among ``columns``.
    package func contains(_ column: String) -> Bool {
        columns.contains(column)
    }

    /// The integer in `column`.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The integer.
    /// - Throws: ``StoreError/Code/typeMismatch`` when the column is missing or holds no integer.
    package func int(_ column: String) throws -> Int64 {
        let value = try existing(column)
        guard let integer = value.integerValue else { throw mismatch(column, "integer", value) }
        return integer
    }

    /// The integer in `column`, or `nil` for NULL, another type or a missing column.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The integer, if there is one.
    package func optionalInt(_ column: String) -> Int64? {
        self[column].integerValue
    }

    /// The double in `column`; an integer converts.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The number.
    /// - Throws: ``StoreError/Code/typeMismatch`` when the column is missing or holds no number.
    package func double(_ column: String) throws -> Double {
        let value = try existing(column)
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        default: throw mismatch(column, "real", value)
        }
    }

    /// The text in `column`.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The text.
    /// - Throws: ``StoreError/Code/typeMismatch`` when the column is missing or holds no text.
    package func string(_ column: String) throws -> String {
        let value = try existing(column)
        guard let text = value.textValue else { throw mismatch(column, "text", value) }
        return text
    }

    /// The text in `column`, or `nil` for NULL, another type or a missing column.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The text, if there is some.
    package func optionalString(_ column: String) -> String? {
        self[column].textValue
    }

    /// The bytes in `column`.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The bytes.
    /// - Throws: ``StoreError/Code/typeMismatch`` when the column is missing or holds no blob.
    package func blob(_ column: String) throws -> [UInt8] {
        let value = try existing(column)
        guard let bytes = value.blobValue else { throw mismatch(column, "blob", value) }
        return bytes
    }

    /// The bytes in `column`, or `nil` for NULL, another type or a missing column.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The bytes, if there are some.
    package func optionalBlob(_ column: String) -> [UInt8]? {
        self[column].blobValue
    }

    /// The boolean in `column`, stored as the integer 0 or 1.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The boolean.
    /// - Throws: ``StoreError/Code/typeMismatch`` when the column is missing or holds anything
    ///   but 0 or 1.
    package func bool(_ column: String) throws -> Bool {
        switch try int(column) {
        case 0: return false
        case 1: return true
        default: throw StoreError.typeMismatch("column \(column): expected a boolean 0 or 1, found another integer")
        }
    }

    /// The boolean in `column`, or `nil` for NULL, a missing column or anything but 0 or 1.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The boolean, if there is one.
    package func optionalBool(_ column: String) -> Bool? {
        switch optionalInt(column) {
        case 0: false
        case 1: true
        default: nil
        }
    }

    /// The time in `column`, stored as whole unix seconds.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The time.
    /// - Throws: ``StoreError/Code/typeMismatch`` when the column is missing or holds no integer.
    package func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: TimeInterval(try int(column)))
    }

    /// The time in `column`, or `nil` for NULL, another type or a missing column.
    ///
    /// - Parameter column: A column name.
    /// - Returns: The time, if there is one.
    package func optionalDate(_ column: String) -> Date? {
        optionalInt(column).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    private func existing(_ column: String) throws -> SQLValue {
        guard let index = columns.firstIndex(of: column) else {
            throw StoreError.typeMismatch("no column \(column) in the result")
        }
        return values[index]
    }

    // Names the types only: the value itself may be a secret.
    private func mismatch(_ column: String, _ expected: String, _ found: SQLValue) -> StoreError {
        StoreError.typeMismatch("column \(column): expected \(expected), found \(found.typeName)")
    }
}
