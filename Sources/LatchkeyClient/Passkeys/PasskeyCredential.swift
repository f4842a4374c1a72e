public import Foundation
public import LatchkeyJSON

/// A new passkey as the authenticator made it: what `ASAuthorizationPlatformPublicKeyCredentialRegistration`
/// carries, and in ``json`` the `RegistrationResponseJSON` (WebAuthn Level 3 §5.1) the server reads.
public struct PasskeyRegistration: Sendable, Hashable {
    /// The credential id the authenticator chose.
    public var credentialID: Data
    /// The client data JSON the attestation signs over (type `webauthn.create`, the challenge, the origin).
    public var clientDataJSON: Data
    /// The CBOR attestation object: `fmt`, `attStmt` and the authenticator data with the public key.
    public var attestationObject: Data
    /// How the client reaches the authenticator (`internal`, `hybrid`, …).
    public var transports: [String]
    /// `platform` or `cross-platform`, when known.
    public var attachment: String?

    /// A registration with these bytes.
    public init(credentialID: Data, clientDataJSON: Data, attestationObject: Data, transports: [String] = ["internal", "hybrid"], attachment: String? = "platform") {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
        self.attachment = attachment
    }

    /// `RegistrationResponseJSON`, what a browser's `credential.toJSON()` gives: binary members
    /// in base64url without padding.
    public var json: JSONValue {
        let id = JSONValue.string(Base64URL.encode(credentialID))
        var members: [String: JSONValue] = [
            "id": id, "rawId": id, "type": "public-key", "clientExtensionResults": .object([:]),
            "response": [
                "clientDataJSON": .string(Base64URL.encode(clientDataJSON)),
                "attestationObject": .string(Base64URL.encode(attestationObject)),
                "transports": .array(transports.map(JSONValue.string)),
            ],
        ]
        if let attachment { members["authenticatorAttachment"] = .string(attachment) }
        return .object(members)
    }
}

/// A passkey's signature of a challenge: what `ASAuthorizationPlatformPublicKeyCredentialAssertion`
/// carries, and in ``json`` the `AuthenticationResponseJSON` (WebAuthn Level 3 §5.1) the server reads.
public struct PasskeyAssertion: Sendable, Hashable {
    /// The passkey that signed.
    public var credentialID: Data
    /// The client data JSON (type `webauthn.get`, the challenge, the origin).
    public var clientDataJSON: Data
    /// The authenticator data: RP ID hash, flags, sign count.
    public var authenticatorData: Data
    /// The signature over the authenticator data and the client data's SHA-256.
    public var signature: Data
    /// The user handle stored with the passkey (`user.id` at its registration).
    public var userHandle: Data?
    /// `platform` or `cross-platform`, when known.
    public var attachment: String?

    /// An assertion with these bytes.
    public init(
        credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?, attachment: String? = "platform"
    ) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
        self.attachment = attachment
    }

    /// `AuthenticationResponseJSON`, what a browser's `credential.toJSON()` gives.
    public var json: JSONValue {
        let id = JSONValue.string(Base64URL.encode(credentialID))
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(Base64URL.encode(clientDataJSON)),
            "authenticatorData": .string(Base64URL.encode(authenticatorData)),
            "signature": .string(Base64URL.encode(signature)),
        ]
        if let userHandle { response["userHandle"] = .string(Base64URL.encode(userHandle)) }
        var members: [String: JSONValue] = [
            "id": id, "rawId": id, "type": "public-key", "clientExtensionResults": .object([:]), "response": .object(response),
        ]
        if let attachment { members["authenticatorAttachment"] = .string(attachment) }
        return .object(members)
    }
}
