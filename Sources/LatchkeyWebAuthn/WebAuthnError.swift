import LatchkeyErrors

/// A refusal of the WebAuthn verifier: its ``code`` is the `reason` the server returns.
///
/// See ``WebAuthn`` for the list of reasons and the check each belongs to. The ``message`` says
/// what exactly failed, for the audit log and tests; it never holds a key, a signature or a
/// challenge.
package struct WebAuthnError: CodedError {
    /// The refusal reason; its raw value is the wire `reason`.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// A structure did not parse: client data JSON, authenticator data, CBOR, base64url,
        /// the attestation object, a COSE key's members, the response JSON.
        package static let malformed = Code(rawValue: "malformed")
        /// `clientDataJSON.type` is not `webauthn.create` (registration) or `webauthn.get`.
        package static let typeMismatch = Code(rawValue: "type_mismatch")
        /// The challenge is not the one this flow issued.
        package static let challengeMismatch = Code(rawValue: "challenge_mismatch")
        /// The origin is not one of the allowed origins.
        package static let originMismatch = Code(rawValue: "origin_mismatch")
        /// `crossOrigin` is true or a `topOrigin` is present: the ceremony ran in a frame.
        package static let crossOrigin = Code(rawValue: "cross_origin")
        /// `rpIdHash` is not SHA-256 of the RP ID.
        package static let rpIDMismatch = Code(rawValue: "rp_id_mismatch")
        /// The UP flag is clear (and the flow is not a conditional registration).
        package static let userNotPresent = Code(rawValue: "user_not_present")
        /// The UV flag is clear where user verification is required.
        package static let userNotVerified = Code(rawValue: "user_not_verified")
        /// BS (backed up) is set but BE (backup eligible) is not.
        package static let invalidBackupState = Code(rawValue: "invalid_backup_state")
        /// A registration's authenticator data has no attested credential data (AT clear).
        package static let missingCredentialData = Code(rawValue: "missing_credential_data")
        /// The credential id is longer than 1,023 bytes, or differs from the response's id.
        package static let invalidCredentialID = Code(rawValue: "invalid_credential_id")
        /// The key's algorithm was not offered, or its type, curve or size is not allowed.
        package static let unsupportedAlgorithm = Code(rawValue: "unsupported_algorithm")
        /// The COSE key names an allowed algorithm but its key is not valid (a point off the
        /// curve, a bad RSA modulus, a private member).
        package static let invalidPublicKey = Code(rawValue: "invalid_public_key")
        /// The credential is not one of `allowCredentials`, or not the stored credential.
        package static let credentialNotAllowed = Code(rawValue: "credential_not_allowed")
        /// `userHandle` is missing where the user was not identified first, or is not the
        /// credential's user handle.
        package static let userHandleMismatch = Code(rawValue: "user_handle_mismatch")
        /// The assertion signature does not verify with the stored key.
        package static let badSignature = Code(rawValue: "bad_signature")
        /// A non-zero sign count that does not exceed the stored one (WebAuthn §6.1.1).
        package static let clonedAuthenticator = Code(rawValue: "cloned_authenticator")
        /// The attestation statement's `fmt` is not one the verifier knows (policy `direct`).
        package static let unsupportedAttestation = Code(rawValue: "unsupported_attestation")
        /// The attestation statement fails its format's checks (signature, certificate
        /// requirements, nonce, key match).
        package static let invalidAttestation = Code(rawValue: "invalid_attestation")
        /// The attestation certificate chain does not verify to a configured root.
        package static let untrustedAttestation = Code(rawValue: "untrusted_attestation")
        /// App Attest: the credential certificate's nonce is not SHA-256(authData ‖
        /// clientDataHash), or an assertion's signature is not over that nonce.
        package static let nonceMismatch = Code(rawValue: "nonce_mismatch")
        /// App Attest: the key id is not SHA-256 of the certified public point, or the
        /// credential id is not the key id.
        package static let keyIDMismatch = Code(rawValue: "key_id_mismatch")
        /// App Attest: the AAGUID is not the configured environment's.
        package static let environmentMismatch = Code(rawValue: "environment_mismatch")
        /// App Attest: an attestation's counter is not 0, or an assertion's counter does not
        /// exceed the last one accepted for the key.
        package static let counterMismatch = Code(rawValue: "counter_mismatch")
    }

    /// The reason.
    package var code: Code
    /// What exactly failed, safe to log.
    package var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The reason.
    ///   - message: What exactly failed; never key material, signatures or challenges.
    package init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// The `reason` string the server returns.
    package var reason: String { code.rawValue }
}

extension WebAuthnError {
    static func malformed(_ message: String) -> WebAuthnError { WebAuthnError(.malformed, message) }
}
