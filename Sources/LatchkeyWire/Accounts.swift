public import LatchkeyJSON

/// One way a user signs in, as `GET /v1/me` lists it: `{"provider": "apple", "email", "created_at"}`,
/// or for a password account `{"provider": "password", "email", "username", "created_at"}`.
public struct WireIdentity: WireCodable, Hashable {
    /// `apple` or `password`; a string, so a provider added later arrives intact.
    public var provider: String
    /// The email the provider gave, or `nil`.
    public var email: String?
    /// The normalised username; only for the `password` identity.
    public var username: String?
    public var createdAt: WireTimestamp

    public init(provider: String, email: String?, username: String? = nil, createdAt: WireTimestamp) {
        self.provider = provider
        self.email = email
        self.username = username
        self.createdAt = createdAt
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "provider": .string(provider), "email": .optional(email), "created_at": .string(createdAt.rfc3339),
        ]
        if let username { members["username"] = .string(username) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            provider: try object.string("provider"), email: try object.optionalString("email"),
            username: try object.optionalString("username"), createdAt: try object.timestamp("created_at"))
    }
}

/// The body of `GET /v1/me`: the user, the password username (`null` without one), the sign-in
/// identities and the second factors (as in `mfa_required`).
public struct WireAccount: WireCodable, Hashable {
    public var user: WireUser
    /// The normalised username of a password account; `nil` (`null` on the wire) otherwise.
    public var username: String?
    public var identities: [WireIdentity]
    public var factors: [WireFactor]

    public init(user: WireUser, username: String?, identities: [WireIdentity], factors: [WireFactor]) {
        self.user = user
        self.username = username
        self.identities = identities
        self.factors = factors
    }

    public var json: JSONValue {
        [
            "user": user.json, "username": .optional(username), "identities": .array(identities.map(\.json)),
            "factors": .array(factors.map(\.json)),
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            user: try object.model("user"), username: try object.optionalString("username"),
            identities: try object.models("identities"), factors: try object.models("factors"))
    }
}

/// What `PATCH /v1/me` does with one name: an absent member keeps it, `null` clears it, a string
/// replaces it (the server trims it, and an empty string clears it).
public enum WireNameUpdate: Sendable, Hashable {
    case keep
    case clear
    case set(String)
}

/// The body of `PATCH /v1/me`: `{given_name?, family_name?}`.
///
/// Reading it is tolerant like every wire model; the server refuses members outside
/// ``members`` itself, so a typo (`givenName`) is an error rather than a silent no-op.
public struct WireAccountUpdateRequest: WireCodable, Hashable {
    public var givenName: WireNameUpdate
    public var familyName: WireNameUpdate

    /// The members the body may have.
    public static let members: Set<String> = ["given_name", "family_name"]

    public init(givenName: WireNameUpdate = .keep, familyName: WireNameUpdate = .keep) {
        self.givenName = givenName
        self.familyName = familyName
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        members["given_name"] = Self.encode(givenName)
        members["family_name"] = Self.encode(familyName)
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(givenName: try Self.decode(object, "given_name"), familyName: try Self.decode(object, "family_name"))
    }

    private static func encode(_ update: WireNameUpdate) -> JSONValue? {
        switch update {
        case .keep: nil
        case .clear: .null
        case .set(let name): .string(name)
        }
    }

    private static func decode(_ object: WireObject, _ member: String) throws(WireDecodingError) -> WireNameUpdate {
        switch object.members[member] {
        case nil: return .keep
        case .null?: return .clear
        case .string(let name)?: return .set(name)
        default: throw WireDecodingError(code: .mistyped, path: member, expectation: "must be a string or null")
        }
    }
}

/// The answer of `PATCH /v1/me`: `{"user": {...}}`.
public struct WireAccountUpdateResponse: WireCodable, Hashable {
    public var user: WireUser

    public init(user: WireUser) {
        self.user = user
    }

    public var json: JSONValue { ["user": user.json] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(user: try WireObject(json).model("user"))
    }
}
