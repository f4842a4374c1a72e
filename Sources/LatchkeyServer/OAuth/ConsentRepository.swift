import FoundationEssentials
import LatchkeyStore

/// The `oauth_consents` table: what a user let a third-party client have. The scopes are kept
/// space-separated and sorted, one row per user and client.
struct ConsentRepository: Sendable {
    /// One remembered consent.
    struct Consent: Sendable, Hashable {
        var userID: String
        var clientID: String
        var scopes: Set<String>
        /// When the user first consented to the client.
        var grantedAt: Date
        /// When the consent last grew.
        var updatedAt: Date
    }

    /// The scopes the user consented to for the client; `nil` when they never did (or withdrew).
    func scopes(userID: String, clientID: String, on connection: any SQLConnection) throws -> Set<String>? {
        try connection.queryOne(
            "SELECT scope FROM oauth_consents WHERE user_id = ? AND client_id = ?", [.text(userID), .text(clientID)]
        ).map { Self.scopes(try $0.string("scope")) }
    }

    /// Remembers the user's consent to `scopes` for the client: a new row, or the union with
    /// what the row held (its `granted_at` kept). The stored scopes are read in the caller's
    /// transaction, so a concurrent consent either commits first and is part of the union, or
    /// (PostgreSQL's serializable write) makes this transaction run again.
    func remember(userID: String, clientID: String, scopes: Set<String>, at: Date, on connection: any SQLConnection) throws {
        let union = scopes.union(try self.scopes(userID: userID, clientID: clientID, on: connection) ?? [])
        try connection.execute(
            """
            INSERT INTO oauth_consents (user_id, client_id, scope, granted_at, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at
            """,
            [.text(userID), .text(clientID), .text(Self.text(union)), .time(at), .time(at)])
    }

    /// The user's consents, oldest first.
    func list(userID: String, on connection: any SQLConnection) throws -> [Consent] {
        try connection.query(
            "SELECT * FROM oauth_consents WHERE user_id = ? ORDER BY granted_at, client_id", [.text(userID)]
        ).map { row in
            Consent(
                userID: try row.string("user_id"), clientID: try row.string("client_id"), scopes: Self.scopes(try row.string("scope")),
                grantedAt: try row.date("granted_at"), updatedAt: try row.date("updated_at"))
        }
    }

    /// Withdraws the user's consent to the client.
    ///
    /// - Parameter at: When; the table keeps no trace of a withdrawn consent, so only the
    ///   caller's audit entry records it.
    /// - Returns: Whether there was one to withdraw.
    func delete(userID: String, clientID: String, at: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM oauth_consents WHERE user_id = ? AND client_id = ?", [.text(userID), .text(clientID)]) == 1
    }

    /// Scopes as the column stores them: sorted, space-separated.
    static func text(_ scopes: Set<String>) -> String { scopes.sorted().joined(separator: " ") }

    /// The scopes of a `scope` column.
    static func scopes(_ text: String) -> Set<String> { Set(text.split(separator: " ").map(String.init)) }
}
