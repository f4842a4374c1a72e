import FoundationEssentials
import LatchkeyStore

/// Deleting rows that have served their purpose, across the tables that keep them for a while:
/// `apple_identity_tokens` and `apple_notifications` (replay records), `ended_refresh_tokens`
/// (tombstones), `challenges`, `mfa_tokens`, `rate_limits`, the OAuth provider's codes,
/// client-assertion `jti`s and browser sessions, email flows, passkey ceremonies, upstream sign-in states, device
/// authorizations, DPoP proofs, App Attest challenges and admin console sessions.
struct RetentionRepository: Sendable {
    /// The tables whose rows live until `expires_at`.
    static let expiringTables = [
        "apple_identity_tokens", "apple_notifications", "ended_refresh_tokens", "challenges", "mfa_tokens", "oauth_codes",
        "oauth_client_assertions", "browser_sessions", "passkey_ceremonies", "provider_states", "device_authorizations",
        "dpop_proofs",
        "app_attest_challenges", "console_sessions",
    ]

    /// Deletes the rows of ``expiringTables`` whose `expires_at` is before `now`: remembered
    /// Apple identity tokens and notifications past their expiry, refresh-token tombstones of
    /// sessions that would have ended, spent or expired challenges and MFA tokens, authorization
    /// codes past their 60 s (S22: an expired code cannot be exchanged, so its replay has
    /// nothing left to revoke), assertion `jti`s that no longer verify (their `expires_at` is the
    /// assertion's `exp` plus the leeway), browser sessions over, passkey ceremonies and upstream
    /// sign-in states no longer answerable, device authorizations past their `device.code_ttl`
    /// (a device code can be redeemed only before it expires, so the row has nothing left to guard),
    /// DPoP proofs whose `iat` is out of the window, App Attest challenges no longer answerable, and
    /// admin console sessions over.
    ///
    /// - Returns: How many rows went.
    @discardableResult
    func deleteExpired(now: Date, on connection: any SQLConnection) throws -> Int {
        var deleted = 0
        for table in Self.expiringTables {
            deleted += try connection.execute("DELETE FROM \(table) WHERE expires_at < ?", [.time(now)])
        }
        // Email flows stay a day past their expiry, so a late confirmation hears `expired`.
        deleted += try connection.execute("DELETE FROM email_flows WHERE expires_at < ?", [.time(now.addingTimeInterval(-86_400))])
        return deleted
    }

    /// Clears the successors that rotated refresh tokens kept for the reuse grace window (S8)
    /// once the window is over, so a sealed live token is stored no longer than it is needed.
    ///
    /// - Returns: How many were cleared.
    @discardableResult
    func dropExpiredSuccessors(now: Date, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            "UPDATE refresh_tokens SET successor_sealed = NULL, successor_expires_at = NULL WHERE successor_expires_at < ?",
            [.time(now)])
    }

    /// Deletes the login counters whose window started at or before `windowStartedBefore` and
    /// that block nothing at `now`: such a row means the same as no row.
    ///
    /// - Returns: How many rows went.
    @discardableResult
    func deleteFinishedRateLimits(windowStartedBefore: Date, now: Date, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            "DELETE FROM rate_limits WHERE window_start <= ? AND (blocked_until IS NULL OR blocked_until <= ?)",
            [.time(windowStartedBefore), .time(now)])
    }
}
