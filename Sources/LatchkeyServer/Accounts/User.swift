package import FoundationEssentials

/// A user as docs/reference.md's token response and `/v1/me` show it.
package struct User: Sendable, Hashable {
    package var id: String
    package var email: String?
    package var emailVerified: Bool
    package var isPrivateEmail: Bool
    package var givenName: String?
    package var familyName: String?
    package var createdAt: Date

    /// The longest given or family name a body may carry, in UTF-8 bytes.
    static let maxNameLength = 256
}

/// RFC 3339 UTC timestamps, as the wire format writes them: `2026-11-30T18:00:00Z`.
enum RFC3339 {
    static func string(_ date: Date) -> String {
        date.ISO8601Format()
    }
}
