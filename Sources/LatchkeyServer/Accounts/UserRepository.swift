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

    /// Deletes the user and, by cascade, everything that hangs off it (identities, credentials,
    /// factors, sessions).
    ///
    /// - Returns: Whether this call deleted it (false: there was no such user).
    @discardableResult
    func delete(_ id: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM users WHERE id = ?", [.text(id)]) == 1
    }

    /// The user with this id, read inside a transaction.
    package func find(_ id: String, on connection: any SQLConnection) throws -> User? {
        try connection.queryOne("SELECT * FROM users WHERE id = ?", [.text(id)]).map(Self.user)
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
            ).map(Self.user)
        }
    }

    static func user(_ row: SQLRow) throws -> User {
        User(
            id: try row.string("id"), email: row.optionalString("email"), emailVerified: try row.bool("email_verified"),
            isPrivateEmail: try row.bool("is_private_email"), givenName: row.optionalString("given_name"),
            familyName: row.optionalString("family_name"), createdAt: try row.date("created_at"))
    }
}
