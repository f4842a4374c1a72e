import FoundationEssentials
import LatchkeyWebAuthn

extension Configuration.Passkeys {
    /// How registration treats attestation statements under these settings (WebAuthn §7.1
    /// steps 21–24; docs/security.md S34).
    ///
    /// `none`: every statement is accepted as `none`, unverified. `direct`: the statement is
    /// verified for its format, and `packed` (with `x5c`), `apple` and `fido-u2f` chains must
    /// lead to one of `passkeys.attestation_roots`; every root is trusted for all three formats.
    /// A `none` statement is still accepted (synced passkeys never attest), and stored as such.
    ///
    /// - Parameter now: The time certificate validity is checked at: the server's clock.
    func attestationPolicy(at now: Date) -> AttestationPolicy {
        guard attestation == "direct" else { return .none }
        let roots = attestationRootCertificates.map(\.certificate)
        return .direct(AttestationTrust(roots: [.packed: roots, .apple: roots, .fidoU2F: roots], verificationTime: now))
    }
}

extension AttestationType {
    /// The value of a passkey's `attestation` column: `none`, `self` (a `packed` statement
    /// signed by the credential key itself, which proves nothing about the model) or `verified`
    /// (a chain to a configured root).
    var storedValue: String {
        switch self {
        case .none: "none"
        case .selfAttestation: "self"
        case .verified: "verified"
        }
    }
}
