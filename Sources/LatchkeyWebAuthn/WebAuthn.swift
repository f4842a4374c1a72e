internal import LatchkeyCrypto

/// A WebAuthn Level 3 relying party's verifier: pure functions from a ceremony's expectations
/// and the client's response to what the server stores, or a refusal.
///
/// The module knows no HTTP and no storage. ``RegistrationCeremony`` checks a new credential
/// (§7.1), ``AuthenticationCeremony`` an assertion (§7.2); both throw ``WebAuthnError``, whose
/// code is the `reason` the server returns with `invalid_grant`:
///
/// | reason | check |
/// |---|---|
/// | `malformed` | client data JSON, authenticator data, attestation object, CBOR, COSE members, base64url, response JSON |
/// | `type_mismatch` | `type` is `webauthn.create` / `webauthn.get` |
/// | `challenge_mismatch` | the challenge is the flow's (compared in constant time) |
/// | `origin_mismatch` | `origin` is exactly one of the allowed origins |
/// | `cross_origin` | `crossOrigin` true, or a `topOrigin` present |
/// | `rp_id_mismatch` | `rpIdHash` = SHA-256(RP ID) |
/// | `user_not_present` | UP set (a conditional registration may clear it) |
/// | `user_not_verified` | UV set when user verification is required (not on a conditional registration) |
/// | `invalid_backup_state` | BS set without BE |
/// | `missing_credential_data` | registration: AT set |
/// | `invalid_credential_id` | the credential id ≤ 1,023 bytes and equal to the response's id |
/// | `unsupported_algorithm` | the key's `alg` was offered; its key type, curve and size are allowed |
/// | `invalid_public_key` | the COSE key is a valid public key (point on the curve, RSA policy, no private part) |
/// | `credential_not_allowed` | authentication: the credential is in `allowCredentials` and is the stored one |
/// | `user_handle_mismatch` | authentication: `userHandle` present when the user was not identified first, and the credential's |
/// | `bad_signature` | authentication: the signature over `authenticatorData ‖ SHA-256(clientDataJSON)` verifies |
/// | `cloned_authenticator` | authentication: a non-zero sign count exceeds the stored one (zero always passes) |
/// | `unsupported_attestation` | registration, policy `direct`: the `fmt` is `none`, `packed`, `apple` or `fido-u2f` |
/// | `invalid_attestation` | registration, policy `direct`: the statement passes its format's checks |
/// | `untrusted_attestation` | registration, policy `direct`: the certificate chain verifies to a configured root |
///
/// Checks run in the order of §7.1 and §7.2, so a response that breaks several checks is
/// refused for the first.
package enum WebAuthn {
    /// Whether user verification must have happened (`authenticatorSelection.userVerification`).
    package enum UserVerification: Sendable, Hashable {
        /// UV must be set.
        case required
        /// UV is recorded, not demanded.
        case preferred
    }

    /// The checks both ceremonies make on the client data (§7.1 steps 7–10, §7.2 steps 11–14).
    static func checkClientData(
        _ clientDataJSON: [UInt8], type: String, challenge: [UInt8], origins: Set<String>
    ) throws(WebAuthnError) -> ClientData {
        let clientData = try ClientData(json: clientDataJSON)
        guard clientData.type == type else {
            throw WebAuthnError(.typeMismatch, "clientDataJSON.type is not \(type)")
        }
        guard ConstantTime.equals(clientData.challenge, challenge) else {
            throw WebAuthnError(.challengeMismatch, "the challenge is not this flow's")
        }
        guard origins.contains(clientData.origin) else {
            throw WebAuthnError(.originMismatch, "the origin is not an allowed origin")
        }
        guard !clientData.crossOrigin, clientData.topOrigin == nil else {
            throw WebAuthnError(.crossOrigin, "the ceremony ran in a cross-origin frame")
        }
        return clientData
    }

    /// The checks both ceremonies make on the authenticator data's RP ID hash and flags.
    static func checkAuthenticatorData(
        _ data: AuthenticatorData, rpID: String, userVerification: UserVerification, conditional: Bool
    ) throws(WebAuthnError) {
        guard ConstantTime.equals(data.rpIDHash, HashFunction.sha256.hash(Array(rpID.utf8))) else {
            throw WebAuthnError(.rpIDMismatch, "rpIdHash is not SHA-256 of the RP ID")
        }
        if !conditional {
            guard data.userPresent else { throw WebAuthnError(.userNotPresent, "the UP flag is clear") }
            if userVerification == .required {
                guard data.userVerified else { throw WebAuthnError(.userNotVerified, "the UV flag is clear") }
            }
        }
        guard data.backupEligible || !data.backedUp else {
            throw WebAuthnError(.invalidBackupState, "BS is set without BE")
        }
    }
}
