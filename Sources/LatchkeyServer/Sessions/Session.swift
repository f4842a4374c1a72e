import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

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

    static func session(_ row: SQLRow) throws -> Session {
        let amr = (try? JSONValue(parsing: Array(try row.string("amr").utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        return Session(
            id: try row.string("id"), userID: try row.string("user_id"), amr: amr, createdAt: try row.date("created_at"),
            lastUsedAt: try row.date("last_used_at"), idleExpiresAt: try row.date("idle_expires_at"),
            absoluteExpiresAt: try row.date("absolute_expires_at"), secondFactorAt: row.optionalDate("second_factor_at"),
            revokedAt: row.optionalDate("revoked_at"), revokedReason: row.optionalString("revoked_reason"),
            userAgent: row.optionalString("user_agent"), ip: row.optionalString("ip"))
    }
}
