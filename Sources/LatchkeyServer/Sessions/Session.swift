package import FoundationEssentials

/// A signed-in session: one refresh-token family (docs/security.md S8, S9).
package struct Session: Sendable, Hashable {
    package var id: String
    package var userID: String
    /// Authentication methods (RFC 8176): `apple`, `pwd`, `hwk`, `otp`, `rc`, `mfa`.
    package var amr: [String]
    package var createdAt: Date
    package var lastUsedAt: Date
    package var idleExpiresAt: Date
    package var absoluteExpiresAt: Date
    package var secondFactorAt: Date?
    package var revokedAt: Date?
    package var revokedReason: String?
    package var userAgent: String?
    package var ip: String?

    /// When it ends if unused: the earlier of the idle and absolute limits.
    package var expiresAt: Date { min(idleExpiresAt, absoluteExpiresAt) }

    /// Whether it can still be used at `now`.
    package func isLive(at now: Date) -> Bool {
        revokedAt == nil && now < expiresAt
    }
}
