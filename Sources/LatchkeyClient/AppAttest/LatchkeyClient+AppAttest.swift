import Foundation
import LatchkeyWire

/// App Attest (docs/reference.md "App Attest"): attest a key once, then earn app check tokens with
/// assertions. Each call asks the server for a fresh challenge and passes SHA-256 of its bytes as
/// the `clientDataHash`. (With ``LatchkeyConfiguration/appAttest`` set, the client does this
/// itself for its sign-in and token calls.)
extension LatchkeyClient {
    /// Makes an App Attest key and has the server verify Apple's attestation of it.
    ///
    /// Keep the returned key id (in the Keychain, say) and pass it to
    /// ``appCheckToken(keyID:using:)`` from then on: a key is attested once, and the server
    /// refuses a second attestation of it.
    ///
    /// - Returns: The key id.
    /// - Throws: ``LatchkeyError``: `invalid_grant` with the server's `reason` when the attestation
    ///   is refused; what `keys` throws (DeviceCheck's `DCError`) as it is.
    public func attestAppKey(using keys: some AppAttestKeys) async throws -> String {
        do {
            return try await api.attestAppKey(using: keys)
        } catch let failure as ServerAPI.Failure {
            throw failure.error
        }
    }

    /// An app check token earned by an assertion of the attested key `keyID`.
    ///
    /// - Throws: ``LatchkeyError``: `invalid_grant` with `reason` `unknown_key` (attest a new key),
    ///   `counter_mismatch` or another refusal of the assertion.
    public func appCheckToken(keyID: String, using keys: some AppAttestKeys) async throws -> AppCheckToken {
        do {
            return try await api.appCheckToken(keyID: keyID, using: keys)
        } catch let failure as ServerAPI.Failure {
            throw failure.error
        }
    }
}
