import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// A user as docs/reference.md's token response and `/v1/me` show it.
public struct User: Sendable, Hashable {
    public var id: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var givenName: String?
    public var familyName: String?
    public var createdAt: Date

    /// The longest given or family name a body may carry, in UTF-8 bytes.
    static let maxNameLength = 256

    /// The user object of the wire format.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id), "email_verified": .bool(emailVerified), "is_private_email": .bool(isPrivateEmail),
            "created_at": .string(RFC3339.string(createdAt)),
        ]
        members["email"] = email.map(JSONValue.string) ?? .null
        members["given_name"] = givenName.map(JSONValue.string) ?? .null
        members["family_name"] = familyName.map(JSONValue.string) ?? .null
        return .object(members)
    }
}

/// The `users` table.
public struct UserStore: Sendable {
    let database: any SQLDatabase

    public init(database: any SQLDatabase) {
        self.database = database
    }

    /// Inserts a new user inside the caller's transaction.
    public func create(
        email: String?, emailVerified: Bool = false, isPrivateEmail: Bool = false, givenName: String? = nil,
        familyName: String? = nil, now: Date, on connection: any SQLConnection
    ) throws -> User {
        let user = User(
            id: Identifiers.make("usr"), email: email, emailVerified: emailVerified, isPrivateEmail: isPrivateEmail,
            givenName: givenName, familyName: familyName, createdAt: now)
        try connection.execute(
            database.dialect.sql(
                """
                INSERT INTO users (id, email, email_verified, is_private_email, given_name, family_name, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """),
            [
                .text(user.id), SQLValue(email), .bool(emailVerified), .bool(isPrivateEmail), SQLValue(givenName),
                SQLValue(familyName), .time(now), .time(now),
            ])
        return user
    }

    /// Writes a user's profile fields inside the caller's transaction.
    public func update(_ user: User, now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            database.dialect.sql(
                """
                UPDATE users SET email = ?, email_verified = ?, is_private_email = ?, given_name = ?, family_name = ?, updated_at = ?
                WHERE id = ?
                """),
            [
                SQLValue(user.email), .bool(user.emailVerified), .bool(user.isPrivateEmail), SQLValue(user.givenName),
                SQLValue(user.familyName), .time(now), .text(user.id),
            ])
    }

    /// The user with this id, read inside a transaction.
    public func find(_ id: String, on connection: any SQLConnection) throws -> User? {
        try connection.queryOne(database.dialect.sql("SELECT * FROM users WHERE id = ?"), [.text(id)]).map(Self.user)
    }

    /// The user with this id.
    public func find(_ id: String) async throws -> User? {
        try await database.read { try self.find(id, on: $0) }
    }

    /// Users, newest first.
    public func list(limit: Int = 100) async throws -> [User] {
        try await database.read { connection in
            try connection.query(
                self.database.dialect.sql("SELECT * FROM users ORDER BY created_at DESC, id LIMIT ?"), [.integer(Int64(limit))]
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

/// RFC 3339 UTC timestamps, as the wire format writes them: `2026-11-30T18:00:00Z`.
enum RFC3339 {
    static func string(_ date: Date) -> String {
        date.ISO8601Format()
    }
}
