import Foundation
import LatchkeyClient
import LatchkeyCrypto

/// The WWDC24 sample's device key in software: a P-256 key that exports and signs as a Secure
/// Enclave key does (X9.63 public key, DER ECDSA-SHA256). On a device the Apple glue's
/// `SecureEnclaveDeviceKey` takes its place; the SDK calls are the same.
struct SoftwareDeviceKey: DeviceKey {
    let key = P256.Signing.PrivateKey()

    func publicKeyX963() async throws -> Data { Data(key.publicKey.x963Representation) }

    func sign(_ challenge: Data) async throws -> Data { Data(try key.signature(for: challenge).derRepresentation) }
}
