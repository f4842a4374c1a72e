import FoundationEssentials

/// An admin's sign-in to the console (`/admin`): what its cookie stands for. It lasts
/// ``ConsoleService/lifetime`` at most, and only while the API session of its code exchange
/// stays live; the role is read again on every request.
struct ConsoleSession: Sendable, Hashable {
    /// The row's id (`acs_…`): the binding of the console forms' CSRF tokens.
    var id: String
    var userID: String
    /// The API session the console's code exchange made; ending it ends the console session.
    var sessionID: String
    /// How the admin signed in (RFC 8176).
    var amr: [String]
    /// When the admin last proved who they are (the ID token's `auth_time`).
    var authTime: Date
    var createdAt: Date
    var expiresAt: Date

    /// Whether the sign-in is recent enough for a destructive action (``ConsoleService/freshness``).
    func isFresh(at now: Date) -> Bool {
        now.timeIntervalSince(authTime) <= ConsoleService.freshness
    }
}
