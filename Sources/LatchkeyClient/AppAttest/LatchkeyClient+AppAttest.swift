import Foundation
import LatchkeyWire

/// App Attest (docs/reference.md "App Attest"): attest a key once, then earn app check tokens with
/// assertions. Each call asks the server for a fresh challenge and passes SHA-256 of its bytes as
/// the `clientDataHash`.
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
        let keyID = try await keys.generateKey()
        let challenge = try await appAttestChallenge()
        let attestation = try await keys.attestKey(keyID, clientDataHash: challenge.hash)
        _ = try await call(
            "POST", "/v1/app-attest/keys",
            WireAppAttestKeyRequest(keyID: keyID, attestation: Base64URL.encode(attestation), challenge: challenge.text), as: WireAppAttestKey.self)
        return keyID
    }

    /// An app check token earned by an assertion of the attested key `keyID`.
    ///
    /// - Throws: ``LatchkeyError``: `invalid_grant` with `reason` `unknown_key` (attest a new key),
    ///   `counter_mismatch` or another refusal of the assertion.
    public func appCheckToken(keyID: String, using keys: some AppAttestKeys) async throws -> AppCheckToken {
        let challenge = try await appAttestChallenge()
        let assertion = try await keys.generateAssertion(keyID, clientDataHash: challenge.hash)
        let answer = try await call(
            "POST", "/v1/app-attest/assertions",
            WireAppAttestAssertionRequest(keyID: keyID, assertion: Base64URL.encode(assertion), challenge: challenge.text), as: WireAppCheckToken.self)
        return AppCheckToken(token: answer.appCheckToken, expiresAt: Date().addingTimeInterval(TimeInterval(answer.expiresIn)))
    }

    /// A fresh challenge as the server sent it, and SHA-256 of its bytes.
    private func appAttestChallenge() async throws -> (text: String, hash: Data) {
        let answer = try await call("POST", "/v1/app-attest/challenge", nil, as: WireAppAttestChallenge.self)
        guard let bytes = Base64URL.decode(answer.challenge) else {
            throw LatchkeyError(.invalidResponse, "/v1/app-attest/challenge answered a challenge that is not base64url")
        }
        return (answer.challenge, Data(SHA256.hash(Array(bytes))))
    }
}
