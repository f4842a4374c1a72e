import LatchkeyErrors

/// Why ``DatabaseCopy`` refused or failed to copy a database.
///
/// The message names schema versions, tables and columns, never a value from a row: rows hold
/// token hashes, sealed keys and password hashes.
package struct DatabaseCopyError: CodedError {
    /// The kind of a ``DatabaseCopyError``; new codes may be added, so switch with a `default`.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The source and the target are not at the same schema version, or their tables or
        /// columns differ.
        package static let schemaMismatch = Code(rawValue: "schemaMismatch")
        /// The target already holds rows; a copy only fills an empty database.
        package static let targetNotEmpty = Code(rawValue: "targetNotEmpty")
        /// The source's foreign keys form a cycle, so no table order satisfies them.
        package static let foreignKeyCycle = Code(rawValue: "foreignKeyCycle")
    }

    /// The kind of failure.
    package var code: Code
    /// What exactly went wrong, in words safe to log.
    package var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What exactly went wrong; never a value from a row.
    package init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// A ``Code/schemaMismatch`` error.
    ///
    /// - Parameter message: What differs.
    /// - Returns: The error.
    package static func schemaMismatch(_ message: String = "") -> DatabaseCopyError {
        DatabaseCopyError(.schemaMismatch, message)
    }

    /// A ``Code/targetNotEmpty`` error.
    ///
    /// - Parameter message: Which tables hold rows.
    /// - Returns: The error.
    package static func targetNotEmpty(_ message: String = "") -> DatabaseCopyError {
        DatabaseCopyError(.targetNotEmpty, message)
    }
}
