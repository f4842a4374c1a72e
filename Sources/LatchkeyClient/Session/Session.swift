public import Foundation
import LatchkeyWire

/// A signed-in session: the tokens and who they belong to.
///
/// The tokens are secrets: `description` never shows them.
public struct Session: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The `at+jwt` access token for `Authorization: Bearer`.
    public var accessToken: String
    /// The opaque refresh token; the server rotates it on every use.
    public var refreshToken: String
    /// When the access token expires, by this device's clock at the time it was issued.
    public var expiresAt: Date
    /// The server's id of the session (`sid` in the access token).
    public var sessionID: String
    /// The signed-in user.
    public var user: Account.User

    /// A session with these tokens.
    public init(accessToken: String, refreshToken: String, expiresAt: Date, sessionID: String, user: Account.User) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.sessionID = sessionID
        self.user = user
    }

    /// The session a token response describes, its expiry counted from `now`.
    init(_ response: WireTokenResponse, now: Date) {
        self.init(
            accessToken: response.accessToken, refreshToken: response.refreshToken,
            expiresAt: now.addingTimeInterval(TimeInterval(response.expiresIn)), sessionID: response.sessionID,
            user: Account.User(response.user))
    }

    /// Whether the access token still has at least `minTTL` to live at `now`.
    public func isFresh(at now: Date, minTTL: Duration) -> Bool {
        expiresAt.timeIntervalSince(now) >= minTTL.timeInterval
    }

    /// The session and user ids and the expiry, without the tokens.
    public var description: String { "Session(\(sessionID), user \(user.id), expires \(expiresAt))" }
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
