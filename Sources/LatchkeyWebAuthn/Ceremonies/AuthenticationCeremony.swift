internal import LatchkeyCrypto
package import LatchkeyJSON

/// What the client sends back from `navigator.credentials.get()`: the parts of
/// `AuthenticationResponseJSON` the verifier reads.
package struct AuthenticationResponse: Sendable {
    /// `rawId`.
    package var credentialID: [UInt8]
    /// `response.clientDataJSON`, the exact bytes.
    package var clientDataJSON: [UInt8]
    /// `response.authenticatorData`.
    package var authenticatorData: [UInt8]
    /// `response.signature`.
    package var signature: [UInt8]
    /// `response.userHandle`, when the authenticator returned one.
    package var userHandle: [UInt8]?

    /// Creates a response from its decoded parts.
    package init(
        credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?
    ) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }

    /// Reads `AuthenticationResponseJSON` (WebAuthn §5.1): `id` and `rawId` the same
    /// base64url, `type` `public-key`, `response.clientDataJSON`, `.authenticatorData`,
    /// `.signature` and the optional `.userHandle` base64url (an empty or null `userHandle` is
    /// absent). Other members are ignored.
    ///
    /// - Parameter json: The parsed JSON object.
    /// - Throws: ``WebAuthnError/Code-swift.struct/malformed``.
    package init(json: JSONValue) throws(WebAuthnError) {
        let object = try ResponseJSON.credential(json)
        let response = try ResponseJSON.object(object["response"], "response")
        var userHandle: [UInt8]?
        if let member = response["userHandle"], member != .null {
            let bytes = try ResponseJSON.bytes(member, "response.userHandle")
            userHandle = bytes.isEmpty ? nil : bytes
        }
        self.init(
            credentialID: try ResponseJSON.credentialID(object),
            clientDataJSON: try ResponseJSON.bytes(response["clientDataJSON"], "response.clientDataJSON"),
            authenticatorData: try ResponseJSON.bytes(response["authenticatorData"], "response.authenticatorData"),
            signature: try ResponseJSON.bytes(response["signature"], "response.signature"),
            userHandle: userHandle)
    }
}

/// A registered credential as the server stored it.
package struct StoredCredential: Sendable {
    /// The credential id.
    package var credentialID: [UInt8]
    /// The COSE key bytes from registration.
    package var publicKey: [UInt8]
    /// The last sign count seen.
    package var signCount: UInt32
    /// The user handle of the credential's account.
    package var userHandle: [UInt8]

    /// Creates a stored credential.
    package init(credentialID: [UInt8], publicKey: [UInt8], signCount: UInt32, userHandle: [UInt8]) {
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.signCount = signCount
        self.userHandle = userHandle
    }
}

/// An assertion that passed every check: what the server updates.
package struct VerifiedAuthentication: Sendable {
    /// The credential id.
    package var credentialID: [UInt8]
    /// The new sign count to store (it may be zero).
    package var signCount: UInt32
    /// Whether UV was set.
    package var userVerified: Bool
    /// BE now; a change since registration is recorded, not refused.
    package var backupEligible: Bool
    /// BS now.
    package var backedUp: Bool
}

/// One authentication ceremony's expectations (WebAuthn §7.2).
package struct AuthenticationCeremony: Sendable {
    /// The challenge this flow issued.
    package var challenge: [UInt8]
    /// The allowed origins, compared exactly.
    package var origins: Set<String>
    /// The RP ID.
    package var rpID: String
    /// Whether UV must be set.
    package var userVerification: WebAuthn.UserVerification
    /// `allowCredentials` as sent; empty for a discoverable (username-less) sign-in, where the
    /// response must carry a user handle.
    package var allowedCredentialIDs: [[UInt8]]

    /// Creates the expectations.
    package init(
        challenge: [UInt8], origins: Set<String>, rpID: String, userVerification: WebAuthn.UserVerification,
        allowedCredentialIDs: [[UInt8]] = []
    ) {
        self.challenge = challenge
        self.origins = origins
        self.rpID = rpID
        self.userVerification = userVerification
        self.allowedCredentialIDs = allowedCredentialIDs
    }

    /// Verifies an assertion by the credential the server found for the response's id (§7.2).
    ///
    /// - Parameters:
    ///   - response: The client's response.
    ///   - credential: The stored credential whose id the response names.
    ///   - keys: Where the credential's parsed key is kept between uses; without one it is parsed
    ///     for this call.
    /// - Returns: What to update.
    /// - Throws: ``WebAuthnError`` with the first failed check's reason (see ``WebAuthn``).
    package func verify(
        _ response: AuthenticationResponse, credential: StoredCredential, keys: COSEKeyCache? = nil
    ) throws(WebAuthnError) -> VerifiedAuthentication {
        if !allowedCredentialIDs.isEmpty {
            guard allowedCredentialIDs.contains(response.credentialID) else {
                throw WebAuthnError(.credentialNotAllowed, "the credential is not in allowCredentials")
            }
        }
        guard response.credentialID == credential.credentialID else {
            throw WebAuthnError(.credentialNotAllowed, "the response names another credential")
        }
        if let userHandle = response.userHandle {
            guard userHandle == credential.userHandle else {
                throw WebAuthnError(.userHandleMismatch, "userHandle is not the credential's user")
            }
        } else if allowedCredentialIDs.isEmpty {
            throw WebAuthnError(.userHandleMismatch, "a discoverable sign-in needs userHandle")
        }
        let clientData = try WebAuthn.checkClientData(
            response.clientDataJSON, type: "webauthn.get", challenge: challenge, origins: origins)
        let data = try AuthenticatorData(bytes: response.authenticatorData)
        try WebAuthn.checkAuthenticatorData(data, rpID: rpID, userVerification: userVerification, conditional: false)
        let key = if let keys { try keys.key(for: credential.publicKey) } else { try COSEKey(bytes: credential.publicKey) }
        guard key.isValidSignature(response.signature, for: data.bytes + clientData.hash) else {
            throw WebAuthnError(.badSignature, "the assertion signature does not verify")
        }
        // §6.1.1: zero means the authenticator keeps no counter (synced passkeys).
        if data.signCount != 0 {
            guard data.signCount > credential.signCount else {
                throw WebAuthnError(
                    .clonedAuthenticator, "sign count \(data.signCount) does not exceed the stored \(credential.signCount)")
            }
        }
        return VerifiedAuthentication(
            credentialID: credential.credentialID, signCount: data.signCount, userVerified: data.userVerified,
            backupEligible: data.backupEligible, backedUp: data.backedUp)
    }
}

/// Reading the `…ResponseJSON` forms.
enum ResponseJSON {
    static func credential(_ json: JSONValue) throws(WebAuthnError) -> [String: JSONValue] {
        let object = try object(json, "the credential")
        guard object["type"]?.stringValue == "public-key" else { throw .malformed("type is not public-key") }
        return object
    }

    static func credentialID(_ object: [String: JSONValue]) throws(WebAuthnError) -> [UInt8] {
        let rawID = try bytes(object["rawId"], "rawId")
        guard object["id"]?.stringValue == object["rawId"]?.stringValue else { throw .malformed("id is not rawId") }
        return rawID
    }

    static func object(_ value: JSONValue?, _ name: String) throws(WebAuthnError) -> [String: JSONValue] {
        guard let object = value?.objectValue else { throw .malformed("\(name) is not an object") }
        return object
    }

    static func bytes(_ value: JSONValue?, _ name: String) throws(WebAuthnError) -> [UInt8] {
        guard let text = value?.stringValue,
            let bytes = Base64.decode(Array(text.utf8), alphabet: .urlSafe, padded: false)
        else {
            throw .malformed("\(name) is not unpadded base64url")
        }
        return bytes
    }
}
