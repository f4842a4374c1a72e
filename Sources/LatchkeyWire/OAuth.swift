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

/// What `POST /oauth/device_authorization` answers (RFC 8628 §3.2): the codes of a device's
/// sign-in, and where the user types the short one.
public struct WireDeviceAuthorizationResponse: WireCodable, Hashable {
    /// The device's secret, for polling `/oauth/token`; never shown.
    public var deviceCode: String
    /// What the user types, `XXXX-XXXX` (twenty consonants, any case, the dash optional).
    public var userCode: String
    /// The page where the user types it: `{public_url}/device`.
    public var verificationURI: String
    /// The page with the code filled in, for a QR code; the user still confirms it there.
    public var verificationURIComplete: String?
    /// Seconds until both codes expire.
    public var expiresIn: Int
    /// Seconds to wait between polls; `slow_down` adds 5.
    public var interval: Int

    public init(
        deviceCode: String, userCode: String, verificationURI: String, verificationURIComplete: String?, expiresIn: Int, interval: Int
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "device_code": .string(deviceCode), "user_code": .string(userCode), "verification_uri": .string(verificationURI),
            "expires_in": .integer(expiresIn), "interval": .integer(interval),
        ]
        if let verificationURIComplete { members["verification_uri_complete"] = .string(verificationURIComplete) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            deviceCode: try object.string("device_code"), userCode: try object.string("user_code"),
            verificationURI: try object.string("verification_uri"), verificationURIComplete: try object.optionalString("verification_uri_complete"),
            expiresIn: try object.int("expires_in"),
            // RFC 8628 §3.2: without an interval, the client waits 5 seconds.
            interval: try object.optionalInt("interval") ?? 5)
    }
}
