public import Foundation

/// A P-256 key that proves a device: a Secure Enclave key, an `LAPersistedRight` key, or a
/// software key in tests.
public protocol DeviceKey: Sendable {
    /// The public key as the 65-byte uncompressed X9.63 point (`04 ‖ X ‖ Y`), what
    /// `SecKeyCopyExternalRepresentation` returns.
    func publicKeyX963() async throws -> Data
    /// The DER ECDSA-SHA256 signature of `challenge` (`.ecdsaSignatureMessageX962SHA256`).
    func sign(_ challenge: Data) async throws -> Data
}
