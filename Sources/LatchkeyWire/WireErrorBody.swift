public import LatchkeyJSON

/// Every error body: `{"error": code, "error_description": sentence, ...}` with the members
/// docs/reference.md names for some codes.
public struct WireErrorBody: WireCodable, Hashable {
    /// The machine-readable code.
    public var error: WireErrorCode
    /// A sentence for a developer; never a secret.
    public var errorDescription: String
    /// `invalid_grant`: a ``GrantFailureReason``; `invalid_request` on a refused password: a
    /// ``PasswordRefusalReason``.
    public var reason: String?
    /// `rate_limited`: seconds until a retry may succeed (also in `Retry-After`).
    public var retryAfter: Int?
    /// `mfa_required`: the token to present at `/v1/mfa/challenge` and `/v1/mfa/verify`.
    public var mfaToken: String?
    /// `mfa_required`: the second factors the user can prove.
    public var factors: [WireFactor]?
    /// `server_error`: the request id to quote to an operator.
    public var requestID: String?

    public init(
        error: WireErrorCode, errorDescription: String, reason: String? = nil, retryAfter: Int? = nil, mfaToken: String? = nil,
        factors: [WireFactor]? = nil, requestID: String? = nil
    ) {
        self.error = error
        self.errorDescription = errorDescription
        self.reason = reason
        self.retryAfter = retryAfter
        self.mfaToken = mfaToken
        self.factors = factors
        self.requestID = requestID
    }

    /// The reason of an `invalid_grant`, typed.
    public var grantFailure: GrantFailureReason? {
        error == .invalidGrant ? reason.map(GrantFailureReason.init(rawValue:)) : nil
    }

    /// The reason of a refused password (`invalid_request` on sign-up or a password change), typed.
    public var passwordRefusal: PasswordRefusalReason? {
        error == .invalidRequest ? reason.map(PasswordRefusalReason.init(rawValue:)) : nil
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["error": .string(error.rawValue), "error_description": .string(errorDescription)]
        if let reason { members["reason"] = .string(reason) }
        if let retryAfter { members["retry_after"] = .integer(retryAfter) }
        if let mfaToken { members["mfa_token"] = .string(mfaToken) }
        if let factors { members["factors"] = .array(factors.map(\.json)) }
        if let requestID { members["request_id"] = .string(requestID) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            error: WireErrorCode(rawValue: try object.string("error")),
            errorDescription: try object.optionalString("error_description") ?? "",
            reason: try object.optionalString("reason"), retryAfter: try object.optionalInt("retry_after"),
            mfaToken: try object.optionalString("mfa_token"), factors: try object.optionalModels("factors"),
            requestID: try object.optionalString("request_id"))
    }
}

/// One second factor a user can prove: `{"type": "device_key", "id", "label"}`, `{"type": "totp"}`,
/// `{"type": "recovery_code"}` or `{"type": "passkey"}`, in `mfa_required` and in `GET /v1/me`.
public struct WireFactor: WireCodable, Hashable {
    /// The kind of factor.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A device key (Secure Enclave or a persisted right): prove it by signing a challenge.
        public static let deviceKey = Kind(rawValue: "device_key")
        /// A confirmed TOTP authenticator.
        public static let totp = Kind(rawValue: "totp")
        /// Unused recovery codes remain.
        public static let recoveryCode = Kind(rawValue: "recovery_code")
        /// One of the user's passkeys: prove it through `POST /v1/mfa/passkey/options`.
        public static let passkey = Kind(rawValue: "passkey")
    }

    public var type: Kind
    /// The device key's id; `nil` for other kinds.
    public var id: String?
    /// The device key's label; `nil` for other kinds.
    public var label: String?

    public init(type: Kind, id: String? = nil, label: String? = nil) {
        self.type = type
        self.id = id
        self.label = label
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["type": .string(type.rawValue)]
        if let id { members["id"] = .string(id) }
        if let label { members["label"] = .string(label) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(type: Kind(rawValue: try object.string("type")), id: try object.optionalString("id"), label: try object.optionalString("label"))
    }
}
