#if canImport(LocalAuthentication) && canImport(Security) && !os(tvOS) && !os(watchOS)
public import Foundation
import LocalAuthentication
import Security

/// A device key held by LocalAuthentication's right store (`LAPersistedRight`): the system keeps
/// the private key, and it can sign only while the right is authorized, so each signature asks
/// for the right's requirement (Face ID / Touch ID) first. Conforms to ``DeviceKey`` for
/// ``LatchkeyClient/registerDeviceKey(_:label:)``, ``LatchkeyClient/stepUp(with:)`` and MFA.
@available(iOS 16.0, macOS 13.0, *)
public struct PersistedRightDeviceKey: DeviceKey {
    /// What a new right asks for before its key may sign.
    public enum Requirement: Sendable, Hashable {
        /// The biometry enrolled when the right was saved; a new enrolment invalidates it.
        case biometryCurrentSet
        /// Any enrolled biometry.
        case biometry
        /// Biometry, or the device passcode when biometry fails or is unavailable.
        case biometryOrPasscode
        /// The system default (biometry, Apple Watch or passcode).
        case `default`
    }

    /// The right's identifier in `LARightStore.shared`.
    public let identifier: String
    /// The reason shown in the prompt before each signature.
    public let localizedReason: String

    /// The key of the right already saved under `identifier`.
    public init(identifier: String, localizedReason: String) {
        self.identifier = identifier
        self.localizedReason = localizedReason
    }

    /// Saves a new right under `identifier` (replacing none: remove an old one first), which
    /// creates its key.
    ///
    /// - Throws: LocalAuthentication's error (biometry not enrolled, an identifier in use, …).
    public static func create(
        identifier: String, requirement: Requirement = .biometryCurrentSet, localizedReason: String
    ) async throws -> PersistedRightDeviceKey {
        let right = LARight(requirement: requirement.authenticationRequirement)
        _ = try await LARightStore.shared.saveRight(right, identifier: identifier)
        return PersistedRightDeviceKey(identifier: identifier, localizedReason: localizedReason)
    }

    /// The public key's bytes as LocalAuthentication exports them (for a P-256 key, uncompressed
    /// X9.63, as `SecKeyCopyExternalRepresentation` gives). Needs no authentication.
    public func publicKeyX963() async throws -> Data {
        let right = try await LARightStore.shared.right(forIdentifier: identifier)
        return try await right.key.publicKey.bytes
    }

    /// Authorizes the right (one prompt), then signs `challenge` with its key (ECDSA over SHA-256,
    /// DER).
    ///
    /// - Throws: ``LatchkeyError`` with ``LatchkeyError/Code/canceled`` when the user dismissed
    ///   the prompt; LocalAuthentication's error otherwise.
    public func sign(_ challenge: Data) async throws -> Data {
        let right = try await LARightStore.shared.right(forIdentifier: identifier)
        do {
            try await right.authorize(localizedReason: localizedReason)
        } catch let error as LAError where error.code == .userCancel || error.code == .appCancel || error.code == .systemCancel {
            throw LatchkeyError(.canceled, "the user dismissed the prompt")
        }
        let signature = try await right.key.sign(challenge, algorithm: .ecdsaSignatureMessageX962SHA256)
        await right.deauthorize()
        return signature
    }

    /// Removes the right and its key.
    public func remove() async throws {
        try await LARightStore.shared.removeRight(forIdentifier: identifier)
    }
}

@available(iOS 16.0, macOS 13.0, *)
extension PersistedRightDeviceKey.Requirement {
    var authenticationRequirement: LAAuthenticationRequirement {
        switch self {
        case .biometryCurrentSet: .biometryCurrentSet
        case .biometry: .biometry
        case .biometryOrPasscode: .biometry(fallback: .devicePasscode)
        case .default: .default
        }
    }
}
#endif
