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
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of a ``StoreError``; new codes may be added, so switch with a `default`. The raw
    /// value is the code's name.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A UNIQUE, PRIMARY KEY, FOREIGN KEY, NOT NULL or CHECK constraint refused the change.
        public static let constraint = Code(rawValue: "constraint")
        /// The database stayed locked by another connection or process for the whole busy
        /// timeout.
        public static let busy = Code(rawValue: "busy")
        /// The database file is damaged or is not a database. Not transient: waiting does not
        /// mend it, so the server answers 500 and reports not ready until a write succeeds.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The operating system refused a read, a write, a lock or an open: disk full
        /// (`SQLITE_FULL`), an I/O error (`SQLITE_IOERR_*`), a read-only or moved file
        /// (`SQLITE_READONLY_*`), a file that cannot be opened (`SQLITE_CANTOPEN`), permissions.
        /// Transient: nothing was written, and the same write succeeds once the cause is gone,
        /// so the server answers 503 `unavailable` with `Retry-After`.
        public static let io = Code(rawValue: "io")
        /// The database server cannot be reached or dropped the connection: refused, timed out,
        /// shutting down, out of connection slots. Transient: what failed is rolled back, and
        /// the driver reconnects by itself, so the server answers 503 `unavailable` with
        /// `Retry-After`.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The SQL does not fit the database: a missing table or column, a syntax error, or a
        /// schema newer than this build knows.
        public static let schema = Code(rawValue: "schema")
        /// The database was closed before or while the operation was asked for.
        public static let closed = Code(rawValue: "closed")
        /// The store was used wrongly: several statements in one call, a wrong number of
        /// bindings, a bad configuration or migration list.
        public static let misuse = Code(rawValue: "misuse")
        /// A row the caller needs does not exist.
        public static let notFound = Code(rawValue: "notFound")
        /// A column held another type than the accessor asked for, or was missing or NULL.
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// The database library failed in a way none of the other codes describe (out of
        /// memory, a value too big, an interrupted call).
        public static let library = Code(rawValue: "library")

        /// The code's name, for example `constraint`.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What exactly went wrong, in words safe to log.
    public var message: String

    /// The former name of ``message``, kept so that existing callers read on.
    public var reason: String {
        get { message }
        set { message = newValue }
    }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What exactly went wrong; never include a bound value or any other secret.
    public init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// Creates an error (the labelled spelling of ``init(_:_:)``).
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What exactly went wrong; never include a bound value or any other secret.
    public init(code: Code, reason: String = "") {
        self.init(code, reason)
    }

    /// `StoreError.code: message`, or only the code when there is no message.
    public var description: String {
        message.isEmpty ? "StoreError.\(code)" : "StoreError.\(code): \(message)"
    }

    /// Compares the codes only (STYLE §3).
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: Whether both have the same ``code``.
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code only, to agree with ``==(_:_:)``.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// A ``Code/constraint`` error.
    ///
    /// - Parameter reason: Which constraint refused the change.
    /// - Returns: The error.
    public static func constraint(_ reason: String = "") -> StoreError {
        StoreError(code: .constraint, reason: reason)
    }

    /// A ``Code/busy`` error.
    ///
    /// - Parameter reason: What was waiting, and for how long.
    /// - Returns: The error.
    public static func busy(_ reason: String = "") -> StoreError {
        StoreError(code: .busy, reason: reason)
    }

    /// A ``Code/corrupt`` error.
    ///
    /// - Parameter reason: What the database reported.
    /// - Returns: The error.
    public static func corrupt(_ reason: String = "") -> StoreError {
        StoreError(code: .corrupt, reason: reason)
    }

    /// An ``Code/io`` error.
    ///
    /// - Parameter reason: Which operation failed, and the operating system's reason.
    /// - Returns: The error.
    public static func io(_ reason: String = "") -> StoreError {
        StoreError(code: .io, reason: reason)
    }

    /// An ``Code/unavailable`` error.
    ///
    /// - Parameter reason: What could not be reached, and why.
    /// - Returns: The error.
    public static func unavailable(_ reason: String = "") -> StoreError {
        StoreError(code: .unavailable, reason: reason)
    }

    /// A ``Code/schema`` error.
    ///
    /// - Parameter reason: What does not fit.
    /// - Returns: The error.
    public static func schema(_ reason: String = "") -> StoreError {
        StoreError(code: .schema, reason: reason)
    }

    /// A ``Code/closed`` error.
    ///
    /// - Parameter reason: What was asked of the closed database.
    /// - Returns: The error.
    public static func closed(_ reason: String = "") -> StoreError {
        StoreError(code: .closed, reason: reason)
    }

    /// A ``Code/misuse`` error.
    ///
    /// - Parameter reason: What was wrong with the call.
    /// - Returns: The error.
    public static func misuse(_ reason: String = "") -> StoreError {
        StoreError(code: .misuse, reason: reason)
    }

    /// A ``Code/notFound`` error.
    ///
    /// - Parameter reason: Which row was missing, named by kind, not by a secret key.
    /// - Returns: The error.
    public static func notFound(_ reason: String = "") -> StoreError {
        StoreError(code: .notFound, reason: reason)
    }

    /// A ``Code/typeMismatch`` error.
    ///
    /// - Parameter reason: Which column, what was expected and what was found.
    /// - Returns: The error.
    public static func typeMismatch(_ reason: String = "") -> StoreError {
        StoreError(code: .typeMismatch, reason: reason)
    }

    /// A ``Code/library`` error.
    ///
    /// - Parameter reason: The failing call and the library's own reason.
    /// - Returns: The error.
    public static func library(_ reason: String = "") -> StoreError {
        StoreError(code: .library, reason: reason)
    }
}
