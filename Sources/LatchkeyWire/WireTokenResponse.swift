public import LatchkeyJSON

/// What every sign-in, MFA completion, refresh and step-up answers (docs/reference.md, "The token
/// response").
public struct WireTokenResponse: WireCodable, Hashable {
    /// An `at+jwt` access token for `Authorization: Bearer`.
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// The opaque refresh token; rotated on every use.
    public var refreshToken: String
    /// The session the tokens belong to.
    public var sessionID: String
    /// Whether this call created the account.
    public var created: Bool
    /// The signed-in user.
    public var user: WireUser

    public init(
        accessToken: String, tokenType: String = "Bearer", expiresIn: Int, refreshToken: String, sessionID: String, created: Bool,
        user: WireUser
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.sessionID = sessionID
        self.created = created
        self.user = user
    }

    public var json: JSONValue {
        [
            "access_token": .string(accessToken), "token_type": .string(tokenType), "expires_in": .integer(expiresIn),
            "refresh_token": .string(refreshToken), "session_id": .string(sessionID), "created": .bool(created), "user": user.json,
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            accessToken: try object.string("access_token"), tokenType: try object.string("token_type"),
            expiresIn: try object.int("expires_in"), refreshToken: try object.string("refresh_token"),
            sessionID: try object.string("session_id"), created: try object.optionalBool("created") ?? false,
            user: try object.model("user"))
    }
}

/// A user as the token response and `GET /v1/me` show it.
public struct WireUser: WireCodable, Hashable {
    public var id: String
    /// `nil` when unknown; for Sign in with Apple perhaps a private relay address.
    public var email: String?
    public var emailVerified: Bool
    /// Whether ``email`` is an Apple private relay address.
    public var isPrivateEmail: Bool
    public var givenName: String?
    public var familyName: String?
    public var createdAt: WireTimestamp

    public init(
        id: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool, givenName: String?, familyName: String?,
        createdAt: WireTimestamp
    ) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.givenName = givenName
        self.familyName = familyName
        self.createdAt = createdAt
    }

    public var json: JSONValue {
        [
            "id": .string(id), "email": .optional(email), "email_verified": .bool(emailVerified),
            "is_private_email": .bool(isPrivateEmail), "given_name": .optional(givenName), "family_name": .optional(familyName),
            "created_at": .string(createdAt.rfc3339),
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            id: try object.string("id"), email: try object.optionalString("email"),
            emailVerified: try object.optionalBool("email_verified") ?? false,
            isPrivateEmail: try object.optionalBool("is_private_email") ?? false, givenName: try object.optionalString("given_name"),
            familyName: try object.optionalString("family_name"), createdAt: try object.timestamp("created_at"))
    }
}
