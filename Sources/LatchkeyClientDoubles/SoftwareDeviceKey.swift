package import FoundationEssentials
import LatchkeyClient
import LatchkeyCrypto

/// The WWDC24 sample's device key in software: a P-256 key that exports and signs as a Secure
/// Enclave key does (X9.63 public key, DER ECDSA-SHA256), through LatchkeyCrypto, which the SDK
/// itself never links. On a device the Apple glue's `SecureEnclaveDeviceKey` takes its place;
/// the SDK calls are the same.
package struct SoftwareDeviceKey: DeviceKey {
    let key = P256.Signing.PrivateKey()

    package init() {}

    package func publicKeyX963() async throws -> Data { Data(key.publicKey.x963Representation) }

    package func sign(_ challenge: Data) async throws -> Data { Data(try key.signature(for: challenge).derRepresentation) }
}
