import FoundationEssentials
import LatchkeyStore

/// The `oauth_client_assertions` table: the `jti` of each `private_key_jwt` assertion until it
/// expires, so that one authenticates once.
struct ClientAssertionRepository: Sendable {
    /// Records an assertion's `jti`; the primary key decides between concurrent uses.
    ///
    /// - Returns: `false` when this client's `jti` was seen before (a replay).
    func remember(clientID: String, jti: String, expiresAt: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "INSERT INTO oauth_client_assertions (client_id, jti, expires_at) VALUES (?, ?, ?) ON CONFLICT (client_id, jti) DO NOTHING",
            [.text(clientID), .text(jti), .time(expiresAt)]) == 1
    }
}
