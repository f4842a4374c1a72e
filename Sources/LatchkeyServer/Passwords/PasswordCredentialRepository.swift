import FoundationEssentials
import LatchkeyStore

/// A user's password credential: the normalised username and the Argon2id PHC string.
struct PasswordCredential: Sendable, Hashable {
    var userID: String
    var username: String
    var hash: String
    var createdAt: Date
}

/// The `password_credentials` table: usernames and Argon2id hashes (S11).
///
/// A username is unique by a UNIQUE constraint: ``insert(userID:username:hash:now:on:)`` and
/// ``replace(userID:username:hash:now:on:)`` throw the store's constraint error on a clash, and
/// the caller answers it as a taken username.
struct PasswordCredentialRepository: Sendable {
    /// Stores a new credential.
    ///
    /// - Throws: ``LatchkeyStore/StoreError`` with code `constraint` when the username is taken
    ///   or the user already has one.
    func insert(userID: String, username: String, hash: String, now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            "INSERT INTO password_credentials (user_id, username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            [.text(userID), .text(username), .text(hash), .time(now), .time(now)])
    }

    /// The credential with this normalised username.
    func find(username: String, on connection: any SQLConnection) throws -> PasswordCredential? {
        try connection.queryOne("SELECT * FROM password_credentials WHERE username = ?", [.text(username)]).map(Self.credential)
    }

    /// The credential of this user.
    func find(userID: String, on connection: any SQLConnection) throws -> PasswordCredential? {
        try connection.queryOne("SELECT * FROM password_credentials WHERE user_id = ?", [.text(userID)]).map(Self.credential)
    }

    /// Whether some account has this normalised username.
    func usernameExists(_ username: String, on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne("SELECT 1 AS one FROM password_credentials WHERE username = ?", [.text(username)]) != nil
    }

    /// Compare-and-set: replaces the user's hash only if it is still `expected`, the one the
    /// caller verified.
    ///
    /// - Returns: Whether this call replaced it (false: the password changed in between, or the
    ///   credential is gone).
    func replaceHash(userID: String, expected: String, with hash: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE password_credentials SET password_hash = ?, updated_at = ? WHERE user_id = ? AND password_hash = ?",
            [.text(hash), .time(now), .text(userID), .text(expected)]) == 1
    }

    /// Compare-and-lock: whether the user's hash is still `expected`, holding the row's write
    /// lock until the caller's transaction ends, so a concurrent change waits for it or wins
    /// before it (never in between). Changes nothing.
    ///
    /// - Returns: Whether the hash is still the one the caller verified.
    func holds(userID: String, hash: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE password_credentials SET password_hash = password_hash WHERE user_id = ? AND password_hash = ?",
            [.text(userID), .text(hash)]) == 1
    }

    /// An operator's reset: sets the username and hash of the user's existing credential,
    /// whatever they were.
    ///
    /// - Returns: Whether the user had a credential to replace.
    /// - Throws: ``LatchkeyStore/StoreError`` with code `constraint` when the username is taken.
    func replace(userID: String, username: String, hash: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE password_credentials SET username = ?, password_hash = ?, updated_at = ? WHERE user_id = ?",
            [.text(username), .text(hash), .time(now), .text(userID)]) == 1
    }

    private static func credential(_ row: SQLRow) throws -> PasswordCredential {
        PasswordCredential(
            userID: try row.string("user_id"), username: try row.string("username"), hash: try row.string("password_hash"),
            createdAt: try row.date("created_at"))
    }
}
