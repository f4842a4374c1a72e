public import LatchkeyJSON

/// What `POST /oauth/token` answers (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
public struct WireOAuthTokenResponse: WireCodable, Hashable {
    /// An `at+jwt` access token for `Authorization: Bearer`.
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// The opaque refresh token, when the grant has one; rotated on every use.
    public var refreshToken: String?
    /// The ID token, when the scope holds `openid` (never for `client_credentials`).
    public var idToken: String?
    /// The granted scopes, space-separated.
    public var scope: String

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int, refreshToken: String?, idToken: String?, scope: String) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string(tokenType), "expires_in": .integer(expiresIn),
            "scope": .string(scope),
        ]
        if let refreshToken { members["refresh_token"] = .string(refreshToken) }
        if let idToken { members["id_token"] = .string(idToken) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            accessToken: try object.string("access_token"), tokenType: try object.string("token_type"),
            expiresIn: try object.int("expires_in"), refreshToken: try object.optionalString("refresh_token"),
            idToken: try object.optionalString("id_token"), scope: try object.optionalString("scope") ?? "")
    }
}

/// An OAuth error body (RFC 6749 §5.2): what `/oauth/token`, `/oauth/revoke` and
/// `/oauth/introspect` answer when they refuse.
public struct WireOAuthError: WireCodable, Hashable {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope`, or `temporarily_unavailable`.
    public var error: String
    /// A sentence for the developer; never a secret.
    public var errorDescription: String?

    public init(error: String, errorDescription: String?) {
        self.error = error
        self.errorDescription = errorDescription
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["error": .string(error)]
        if let errorDescription { members["error_description"] = .string(errorDescription) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(error: try object.string("error"), errorDescription: try object.optionalString("error_description"))
    }
}
