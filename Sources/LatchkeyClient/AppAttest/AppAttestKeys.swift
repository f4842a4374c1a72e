public import Foundation

/// What App Attest does on a device: make a key in the Secure Enclave, have Apple attest it, and
/// sign assertions with it, each over a `clientDataHash`.
///
/// ``DeviceCheckAppAttestKeys`` is `DCAppAttestService`'s, on iOS, macOS, tvOS and watchOS; tests
/// on Linux pass a software stand-in that builds attestation objects with a test root.
public protocol AppAttestKeys: Sendable {
    /// A new key; its identifier is SHA-256 of its public key, base64.
    func generateKey() async throws -> String
    /// Apple's attestation object of the key over `clientDataHash`.
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion (`{signature, authenticatorData}`, CBOR) by the key over `clientDataHash`.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// An app check token: proof, for `X-Latchkey-App-Check` and the app's own backend, that the
/// genuine app asked a moment ago (docs/reference.md "App Attest").
public struct AppCheckToken: Sendable, Hashable {
    /// The ES256 JWT, `typ: app-check+jwt`.
    public var token: String
    /// When it stops being accepted.
    public var expiresAt: Date
}
