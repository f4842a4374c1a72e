import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

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

    /// The user object of the wire format.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id), "email_verified": .bool(emailVerified), "is_private_email": .bool(isPrivateEmail),
            "created_at": .string(RFC3339.string(createdAt)),
        ]
        members["email"] = email.map(JSONValue.string) ?? .null
        members["given_name"] = givenName.map(JSONValue.string) ?? .null
        members["family_name"] = familyName.map(JSONValue.string) ?? .null
        return .object(members)
    }
}

/// RFC 3339 UTC timestamps, as the wire format writes them: `2026-11-30T18:00:00Z`.
enum RFC3339 {
    static func string(_ date: Date) -> String {
        date.ISO8601Format()
    }
}
