public import LatchkeyJSON

// Device keys and second factors (docs/reference.md, "Device keys and second factors"). Binary
// members (keys, signatures, challenges) are carried as their text: base64url without padding,
// though servers also take standard base64 with padding.

/// `POST /v1/challenges`: `{purpose, device_id?}`.
public struct WireChallengeRequest: WireCodable, Hashable {
    /// What the challenge may authorise.
    public struct Purpose: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Registering a new device key (`POST /v1/devices`); takes no `device_id`.
        public static let register = Purpose(rawValue: "register")
        /// A step-up of the session with one of its user's device keys; needs `device_id`.
        public static let stepUp = Purpose(rawValue: "step_up")
    }

    public var purpose: Purpose
    /// The device key that will sign, for ``Purpose/stepUp``.
    public var deviceID: String?

    public init(purpose: Purpose, deviceID: String? = nil) {
        self.purpose = purpose
        self.deviceID = deviceID
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["purpose": .string(purpose.rawValue)]
        if let deviceID { members["device_id"] = .string(deviceID) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(purpose: Purpose(rawValue: try object.string("purpose")), deviceID: try object.optionalString("device_id"))
    }
}

/// A challenge to sign: `{challenge_id, challenge, expires_in}`, from `POST /v1/challenges` and
/// `POST /v1/mfa/challenge`.
public struct WireChallenge: WireCodable, Hashable {
    public var challengeID: String
    /// The 32 random bytes to sign, base64url.
    public var challenge: String
    /// Seconds the challenge lives (120).
    public var expiresIn: Int

    public init(challengeID: String, challenge: String, expiresIn: Int) {
        self.challengeID = challengeID
        self.challenge = challenge
        self.expiresIn = expiresIn
    }

    public var json: JSONValue {
        ["challenge_id": .string(challengeID), "challenge": .string(challenge), "expires_in": .integer(expiresIn)]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(challengeID: try object.string("challenge_id"), challenge: try object.string("challenge"), expiresIn: try object.int("expires_in"))
    }
}

/// `POST /v1/devices`: `{public_key, label, challenge_id, signature}`.
public struct WireDeviceRegistration: WireCodable, Hashable {
    /// The 65-byte uncompressed X9.63 P-256 point, base64url.
    public var publicKey: String
    /// At most 100 characters.
    public var label: String
    /// A `register` challenge of the session.
    public var challengeID: String
    /// The strict DER ECDSA-SHA256 signature of the challenge bytes by the key, base64url.
    public var signature: String

    public init(publicKey: String, label: String, challengeID: String, signature: String) {
        self.publicKey = publicKey
        self.label = label
        self.challengeID = challengeID
        self.signature = signature
    }

    public var json: JSONValue {
        ["public_key": .string(publicKey), "label": .string(label), "challenge_id": .string(challengeID), "signature": .string(signature)]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            publicKey: try object.string("public_key"), label: try object.string("label"), challengeID: try object.string("challenge_id"),
            signature: try object.string("signature"))
    }
}

/// A registered device key: `{id, label, created_at, last_used_at}`.
public struct WireDevice: WireCodable, Hashable {
    public var id: String
    public var label: String
    public var createdAt: WireTimestamp
    /// `nil` (`null` on the wire) until the key is first used.
    public var lastUsedAt: WireTimestamp?

    public init(id: String, label: String, createdAt: WireTimestamp, lastUsedAt: WireTimestamp?) {
        self.id = id
        self.label = label
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    public var json: JSONValue {
        [
            "id": .string(id), "label": .string(label), "created_at": .string(createdAt.rfc3339),
            "last_used_at": .optional(lastUsedAt?.rfc3339),
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            id: try object.string("id"), label: try object.string("label"), createdAt: try object.timestamp("created_at"),
            lastUsedAt: try object.optionalTimestamp("last_used_at"))
    }
}

/// `GET /v1/devices`: `{"devices": [...]}`, oldest first.
public struct WireDeviceList: WireCodable, Hashable {
    public var devices: [WireDevice]

    public init(devices: [WireDevice]) {
        self.devices = devices
    }

    public var json: JSONValue { ["devices": .array(devices.map(\.json))] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(devices: try WireObject(json).models("devices"))
    }
}

/// `POST /v1/challenges/{id}/verify`: `{signature}` over a `step_up` challenge.
public struct WireStepUpRequest: WireCodable, Hashable {
    /// The strict DER ECDSA-SHA256 signature of the challenge bytes, base64url.
    public var signature: String

    public init(signature: String) {
        self.signature = signature
    }

    public var json: JSONValue { ["signature": .string(signature)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(signature: try WireObject(json).string("signature"))
    }
}

/// `POST /v1/totp`: `{secret, otpauth_uri}`, shown once.
public struct WireTOTPEnrollment: WireCodable, Hashable {
    /// The secret in base32 without padding, for typing into an authenticator app.
    public var secret: String
    /// The `otpauth://totp/...` Key URI, for a QR code.
    public var otpauthURI: String

    public init(secret: String, otpauthURI: String) {
        self.secret = secret
        self.otpauthURI = otpauthURI
    }

    public var json: JSONValue { ["secret": .string(secret), "otpauth_uri": .string(otpauthURI)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(secret: try object.string("secret"), otpauthURI: try object.string("otpauth_uri"))
    }
}

/// `POST /v1/totp/confirm`: `{code}`, the first code the app shows.
public struct WireTOTPConfirmation: WireCodable, Hashable {
    public var code: String

    public init(code: String) {
        self.code = code
    }

    public var json: JSONValue { ["code": .string(code)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(code: try WireObject(json).string("code"))
    }
}

/// The answer to `POST /v1/totp/confirm`: `{recovery_codes: [10 codes]}`, shown once.
public struct WireRecoveryCodes: WireCodable, Hashable {
    public var recoveryCodes: [String]

    public init(recoveryCodes: [String]) {
        self.recoveryCodes = recoveryCodes
    }

    public var json: JSONValue { ["recovery_codes": .array(recoveryCodes.map(JSONValue.string))] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(recoveryCodes: try WireObject(json).strings("recovery_codes"))
    }
}

/// `POST /v1/mfa/challenge`: `{mfa_token, device_id}`.
public struct WireMFAChallengeRequest: WireCodable, Hashable {
    /// The `mfa_token` of the `mfa_required` answer.
    public var mfaToken: String
    /// One of the user's device keys, from its `factors`.
    public var deviceID: String

    public init(mfaToken: String, deviceID: String) {
        self.mfaToken = mfaToken
        self.deviceID = deviceID
    }

    public var json: JSONValue { ["mfa_token": .string(mfaToken), "device_id": .string(deviceID)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(mfaToken: try object.string("mfa_token"), deviceID: try object.string("device_id"))
    }
}

/// `POST /v1/mfa/verify`: the `mfa_token` with exactly one proof: `challenge_id` with
/// `signature`, `totp_code`, `recovery_code`, or `flow_id` with `credential` (a passkey's
/// `AuthenticationResponseJSON`). The server refuses any other combination.
public struct WireMFAVerifyRequest: WireCodable, Hashable {
    public var mfaToken: String
    /// An MFA challenge of this `mfa_token`, with ``signature``.
    public var challengeID: String?
    /// The device key's signature of the challenge bytes, base64url.
    public var signature: String?
    public var totpCode: String?
    public var recoveryCode: String?
    /// A passkey flow of `POST /v1/mfa/passkey/options`, with ``credential``.
    public var flowID: String?
    /// The passkey's `AuthenticationResponseJSON`.
    public var credential: JSONValue?

    public init(
        mfaToken: String, challengeID: String? = nil, signature: String? = nil, totpCode: String? = nil, recoveryCode: String? = nil,
        flowID: String? = nil, credential: JSONValue? = nil
    ) {
        self.mfaToken = mfaToken
        self.challengeID = challengeID
        self.signature = signature
        self.totpCode = totpCode
        self.recoveryCode = recoveryCode
        self.flowID = flowID
        self.credential = credential
    }

    /// A device-key proof.
    public static func deviceSignature(mfaToken: String, challengeID: String, signature: String) -> WireMFAVerifyRequest {
        WireMFAVerifyRequest(mfaToken: mfaToken, challengeID: challengeID, signature: signature)
    }

    /// A TOTP proof.
    public static func totp(mfaToken: String, code: String) -> WireMFAVerifyRequest {
        WireMFAVerifyRequest(mfaToken: mfaToken, totpCode: code)
    }

    /// A recovery-code proof.
    public static func recoveryCode(mfaToken: String, code: String) -> WireMFAVerifyRequest {
        WireMFAVerifyRequest(mfaToken: mfaToken, recoveryCode: code)
    }

    /// A passkey proof.
    public static func passkey(mfaToken: String, flowID: String, credential: JSONValue) -> WireMFAVerifyRequest {
        WireMFAVerifyRequest(mfaToken: mfaToken, flowID: flowID, credential: credential)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["mfa_token": .string(mfaToken)]
        if let challengeID { members["challenge_id"] = .string(challengeID) }
        if let signature { members["signature"] = .string(signature) }
        if let totpCode { members["totp_code"] = .string(totpCode) }
        if let recoveryCode { members["recovery_code"] = .string(recoveryCode) }
        if let flowID { members["flow_id"] = .string(flowID) }
        if let credential { members["credential"] = credential }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            mfaToken: try object.string("mfa_token"), challengeID: try object.optionalString("challenge_id"),
            signature: try object.optionalString("signature"), totpCode: try object.optionalString("totp_code"),
            recoveryCode: try object.optionalString("recovery_code"), flowID: try object.optionalString("flow_id"),
            credential: object.optionalValue("credential"))
    }
}
