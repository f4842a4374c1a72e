package import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyJSON

/// What the client sends back from `navigator.credentials.create()`: the parts of
/// `RegistrationResponseJSON` the verifier reads. Transports and the name are the server's.
package struct RegistrationResponse: Sendable {
    /// `rawId`.
    package var credentialID: [UInt8]
    /// `response.clientDataJSON`, the exact bytes.
    package var clientDataJSON: [UInt8]
    /// `response.attestationObject`.
    package var attestationObject: [UInt8]

    /// Creates a response from its decoded parts.
    package init(credentialID: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
    }

    /// Reads `RegistrationResponseJSON` (WebAuthn §5.1): `id` and `rawId` the same base64url,
    /// `type` `public-key`, `response.clientDataJSON` and `response.attestationObject`
    /// base64url. Other members are ignored.
    ///
    /// - Parameter json: The parsed JSON object.
    /// - Throws: ``WebAuthnError/Code-swift.struct/malformed``.
    package init(json: JSONValue) throws(WebAuthnError) {
        let object = try ResponseJSON.credential(json)
        let response = try ResponseJSON.object(object["response"], "response")
        self.init(
            credentialID: try ResponseJSON.credentialID(object),
            clientDataJSON: try ResponseJSON.bytes(response["clientDataJSON"], "response.clientDataJSON"),
            attestationObject: try ResponseJSON.bytes(response["attestationObject"], "response.attestationObject"))
    }
}

/// How attestation statements are treated (`attestation` in the creation options).
package enum AttestationPolicy: Sendable {
    /// Every statement is accepted as `none`: not verified, no trust derived (WebAuthn §7.1
    /// step 21 lets a relying party that asked for `none` skip it).
    case none
    /// The statement is verified for its `fmt`, and certificate chains to these roots.
    case direct(AttestationTrust)
}

/// The roots attestation chains must verify to, per format, and the time they are checked at.
package struct AttestationTrust: Sendable {
    /// Trust anchors per format; a format without roots cannot be trusted (`packed` self
    /// attestation needs none).
    package var roots: [AttestationFormat: [X509Certificate]]
    /// The time certificate validity is checked at; nil for now. Tests pass a recorded
    /// fixture's time.
    package var verificationTime: Date?

    /// Creates the trust settings.
    ///
    /// - Parameters:
    ///   - roots: Trust anchors per format.
    ///   - verificationTime: The time certificates are checked at; nil for now.
    package init(roots: [AttestationFormat: [X509Certificate]], verificationTime: Date? = nil) {
        self.roots = roots
        self.verificationTime = verificationTime
    }
}

/// An attestation statement format identifier (WebAuthn §8, the IANA registry).
package struct AttestationFormat: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }

    /// §8.7: no statement.
    package static let none = AttestationFormat(rawValue: "none")
    /// §8.2.
    package static let packed = AttestationFormat(rawValue: "packed")
    /// §8.8: Apple anonymous attestation.
    package static let apple = AttestationFormat(rawValue: "apple")
    /// §8.6.
    package static let fidoU2F = AttestationFormat(rawValue: "fido-u2f")

    package var description: String { rawValue }
}

/// What an attestation statement proved (§6.5.3 attestation types).
package enum AttestationType: Sendable, Hashable {
    /// Not verified: the policy was `none`, or the statement was `none`.
    case none
    /// `packed` without `x5c`: signed by the credential key itself.
    case selfAttestation
    /// A certificate chain verified to a configured root (basic or anonymization CA).
    case verified
}

/// A registration that passed every check: what the server stores.
package struct VerifiedRegistration: Sendable {
    /// The credential id, 1 to 1,023 bytes.
    package var credentialID: [UInt8]
    /// The COSE key bytes as the authenticator sent them.
    package var publicKey: [UInt8]
    /// The key's algorithm.
    package var algorithm: COSEAlgorithm
    /// The signature counter at registration.
    package var signCount: UInt32
    /// Whether UV was set.
    package var userVerified: Bool
    /// BE: the credential may be synced (a passkey).
    package var backupEligible: Bool
    /// BS: the credential is backed up now.
    package var backedUp: Bool
    /// The authenticator model, 16 bytes.
    package var aaguid: [UInt8]
    /// The statement's `fmt` as sent.
    package var attestationFormat: AttestationFormat
    /// What the statement proved.
    package var attestationType: AttestationType
}

/// One registration ceremony's expectations (WebAuthn §7.1): verify a response against them.
package struct RegistrationCeremony: Sendable {
    /// The challenge this flow issued.
    package var challenge: [UInt8]
    /// The allowed origins, compared exactly.
    package var origins: Set<String>
    /// The RP ID.
    package var rpID: String
    /// Whether UV must be set.
    package var userVerification: WebAuthn.UserVerification
    /// The `pubKeyCredParams` offered.
    package var algorithms: [COSEAlgorithm]
    /// How attestation is treated.
    package var attestation: AttestationPolicy
    /// Whether the options asked for conditional mediation (an automatic passkey upgrade):
    /// then UP and UV may be clear.
    package var conditional: Bool

    /// Creates the expectations.
    package init(
        challenge: [UInt8], origins: Set<String>, rpID: String, userVerification: WebAuthn.UserVerification,
        algorithms: [COSEAlgorithm] = COSEAlgorithm.supported, attestation: AttestationPolicy = .none,
        conditional: Bool = false
    ) {
        self.challenge = challenge
        self.origins = origins
        self.rpID = rpID
        self.userVerification = userVerification
        self.algorithms = algorithms
        self.attestation = attestation
        self.conditional = conditional
    }

    /// Verifies a registration response (§7.1).
    ///
    /// - Parameter response: The client's response.
    /// - Returns: What to store.
    /// - Throws: ``WebAuthnError`` with the first failed check's reason (see ``WebAuthn``).
    package func verify(_ response: RegistrationResponse) throws(WebAuthnError) -> VerifiedRegistration {
        let clientData = try WebAuthn.checkClientData(
            response.clientDataJSON, type: "webauthn.create", challenge: challenge, origins: origins)
        let object = try AttestationObject(bytes: response.attestationObject)
        let data = object.authenticatorData
        try WebAuthn.checkAuthenticatorData(data, rpID: rpID, userVerification: userVerification, conditional: conditional)
        guard let credential = data.attestedCredential else {
            throw WebAuthnError(.missingCredentialData, "the AT flag is clear")
        }
        guard credential.credentialID == response.credentialID else {
            throw WebAuthnError(.invalidCredentialID, "the attested credential id is not the response's id")
        }
        let key = try COSEKey(value: credential.publicKey, bytes: credential.publicKeyBytes)
        guard algorithms.contains(key.algorithm) else {
            throw WebAuthnError(.unsupportedAlgorithm, "\(key.algorithm) was not offered")
        }
        let type: AttestationType
        switch attestation {
        case .none:
            type = .none
        case .direct(let trust):
            type = try AttestationVerifier.verify(object, clientDataHash: clientData.hash, credentialKey: key, trust: trust)
        }
        return VerifiedRegistration(
            credentialID: credential.credentialID, publicKey: credential.publicKeyBytes, algorithm: key.algorithm,
            signCount: data.signCount, userVerified: data.userVerified, backupEligible: data.backupEligible,
            backedUp: data.backedUp, aaguid: credential.aaguid, attestationFormat: object.format, attestationType: type)
    }
}
