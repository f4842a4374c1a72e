package import FoundationEssentials
package import LatchkeyCrypto

/// The App Attest environment a key was made in, told apart by the authenticator data's AAGUID.
package enum AppAttestEnvironment: String, Sendable, CaseIterable {
    /// Apps from the App Store, TestFlight and Enterprise distribution.
    case production
    /// Apps built with the development entitlement (Xcode runs).
    case development

    /// The AAGUID Apple writes for the environment: `appattest` followed by seven zero bytes,
    /// or `appattestdevelop`.
    package var aaguid: [UInt8] {
        switch self {
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        case .development: Array("appattestdevelop".utf8)
        }
    }
}

/// What an App Attest attestation is checked against.
package struct AppAttestPolicy: Sendable {
    /// The apps allowed, each `TEAMID.bundle.id`; the attestation's `rpIdHash` must be SHA-256 of
    /// one of them.
    package var appIDs: [String]
    /// The one environment accepted.
    package var environment: AppAttestEnvironment
    /// Trust anchors: Apple's App Attestation Root CA in production, a test root in tests.
    package var roots: [X509Certificate]

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - appIDs: The apps allowed (`TEAMID.bundle.id`).
    ///   - environment: The environment accepted.
    ///   - roots: The trust anchors.
    package init(appIDs: [String], environment: AppAttestEnvironment, roots: [X509Certificate]) {
        self.appIDs = appIDs
        self.environment = environment
        self.roots = roots
    }
}

/// A key App Attest vouched for: what the server stores to check the key's assertions.
package struct AppAttestedKey: Sendable, Hashable {
    /// SHA-256 of ``publicKey``: the key identifier the app got from `generateKey`.
    package var keyID: [UInt8]
    /// The key as an uncompressed P-256 point, 04 ‖ x ‖ y.
    package var publicKey: [UInt8]
    /// The app the key belongs to (`TEAMID.bundle.id`).
    package var appID: String
    /// The environment it was made in.
    package var environment: AppAttestEnvironment
    /// Apple's receipt (a PKCS #7 message), kept for fraud-metric requests to Apple.
    package var receipt: [UInt8]

    package init(keyID: [UInt8], publicKey: [UInt8], appID: String, environment: AppAttestEnvironment, receipt: [UInt8]) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.appID = appID
        self.environment = environment
        self.receipt = receipt
    }
}

/// The App Attest verifier (Apple's "Validating apps that connect to your server"), as pure
/// functions: no clock, no storage. The caller passes the time, the roots and the counter it
/// stored, and keeps what it learns.
///
/// Both checks take `clientDataHash`, the bytes the app passed to `attestKey` or
/// `generateAssertion`; Latchkey's apps pass SHA-256 of the server's challenge bytes.
package enum AppAttest {
    /// The attestation statement format.
    package static let format = AttestationFormat(rawValue: "apple-appattest")
    /// The longest assertion accepted: a DER signature (72 bytes) and 37 bytes of authenticator
    /// data, with room for CBOR framing and extensions.
    package static let maximumAssertionByteCount = 4096

    /// Verifies an attestation object, following Apple's nine steps.
    ///
    /// 1. `fmt` is `apple-appattest`; `x5c` chains to a root of `policy` at `time`.
    /// 2–4. The credential certificate's extension 1.2.840.113635.100.8.2, read as DER, holds
    ///    SHA-256(authData ‖ clientDataHash).
    /// 5. SHA-256 of the certificate's public point (not its SubjectPublicKeyInfo) is `keyID`.
    /// 6. `rpIdHash` is SHA-256 of one of the policy's app ids.
    /// 7. The counter is 0.
    /// 8. The AAGUID is the policy environment's.
    /// 9. The credential id is `keyID`.
    ///
    /// Extensions after the credential key (ED set) are accepted and ignored.
    ///
    /// - Parameters:
    ///   - bytes: The CBOR attestation object.
    ///   - keyID: The key identifier the app sent.
    ///   - clientDataHash: What the app passed to `attestKey`.
    ///   - policy: The apps, environment and roots accepted.
    ///   - time: The moment certificate validity is checked at.
    /// - Returns: The attested key.
    /// - Throws: ``WebAuthnError`` whose code names the failed step: `malformed`,
    ///   `unsupported_attestation`, `invalid_attestation`, `untrusted_attestation`,
    ///   `nonce_mismatch`, `key_id_mismatch`, `rp_id_mismatch`, `counter_mismatch`,
    ///   `missing_credential_data`, `environment_mismatch`.
    package static func verifyAttestation(
        _ bytes: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], policy: AppAttestPolicy, at time: Date
    ) throws(WebAuthnError) -> AppAttestedKey {
        let object = try AttestationObject(bytes: bytes)
        guard object.format == format else {
            throw WebAuthnError(.unsupportedAttestation, "the attestation format is \(object.format), not \(format)")
        }
        guard let receipt = object.statement["receipt"]?.bytesValue else {
            throw WebAuthnError(.invalidAttestation, "an apple-appattest statement needs a receipt")
        }
        guard let chain = try AttestationVerifier.certificates(object.statement) else {
            throw WebAuthnError(.invalidAttestation, "an apple-appattest statement needs x5c")
        }
        if let failure = chain[0].chainFailure(intermediates: Array(chain.dropFirst()), roots: policy.roots, at: time) {
            throw WebAuthnError(.untrustedAttestation, "the App Attest certificate chain does not verify: \(failure)")
        }
        let authenticatorData = object.authenticatorData
        let nonce = HashFunction.sha256.hash(authenticatorData.bytes + clientDataHash)
        guard ConstantTime.equals(try AttestationVerifier.appleNonce(of: chain[0]), nonce) else {
            throw WebAuthnError(.nonceMismatch, "the certificate's nonce is not SHA-256(authData ‖ clientDataHash)")
        }
        guard let spki = try? chain[0].subjectPublicKeyInfo(), let key = try? P256.Signing.PublicKey(derRepresentation: spki) else {
            throw WebAuthnError(.invalidAttestation, "the credential certificate's key is not a P-256 key")
        }
        let point = key.x963Representation
        guard ConstantTime.equals(HashFunction.sha256.hash(point), keyID) else {
            throw WebAuthnError(.keyIDMismatch, "the key id is not SHA-256 of the certified public key")
        }
        guard let appID = policy.appIDs.first(where: { ConstantTime.equals(HashFunction.sha256.hash(Array($0.utf8)), authenticatorData.rpIDHash) })
        else {
            throw WebAuthnError(.rpIDMismatch, "the rpIdHash is not SHA-256 of a configured app id")
        }
        guard authenticatorData.signCount == 0 else {
            throw WebAuthnError(.counterMismatch, "an attestation's counter is \(authenticatorData.signCount), not 0")
        }
        guard let credential = authenticatorData.attestedCredential else {
            throw WebAuthnError(.missingCredentialData, "the attestation's authenticator data has no attested credential")
        }
        guard credential.aaguid == policy.environment.aaguid else {
            throw WebAuthnError(.environmentMismatch, "the AAGUID is not the \(policy.environment.rawValue) environment's")
        }
        guard ConstantTime.equals(credential.credentialID, keyID) else {
            throw WebAuthnError(.keyIDMismatch, "the credential id is not the key id")
        }
        return AppAttestedKey(keyID: keyID, publicKey: point, appID: appID, environment: policy.environment, receipt: receipt)
    }

    /// Verifies an assertion: a CBOR map of exactly `signature` (DER ECDSA) and
    /// `authenticatorData`.
    ///
    /// The signature is ECDSA P-256 with SHA-256 over nonce = SHA-256(authenticatorData ‖
    /// clientDataHash), so the nonce is hashed once more inside ECDSA, as Apple's devices sign
    /// it. `rpIdHash` must be SHA-256 of `appID` and the counter greater than `previousCounter`.
    ///
    /// - Parameters:
    ///   - bytes: The CBOR assertion.
    ///   - publicKey: The key's uncompressed point, as stored at attestation.
    ///   - clientDataHash: What the app passed to `generateAssertion`.
    ///   - appID: The key's app.
    ///   - previousCounter: The last counter accepted for the key (0 after attestation).
    /// - Returns: The assertion's counter, to store in place of `previousCounter`.
    /// - Throws: ``WebAuthnError``: `malformed`, `invalid_public_key`, `bad_signature`,
    ///   `rp_id_mismatch`, `counter_mismatch`.
    package static func verifyAssertion(
        _ bytes: [UInt8], publicKey: [UInt8], clientDataHash: [UInt8], appID: String, previousCounter: UInt32
    ) throws(WebAuthnError) -> UInt32 {
        guard bytes.count <= maximumAssertionByteCount else { throw .malformed("the assertion is longer than 4 KiB") }
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes)
        } catch {
            throw .malformed("the assertion is not CBOR: \(error.message)")
        }
        guard value.mapValue?.count == 2, let signature = value["signature"]?.bytesValue,
            let data = value["authenticatorData"]?.bytesValue
        else {
            throw .malformed("the assertion is not {signature, authenticatorData}")
        }
        // rpIdHash (32) ‖ flags (1) ‖ counter (4). Devices set AT in assertions without attested
        // credential data after it, so WebAuthn's parser does not apply; only extensions (ED
        // set, a CBOR map) may follow.
        guard data.count >= 37 else { throw .malformed("the assertion's authenticator data is shorter than 37 bytes") }
        if data.count > 37 {
            guard data[32] & AuthenticatorData.Flags.extensionData.rawValue != 0,
                (try? CBORDecoder.decode(data[37...]))?.mapValue != nil
            else {
                throw .malformed("bytes other than an extension map follow the assertion's authenticator data")
            }
        }
        let rpIDHash = Array(data[0..<32])
        let signCount = data[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else {
            throw WebAuthnError(.invalidPublicKey, "the stored key is not a P-256 point")
        }
        let nonce = HashFunction.sha256.hash(data + clientDataHash)
        guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature), key.isValidSignature(parsed, for: nonce)
        else {
            throw WebAuthnError(.badSignature, "the assertion signature does not verify over its nonce")
        }
        guard ConstantTime.equals(rpIDHash, HashFunction.sha256.hash(Array(appID.utf8))) else {
            throw WebAuthnError(.rpIDMismatch, "the rpIdHash is not SHA-256 of the key's app id")
        }
        guard signCount > previousCounter else {
            throw WebAuthnError(.counterMismatch, "the counter \(signCount) does not exceed \(previousCounter)")
        }
        return signCount
    }
}
