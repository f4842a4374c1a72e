public import LatchkeyJSON

/// One session as `GET /v1/sessions` lists it (docs/reference.md, "Sessions").
public struct WireSessionInfo: WireCodable, Hashable {
    public var id: String
    public var createdAt: WireTimestamp
    public var lastUsedAt: WireTimestamp
    /// When it ends if unused: the earlier of its idle and absolute limits.
    public var expiresAt: WireTimestamp
    /// Authentication methods (RFC 8176): `apple`, `pwd`, `hwk`, `otp`, `rc`, `mfa`.
    public var amr: [String]
    /// The `User-Agent` of the request that created it, at most 256 characters.
    public var userAgent: String?
    public var ip: String?
    /// Whether it is the session of the access token that asked.
    public var current: Bool

    public init(
        id: String, createdAt: WireTimestamp, lastUsedAt: WireTimestamp, expiresAt: WireTimestamp, amr: [String], userAgent: String?,
        ip: String?, current: Bool
    ) {
        self.id = id
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.amr = amr
        self.userAgent = userAgent
        self.ip = ip
        self.current = current
    }

    public var json: JSONValue {
        [
            "id": .string(id), "created_at": .string(createdAt.rfc3339), "last_used_at": .string(lastUsedAt.rfc3339),
            "expires_at": .string(expiresAt.rfc3339), "amr": .array(amr.map(JSONValue.string)), "user_agent": .optional(userAgent),
            "ip": .optional(ip), "current": .bool(current),
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            id: try object.string("id"), createdAt: try object.timestamp("created_at"), lastUsedAt: try object.timestamp("last_used_at"),
            expiresAt: try object.timestamp("expires_at"), amr: try object.optionalStrings("amr") ?? [],
            userAgent: try object.optionalString("user_agent"), ip: try object.optionalString("ip"),
            current: try object.optionalBool("current") ?? false)
    }
}

/// The body of `GET /v1/sessions`: the caller's live sessions, newest first.
public struct WireSessionList: WireCodable, Hashable {
    public var sessions: [WireSessionInfo]

    public init(sessions: [WireSessionInfo]) {
        self.sessions = sessions
    }

    public var json: JSONValue { ["sessions": .array(sessions.map(\.json))] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(sessions: try WireObject(json).models("sessions"))
    }
}

/// The body of `POST /v1/token` (RFC 6749 §6), here in its JSON form; OAuth clients may send the
/// same members as a form.
public struct WireRefreshRequest: WireCodable, Hashable {
    /// `refresh_token`, the one grant this endpoint takes.
    public static let refreshTokenGrant = "refresh_token"

    /// The grant; anything but ``refreshTokenGrant`` is answered `unsupported_grant_type`.
    public var grantType: String
    /// The refresh token to rotate; the server answers `invalid_request` without one.
    public var refreshToken: String?

    public init(grantType: String = WireRefreshRequest.refreshTokenGrant, refreshToken: String?) {
        self.grantType = grantType
        self.refreshToken = refreshToken
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["grant_type": .string(grantType)]
        if let refreshToken { members["refresh_token"] = .string(refreshToken) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(grantType: try object.string("grant_type"), refreshToken: try object.optionalString("refresh_token"))
    }
}

/// The optional body of `POST /v1/logout`.
public struct WireLogoutRequest: WireCodable, Hashable {
    /// Whether to end every session of the user rather than the caller's alone.
    public var all: Bool

    public init(all: Bool = false) {
        self.all = all
    }

    public var json: JSONValue { ["all": .bool(all)] }

    /// Reads the body; `all` may be absent, but when present (even `null`) it must be a boolean.
    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        switch object.members["all"] {
        case nil: self.init()
        case .bool(let all)?: self.init(all: all)
        default: throw WireDecodingError(code: .mistyped, path: "all", expectation: "must be true or false")
        }
    }
}

/// The body of `POST /v1/revoke` (RFC 7009 §2.1), here in its JSON form; OAuth clients may send
/// the same members as a form.
public struct WireRevokeRequest: WireCodable, Hashable {
    /// The refresh token whose session ends; the answer is 200 whatever it is.
    public var token: String?
    /// `refresh_token`, when the client says; the server needs no hint.
    public var tokenTypeHint: String?

    public init(token: String?, tokenTypeHint: String? = nil) {
        self.token = token
        self.tokenTypeHint = tokenTypeHint
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let token { members["token"] = .string(token) }
        if let tokenTypeHint { members["token_type_hint"] = .string(tokenTypeHint) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(token: try object.optionalString("token"), tokenTypeHint: try object.optionalString("token_type_hint"))
    }
}
