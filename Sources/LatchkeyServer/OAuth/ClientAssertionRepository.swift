import FoundationEssentials
import LatchkeyStore

/// The `oauth_client_assertions` table: the `jti` of each `private_key_jwt` assertion for as
/// long as the assertion could be accepted, so that one authenticates once. Housekeeping deletes
/// a row once its `expires_at` has passed.
struct ClientAssertionRepository: Sendable {
    /// Records an assertion's `jti`; the primary key decides between concurrent uses.
    ///
    /// - Parameter until: Stored as `expires_at`: the assertion's `exp` plus the leeway the
    ///   verification allows (``ClientAssertion/Checked/rememberUntil``), not its bare `exp`.
    /// - Returns: `false` when this client's `jti` was seen before (a replay).
    func remember(clientID: String, jti: String, until: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "INSERT INTO oauth_client_assertions (client_id, jti, expires_at) VALUES (?, ?, ?) ON CONFLICT (client_id, jti) DO NOTHING",
            [.text(clientID), .text(jti), .time(until)]) == 1
    }
}
