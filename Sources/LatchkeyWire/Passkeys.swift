public import LatchkeyJSON

// Passkeys (docs/reference.md, "Passkeys"). The options and the client's credential are the
// WebAuthn Level 3 JSON forms, carried as they are: binary members in base64url without padding.

/// `POST /v1/passkeys/registration/options`: `{flow_id, publicKey}`, where `publicKey` is a
/// `PublicKeyCredentialCreationOptionsJSON` for `PublicKeyCredential.parseCreationOptionsFromJSON`.
public struct WirePasskeyOptions: WireCodable, Hashable {
    /// The flow the answer names, used once.
    public var flowID: String
    /// The WebAuthn options.
    public var publicKey: JSONValue

    public init(flowID: String, publicKey: JSONValue) {
        self.flowID = flowID
        self.publicKey = publicKey
    }

    public var json: JSONValue { ["flow_id": .string(flowID), "publicKey": publicKey] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        guard case .object? = object.optionalValue("publicKey") else {
            throw WireDecodingError(code: .missing, path: "publicKey", expectation: "is required, an object")
        }
        self.init(flowID: try object.string("flow_id"), publicKey: object.members["publicKey"] ?? .null)
    }
}

/// `POST /v1/passkeys`: `{flow_id, credential, name?}`, `credential` a `RegistrationResponseJSON`
/// (what `credential.toJSON()` gives).
public struct WirePasskeyRegistration: WireCodable, Hashable {
    public var flowID: String
    public var credential: JSONValue
    /// What the account holder calls it; the server names it when absent.
    public var name: String?

    public init(flowID: String, credential: JSONValue, name: String? = nil) {
        self.flowID = flowID
        self.credential = credential
        self.name = name
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["flow_id": .string(flowID), "credential": credential]
        if let name { members["name"] = .string(name) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        guard case .object? = object.optionalValue("credential") else {
            throw WireDecodingError(code: .missing, path: "credential", expectation: "is required, an object")
        }
        self.init(flowID: try object.string("flow_id"), credential: object.members["credential"] ?? .null, name: try object.optionalString("name"))
    }
}

/// A registered passkey: `{id, name, created_at, last_used_at, backed_up, transports, aaguid}`.
public struct WirePasskey: WireCodable, Hashable {
    public var id: String
    public var name: String
    public var createdAt: WireTimestamp
    /// `nil` (`null` on the wire) until it is first used.
    public var lastUsedAt: WireTimestamp?
    /// BS: the passkey is synced (iCloud Keychain, a password manager) as last seen.
    public var backedUp: Bool
    /// How the client said it reaches the authenticator (`internal`, `hybrid`, …).
    public var transports: [String]
    /// The authenticator model, as a UUID string.
    public var aaguid: String

    public init(
        id: String, name: String, createdAt: WireTimestamp, lastUsedAt: WireTimestamp?, backedUp: Bool, transports: [String], aaguid: String
    ) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.backedUp = backedUp
        self.transports = transports
        self.aaguid = aaguid
    }

    public var json: JSONValue {
        [
            "id": .string(id), "name": .string(name), "created_at": .string(createdAt.rfc3339), "last_used_at": .optional(lastUsedAt?.rfc3339),
            "backed_up": .bool(backedUp), "transports": .array(transports.map(JSONValue.string)), "aaguid": .string(aaguid),
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            id: try object.string("id"), name: try object.string("name"), createdAt: try object.timestamp("created_at"),
            lastUsedAt: try object.optionalTimestamp("last_used_at"), backedUp: try object.bool("backed_up"),
            transports: try object.strings("transports"), aaguid: try object.string("aaguid"))
    }
}

/// `GET /v1/passkeys`: `{"passkeys": [...]}`, oldest first.
public struct WirePasskeyList: WireCodable, Hashable {
    public var passkeys: [WirePasskey]

    public init(passkeys: [WirePasskey]) {
        self.passkeys = passkeys
    }

    public var json: JSONValue { ["passkeys": .array(passkeys.map(\.json))] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(passkeys: try WireObject(json).models("passkeys"))
    }
}

/// `PATCH /v1/passkeys/{id}`: `{name}`.
public struct WirePasskeyRename: WireCodable, Hashable {
    public var name: String

    public init(name: String) {
        self.name = name
    }

    public var json: JSONValue { ["name": .string(name)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(name: try WireObject(json).string("name"))
    }
}

/// `POST /v1/passkeys/registration/options`: `{}`, or `{"mediation": "conditional"}` for a
/// conditional registration (iOS 18's automatic passkey upgrade after a password sign-in, whose
/// answer carries neither user presence nor user verification). Other members are ignored.
public struct WirePasskeyOptionsRequest: WireCodable, Hashable {
    /// `conditional`, or `nil` for a registration the user takes part in.
    public var mediation: String?

    public init(mediation: String? = nil) {
        self.mediation = mediation
    }

    public var json: JSONValue {
        guard let mediation else { return .object([:]) }
        return ["mediation": .string(mediation)]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(mediation: try WireObject(json).optionalString("mediation"))
    }
}

/// `POST /v1/auth/passkey/options`: `{username?}`. Without a username the options allow any
/// passkey of this relying party (discoverable, AutoFill); with one, that account's, and the
/// answer has the same shape whether the account exists or not.
public struct WirePasskeySignInOptionsRequest: WireCodable, Hashable {
    public var username: String?

    public init(username: String? = nil) {
        self.username = username
    }

    public var json: JSONValue {
        guard let username else { return .object([:]) }
        return ["username": .string(username)]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(username: try WireObject(json).optionalString("username"))
    }
}

/// `POST /v1/auth/passkey/signup/options`: `{username?, given_name?, family_name?}`, for an
/// account made with a passkey and no password.
public struct WirePasskeySignUpOptionsRequest: WireCodable, Hashable {
    /// The account's username (an email address); the passkey's `user.name` when given.
    public var username: String?
    public var givenName: String?
    public var familyName: String?

    public init(username: String? = nil, givenName: String? = nil, familyName: String? = nil) {
        self.username = username
        self.givenName = givenName
        self.familyName = familyName
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let username { members["username"] = .string(username) }
        if let givenName { members["given_name"] = .string(givenName) }
        if let familyName { members["family_name"] = .string(familyName) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            username: try object.optionalString("username"), givenName: try object.optionalString("given_name"),
            familyName: try object.optionalString("family_name"))
    }
}

/// `POST /v1/auth/passkey` and `POST /v1/auth/passkey/signup`: `{flow_id, credential}`, the
/// credential an `AuthenticationResponseJSON` (sign-in) or a `RegistrationResponseJSON`
/// (sign-up).
public struct WirePasskeyAnswer: WireCodable, Hashable {
    public var flowID: String
    public var credential: JSONValue

    public init(flowID: String, credential: JSONValue) {
        self.flowID = flowID
        self.credential = credential
    }

    public var json: JSONValue { ["flow_id": .string(flowID), "credential": credential] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        guard case .object? = object.optionalValue("credential") else {
            throw WireDecodingError(code: .missing, path: "credential", expectation: "is required, an object")
        }
        self.init(flowID: try object.string("flow_id"), credential: object.members["credential"] ?? .null)
    }
}

/// `POST /v1/mfa/passkey/options`: `{mfa_token}`; the answer is ``WirePasskeyOptions`` for the
/// token's account's passkeys, completed at `POST /v1/mfa/verify` with `flow_id` and `credential`.
public struct WireMFAPasskeyOptionsRequest: WireCodable, Hashable {
    public var mfaToken: String

    public init(mfaToken: String) {
        self.mfaToken = mfaToken
    }

    public var json: JSONValue { ["mfa_token": .string(mfaToken)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(mfaToken: try WireObject(json).string("mfa_token"))
    }
}
