import FoundationEssentials
import LatchkeyBasics
import LatchkeyJSON

/// Who signed in at an upstream, as its checked answer says.
struct UpstreamProfile: Sendable, Hashable {
    /// What the identity is stored under beside the subject: the OpenID issuer, or GitHub's API URL.
    var issuer: String
    /// The stable id: the `sub` claim, or GitHub's numeric `id` (never the login, which can be renamed).
    var subject: String
    var email: String?
    /// Whether the upstream says the email is the user's: `email_verified` true, or GitHub's
    /// verified primary address.
    var emailVerified: Bool
    var givenName: String? = nil
    var familyName: String? = nil

    /// The longest email and name part kept.
    static let maxEmailBytes = 320
    static let maxNameLength = 100
    static let maxSubjectBytes = 255

    /// A name part as kept: trimmed, non-empty, not too long.
    static func name(_ value: JSONValue?) -> String? {
        guard let raw = value?.stringValue else { return nil }
        let text = String(raw.trimmingWhitespace())
        guard !text.isEmpty, text.count <= maxNameLength, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return text
    }

    /// An email as kept: one `@`, no spaces or controls, not too long.
    static func email(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, !text.isEmpty, text.utf8.count <= maxEmailBytes, text.filter({ $0 == "@" }).count == 1,
            !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else { return nil }
        return text
    }

    /// Takes the names an upstream gives: `given_name` and `family_name`, or else `name` split at
    /// its first space (GitHub, and providers that send only `name`). Names already taken stay.
    mutating func takeNames(given: JSONValue?, family: JSONValue?, full: JSONValue?) {
        guard givenName == nil, familyName == nil else { return }
        givenName = Self.name(given)
        familyName = Self.name(family)
        if givenName == nil, familyName == nil, let full = full?.stringValue {
            let parts = full.split(separator: " ", maxSplits: 1).map { JSONValue.string(String($0)) }
            givenName = Self.name(parts.first)
            familyName = Self.name(parts.dropFirst().first)
        }
    }

    /// Email flags arrive as JSON booleans, and from some providers as the strings "true" and "false".
    static func flag(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let flag)?: flag
        case .string("true")?: true
        default: false
        }
    }
}
