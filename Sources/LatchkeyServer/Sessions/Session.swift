import FoundationEssentials

/// A signed-in session: one refresh-token family (docs/security.md S8, S9).
public struct Session: Sendable, Hashable {
    public var id: String
    public var userID: String
    /// Authentication methods (RFC 8176): `apple`, `pwd`, `hwk`, `otp`, `rc`, `mfa`.
    public var amr: [String]
    public var createdAt: Date
    public var lastUsedAt: Date
    public var idleExpiresAt: Date
    public var absoluteExpiresAt: Date
    public var secondFactorAt: Date?
    public var revokedAt: Date?
    public var revokedReason: String?
    public var userAgent: String?
    public var ip: String?

    /// When it ends if unused: the earlier of the idle and absolute limits.
    public var expiresAt: Date { min(idleExpiresAt, absoluteExpiresAt) }

    /// Whether it can still be used at `now`.
    public func isLive(at now: Date) -> Bool {
        revokedAt == nil && now < expiresAt
    }
}
