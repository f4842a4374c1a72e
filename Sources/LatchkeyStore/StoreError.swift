import LatchkeyErrors

/// An error from the store: a database call failed, or a row did not hold what the caller asked
/// for.
///
/// The ``code`` says what kind of failure happened, so callers can react (a ``Code/constraint``
/// becomes 409, a ``Code/busy`` becomes 503); the ``message`` says what exactly, for logs and
/// tests. Equality and hashing compare the code only, so a test can write
/// `#expect(throws: StoreError.constraint()) { ... }`. The shape every error of the package
/// follows is described on `AuthError` (LatchkeyServer).
///
/// A message never contains a bound value: bindings may be secrets (token hashes, sealed keys,
/// password hashes). It may contain the SQL text and the database's own message, which names
/// tables and columns but not values; so SQL text must never have a secret spliced into it.
package struct StoreError: CodedError {
    /// The kind of a ``StoreError``; new codes may be added, so switch with a `default`. The raw
    /// value is the code's name.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// A UNIQUE, PRIMARY KEY, FOREIGN KEY, NOT NULL or CHECK constraint refused the change.
        package static let constraint = Code(rawValue: "constraint")
        /// The database stayed locked by another connection or process for the whole busy
        /// timeout.
        package static let busy = Code(rawValue: "busy")
        /// The database file is damaged or is not a database. Not transient: waiting does not
        /// mend it, so the server answers 500 and reports not ready until a write succeeds.
        package static let corrupt = Code(rawValue: "corrupt")
        /// The operating system refused a read, a write, a lock or an open: disk full
        /// (`SQLITE_FULL`), an I/O error (`SQLITE_IOERR_*`), a read-only or moved file
        /// (`SQLITE_READONLY_*`), a file that cannot be opened (`SQLITE_CANTOPEN`), permissions.
        /// Transient: nothing was written, and the same write succeeds once the cause is gone,
        /// so the server answers 503 `unavailable` with `Retry-After`.
        package static let io = Code(rawValue: "io")
        /// The database server cannot be reached or dropped the connection: refused, timed out,
        /// shutting down, out of connection slots. Transient: what failed is rolled back, and
        /// the driver reconnects by itself, so the server answers 503 `unavailable` with
        /// `Retry-After`.
        package static let unavailable = Code(rawValue: "unavailable")
        /// The SQL does not fit the database: a missing table or column, a syntax error, or a
        /// schema newer than this build knows.
        package static let schema = Code(rawValue: "schema")
        /// The database was closed before or while the operation was asked for.
        package static let closed = Code(rawValue: "closed")
        /// The store was used wrongly: several statements in one call, a wrong number of
        /// bindings, a bad configuration or migration list.
        package static let misuse = Code(rawValue: "misuse")
        /// A row the caller needs does not exist.
        package static let notFound = Code(rawValue: "notFound")
        /// A column held another type than the accessor asked for, or was missing or NULL.
        package static let typeMismatch = Code(rawValue: "typeMismatch")
        /// The database library failed in a way none of the other codes describe (out of
        /// memory, a value too big, an interrupted call).
        package static let library = Code(rawValue: "library")
    }

    /// The kind of failure.
    package var code: Code
    /// What exactly went wrong, in words safe to log.
    package var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What exactly went wrong; never include a bound value or any other secret.
    package init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// A ``Code/constraint`` error.
    ///
    /// - Parameter message: Which constraint refused the change.
    /// - Returns: The error.
    package static func constraint(_ message: String = "") -> StoreError {
        StoreError(.constraint, message)
    }

    /// A ``Code/busy`` error.
    ///
    /// - Parameter message: What was waiting, and for how long.
    /// - Returns: The error.
    package static func busy(_ message: String = "") -> StoreError {
        StoreError(.busy, message)
    }

    /// A ``Code/corrupt`` error.
    ///
    /// - Parameter message: What the database reported.
    /// - Returns: The error.
    package static func corrupt(_ message: String = "") -> StoreError {
        StoreError(.corrupt, message)
    }

    /// An ``Code/io`` error.
    ///
    /// - Parameter message: Which operation failed, and the operating system's reason.
    /// - Returns: The error.
    package static func io(_ message: String = "") -> StoreError {
        StoreError(.io, message)
    }

    /// An ``Code/unavailable`` error.
    ///
    /// - Parameter reason: What could not be reached, and why.
    /// - Returns: The error.
    package static func unavailable(_ reason: String = "") -> StoreError {
        StoreError(.unavailable, reason)
    }

    /// A ``Code/schema`` error.
    ///
    /// - Parameter message: What does not fit.
    /// - Returns: The error.
    package static func schema(_ message: String = "") -> StoreError {
        StoreError(.schema, message)
    }

    /// A ``Code/closed`` error.
    ///
    /// - Parameter message: What was asked of the closed database.
    /// - Returns: The error.
    package static func closed(_ message: String = "") -> StoreError {
        StoreError(.closed, message)
    }

    /// A ``Code/misuse`` error.
    ///
    /// - Parameter message: What was wrong with the call.
    /// - Returns: The error.
    package static func misuse(_ message: String = "") -> StoreError {
        StoreError(.misuse, message)
    }

    /// A ``Code/notFound`` error.
    ///
    /// - Parameter message: Which row was missing, named by kind, not by a secret key.
    /// - Returns: The error.
    package static func notFound(_ message: String = "") -> StoreError {
        StoreError(.notFound, message)
    }

    /// A ``Code/typeMismatch`` error.
    ///
    /// - Parameter message: Which column, what was expected and what was found.
    /// - Returns: The error.
    package static func typeMismatch(_ message: String = "") -> StoreError {
        StoreError(.typeMismatch, message)
    }

    /// A ``Code/library`` error.
    ///
    /// - Parameter message: The failing call and the library's own reason.
    /// - Returns: The error.
    package static func library(_ message: String = "") -> StoreError {
        StoreError(.library, message)
    }
}
