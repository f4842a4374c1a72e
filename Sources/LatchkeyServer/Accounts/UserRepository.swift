package import FoundationEssentials
package import LatchkeyStore

/// The `users` table.
package struct UserRepository: Sendable {
    let database: any SQLDatabase

    package init(database: any SQLDatabase) {
        self.database = database
    }

    /// Inserts a new user inside the caller's transaction.
    package func create(
        email: String?, emailVerified: Bool = false, isPrivateEmail: Bool = false, givenName: String? = nil,
        familyName: String? = nil, now: Date, on connection: any SQLConnection
    ) throws -> User {
        let user = User(
            id: Identifiers.make("usr"), email: email, emailVerified: emailVerified, isPrivateEmail: isPrivateEmail,
            givenName: givenName, familyName: familyName, createdAt: now)
        try connection.execute(
            """
            INSERT INTO users (id, email, email_verified, is_private_email, given_name, family_name, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(user.id), SQLValue(email), .bool(emailVerified), .bool(isPrivateEmail), SQLValue(givenName),
                SQLValue(familyName), .time(now), .time(now),
            ])
        return user
    }

    /// Writes a user's profile fields inside the caller's transaction.
    package func update(_ user: User, now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            UPDATE users SET email = ?, email_verified = ?, is_private_email = ?, given_name = ?, family_name = ?, updated_at = ?
            WHERE id = ?
            """,
            [
                SQLValue(user.email), .bool(user.emailVerified), .bool(user.isPrivateEmail), SQLValue(user.givenName),
                SQLValue(user.familyName), .time(now), .text(user.id),
            ])
    }

    /// Compare-and-lock: takes the user row's write lock for the caller's transaction by
    /// touching its `updated_at`, so two deletions of one user run one after the other.
    ///
    /// - Returns: Whether the user exists (false: never did, or another transaction deleted it).
    func lock(_ id: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("UPDATE users SET updated_at = ? WHERE id = ?", [.time(now), .text(id)]) == 1
    }

    /// Compare-and-set: marks the user disabled at `now` unless they already are.
    ///
    /// - Returns: Whether this call disabled them (false: no such user, or disabled already).
    func disable(_ id: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE users SET disabled_at = ?, updated_at = ? WHERE id = ? AND disabled_at IS NULL", [.time(now), .time(now), .text(id)]) == 1
    }

    /// Compare-and-set: clears the user's `disabled_at` if it is set.
    ///
    /// - Returns: Whether this call enabled them (false: no such user, or not disabled).
    func enable(_ id: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE users SET disabled_at = NULL, updated_at = ? WHERE id = ? AND disabled_at IS NOT NULL", [.time(now), .text(id)]) == 1
    }

    /// When the user was disabled, read inside the caller's transaction; nil when they are not
    /// (or there is no such user).
    func disabledAt(_ id: String, on connection: any SQLConnection) throws -> Date? {
        try connection.queryOne("SELECT disabled_at FROM users WHERE id = ?", [.text(id)])?.optionalDate("disabled_at")
    }

    /// The ids of the users whose email is `email`, oldest first (several accounts may share one).
    func ids(email: String, on connection: any SQLConnection) throws -> [String] {
        try connection.query("SELECT id FROM users WHERE email = ? ORDER BY created_at, id", [.text(email)]).map { try $0.string("id") }
    }

    /// Deletes the user and, by cascade, everything that hangs off it (identities, credentials,
    /// factors, sessions).
    ///
    /// - Returns: Whether this call deleted it (false: there was no such user).
    @discardableResult
    func delete(_ id: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM users WHERE id = ?", [.text(id)]) == 1
    }

    /// The user with this id, read inside a transaction.
    /// The oldest user with this email address (several accounts may share one).
    func oldest(email: String, on connection: any SQLConnection) throws -> User? {
        try connection.queryOne("SELECT * FROM users WHERE email = ? ORDER BY created_at, id LIMIT 1", [.text(email)]).map { try Self.user($0) }
    }

    package func find(_ id: String, on connection: any SQLConnection) throws -> User? {
        try connection.queryOne("SELECT * FROM users WHERE id = ?", [.text(id)]).map { try Self.user($0) }
    }

    /// The user with this id.
    package func find(_ id: String) async throws -> User? {
        try await database.read { try self.find(id, on: $0) }
    }

    /// Users, newest first.
    package func list(limit: Int = 100) async throws -> [User] {
        try await database.read { connection in
            try connection.query(
                "SELECT * FROM users ORDER BY created_at DESC, id LIMIT ?", [.integer(Int64(limit))]
            ).map { try Self.user($0) }
        }
    }

    /// A `users` row, or a row of a join whose `users` columns are named `prefix` + column.
    static func user(_ row: SQLRow, prefix: String = "") throws -> User {
        User(
            id: try row.string(prefix + "id"), email: row.optionalString(prefix + "email"),
            emailVerified: try row.bool(prefix + "email_verified"), isPrivateEmail: try row.bool(prefix + "is_private_email"),
            givenName: row.optionalString(prefix + "given_name"), familyName: row.optionalString(prefix + "family_name"),
            createdAt: try row.date(prefix + "created_at"))
    }

    /// The `users` columns as ``user(_:prefix:)`` reads them with the prefix `account_`, for a
    /// join's select list.
    static let accountColumns = ["id", "email", "email_verified", "is_private_email", "given_name", "family_name", "created_at"]
        .map { "users.\($0) AS account_\($0)" }.joined(separator: ", ")
}
