public import LatchkeyJSON

/// The body of `POST /v1/auth/apple` (docs/reference.md, "Sign in with Apple"): what the app got
/// from Sign in with Apple.
public struct WireAppleSignInRequest: WireCodable, Hashable {
    /// Apple's identity token, a compact JWS.
    public var identityToken: String
    /// Apple's single-use authorization code, to exchange for a refresh token.
    public var authorizationCode: String?
    /// The raw nonce; the token's `nonce` is its SHA-256 in hex.
    public var nonce: String?
    /// The name Apple hands the app on the first authorization only.
    public var givenName: String?
    public var familyName: String?

    public init(
        identityToken: String, authorizationCode: String? = nil, nonce: String? = nil, givenName: String? = nil, familyName: String? = nil
    ) {
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.nonce = nonce
        self.givenName = givenName
        self.familyName = familyName
    }

    /// Absent optional members are left out, as an app sends them.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["identity_token": .string(identityToken)]
        members["authorization_code"] = authorizationCode.map(JSONValue.string)
        members["nonce"] = nonce.map(JSONValue.string)
        members["given_name"] = givenName.map(JSONValue.string)
        members["family_name"] = familyName.map(JSONValue.string)
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            identityToken: try object.string("identity_token"), authorizationCode: try object.optionalString("authorization_code"),
            nonce: try object.optionalString("nonce"), givenName: try object.optionalString("given_name"),
            familyName: try object.optionalString("family_name"))
    }
}

/// The body of `POST /v1/apple/notifications` (docs/reference.md, "Apple server-to-server
/// notifications"): Apple's signed notification.
public struct WireAppleNotification: WireCodable, Hashable {
    /// The notification, a compact JWS signed by Apple.
    public var payload: String

    public init(payload: String) {
        self.payload = payload
    }

    public var json: JSONValue { ["payload": .string(payload)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(payload: try WireObject(json).string("payload"))
    }
}
