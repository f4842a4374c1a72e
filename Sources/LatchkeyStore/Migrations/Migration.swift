/// One numbered step of the schema, applied once, in its own transaction.
///
/// Statements are written once in portable SQL, with type names taken from the
/// ``SQLDialect`` they are given, so every backend runs the same migration.
package struct Migration: Sendable {
    /// The position in the sequence; versions start at 1 and only grow.
    package var version: Int
    /// A short name for logs and `schema_migrations`, for example `initial schema`.
    package var name: String
    /// The statements, one per string, for a dialect.
    package var statements: @Sendable (SQLDialect) -> [String]

    /// Creates a migration.
    ///
    /// - Parameters:
    ///   - version: The position in the sequence, from 1.
    ///   - name: A short name.
    ///   - statements: The statements, one per string, for a dialect.
    package init(version: Int, name: String, statements: @escaping @Sendable (SQLDialect) -> [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}
