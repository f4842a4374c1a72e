import FoundationEssentials
import LatchkeyStore

/// The `apple_identity_tokens` and `apple_notifications` tables: what Apple signed that was
/// already accepted, kept until it expires, so each identity token signs in once and each
/// notification is applied once (docs/reference.md "Each token once", "Server-to-server notifications").
///
/// "First time" is decided by the insert itself (`ON CONFLICT DO NOTHING` and its changed-row
/// count), never by a read before it, so it holds with several server processes.
struct AppleReplayRepository: Sendable {
    /// Remembers an identity token by its replay key, inside the sign-in transaction.
    ///
    /// - Returns: Whether this is its first use (false: a replay).
    func rememberIdentityToken(key: [UInt8], until expiresAt: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "INSERT INTO apple_identity_tokens (token_key, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING", [.blob(key), .time(expiresAt)]) == 1
    }

    /// Whether an identity token with this replay key was already accepted. Only a shortcut that
    /// keeps a replay from spending an authorization code at Apple; the refusal that counts is
    /// ``rememberIdentityToken(key:until:on:)``.
    func isIdentityTokenRemembered(key: [UInt8], on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne("SELECT 1 AS one FROM apple_identity_tokens WHERE token_key = ?", [.blob(key)]) != nil
    }

    /// Remembers a notification by its `jti`, inside the transaction that applies it.
    ///
    /// - Returns: Whether this is its first delivery (false: already applied).
    func rememberNotification(jti: String, receivedAt: Date, until expiresAt: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "INSERT INTO apple_notifications (jti, received_at, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [.text(jti), .time(receivedAt), .time(expiresAt)]) == 1
    }
}
