import FoundationEssentials

/// A user as docs/reference.md's token response and `/v1/me` show it.
public struct User: Sendable, Hashable {
    public var id: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var givenName: String?
    public var familyName: String?
    public var createdAt: Date

    /// The longest given or family name a body may carry, in UTF-8 bytes.
    static let maxNameLength = 256
}

/// RFC 3339 UTC timestamps, as the wire format writes them: `2026-11-30T18:00:00Z`.
enum RFC3339 {
    static func string(_ date: Date) -> String {
        date.ISO8601Format()
    }
}
