public import LatchkeyJSON

// App Attest (docs/reference.md, "App Attest"). Binary members are base64url without padding;
// servers also take standard base64 with padding, which is how DCAppAttestService gives a key id.

/// `POST /v1/app-attest/challenge`: `{challenge, expires_in}`.
public struct WireAppAttestChallenge: WireCodable, Hashable {
    /// 32 random bytes, base64url; the app passes SHA-256 of these bytes as `clientDataHash`.
    public var challenge: String
    /// Seconds the challenge lives (300); it is good for one attestation or assertion.
    public var expiresIn: Int

    public init(challenge: String, expiresIn: Int) {
        self.challenge = challenge
        self.expiresIn = expiresIn
    }

    public var json: JSONValue { ["challenge": .string(challenge), "expires_in": .integer(expiresIn)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(challenge: try object.string("challenge"), expiresIn: try object.int("expires_in"))
    }
}

/// `POST /v1/app-attest/keys`: `{key_id, attestation, challenge}`.
public struct WireAppAttestKeyRequest: WireCodable, Hashable {
    /// The key identifier `generateKey` gave.
    public var keyID: String
    /// The CBOR attestation object `attestKey` gave.
    public var attestation: String
    /// A challenge from `POST /v1/app-attest/challenge`, as it came.
    public var challenge: String

    public init(keyID: String, attestation: String, challenge: String) {
        self.keyID = keyID
        self.attestation = attestation
        self.challenge = challenge
    }

    public var json: JSONValue { ["key_id": .string(keyID), "attestation": .string(attestation), "challenge": .string(challenge)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(keyID: try object.string("key_id"), attestation: try object.string("attestation"), challenge: try object.string("challenge"))
    }
}

/// An attested key: `{key_id, app_id, environment}`.
public struct WireAppAttestKey: WireCodable, Hashable {
    /// base64url.
    public var keyID: String
    /// `TEAMID.bundle.id`.
    public var appID: String
    /// `production` or `development`.
    public var environment: String

    public init(keyID: String, appID: String, environment: String) {
        self.keyID = keyID
        self.appID = appID
        self.environment = environment
    }

    public var json: JSONValue { ["key_id": .string(keyID), "app_id": .string(appID), "environment": .string(environment)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(keyID: try object.string("key_id"), appID: try object.string("app_id"), environment: try object.string("environment"))
    }
}

/// `POST /v1/app-attest/assertions`: `{key_id, assertion, challenge}`.
public struct WireAppAttestAssertionRequest: WireCodable, Hashable {
    /// An attested key's identifier.
    public var keyID: String
    /// The CBOR assertion `generateAssertion` gave.
    public var assertion: String
    /// A challenge from `POST /v1/app-attest/challenge`, as it came.
    public var challenge: String

    public init(keyID: String, assertion: String, challenge: String) {
        self.keyID = keyID
        self.assertion = assertion
        self.challenge = challenge
    }

    public var json: JSONValue { ["key_id": .string(keyID), "assertion": .string(assertion), "challenge": .string(challenge)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(keyID: try object.string("key_id"), assertion: try object.string("assertion"), challenge: try object.string("challenge"))
    }
}

/// What an assertion earns: `{app_check_token, expires_in}`; the token goes in the
/// `X-Latchkey-App-Check` header of the endpoints under `app_attest.enforce`.
public struct WireAppCheckToken: WireCodable, Hashable {
    /// An ES256 JWT, `typ: app-check+jwt`, verifiable through the server's JWKS.
    public var appCheckToken: String
    /// Seconds it lives.
    public var expiresIn: Int

    public init(appCheckToken: String, expiresIn: Int) {
        self.appCheckToken = appCheckToken
        self.expiresIn = expiresIn
    }

    public var json: JSONValue { ["app_check_token": .string(appCheckToken), "expires_in": .integer(expiresIn)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(appCheckToken: try object.string("app_check_token"), expiresIn: try object.int("expires_in"))
    }
}
