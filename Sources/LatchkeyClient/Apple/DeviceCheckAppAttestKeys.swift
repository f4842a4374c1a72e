#if canImport(DeviceCheck)
public import Foundation
import DeviceCheck

/// ``AppAttestKeys`` on `DCAppAttestService`: keys in the Secure Enclave, attested by Apple.
///
/// App Attest needs the App Attest entitlement (`com.apple.developer.devicecheck.appattest-environment`,
/// `development` or `production`, matching the server's `app_attest.environment`) and a device
/// with a Secure Enclave; check ``isSupported`` first (the Simulator is not).
@available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, *)
public struct DeviceCheckAppAttestKeys: AppAttestKeys {
    public init() {}

    /// Whether this device can make App Attest keys.
    public var isSupported: Bool { DCAppAttestService.shared.isSupported }

    public func generateKey() async throws -> String {
        try await DCAppAttestService.shared.generateKey()
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash)
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
    }
}
#endif
