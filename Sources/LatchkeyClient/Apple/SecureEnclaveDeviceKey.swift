#if canImport(Security) && canImport(LocalAuthentication) && !os(tvOS) && !os(watchOS)
public import Foundation
import LocalAuthentication
public import Security

/// A P-256 device key that lives in the Secure Enclave and never leaves it, for
/// ``LatchkeyClient/registerDeviceKey(_:label:)``, ``LatchkeyClient/stepUp(with:)`` and MFA.
///
/// Each signature follows Apple's pattern for authorizing a key operation once: read the key's
/// access control, evaluate it for `.useKeySign` on a fresh `LAContext` (one Face ID / Touch ID
/// prompt with the reason given), then fetch the key with that context and sign, so the user is
/// not asked twice.
public struct SecureEnclaveDeviceKey: DeviceKey {
    /// The key's application tag (`kSecAttrApplicationTag`), which finds it again after a relaunch.
    public let tag: String
    /// The reason shown in the prompt before each signature.
    public let localizedReason: String

    /// The key already stored under `tag`.
    public init(tag: String, localizedReason: String) {
        self.tag = tag
        self.localizedReason = localizedReason
    }

    /// Creates a new key in the Secure Enclave under `tag`, usable only on this device while it
    /// is unlocked, and only after the user satisfies `accessControl` (default: the enrolled
    /// biometry; a new enrolment invalidates the key). A key already under `tag` is deleted
    /// first, so that the tag always finds one key.
    ///
    /// - Throws: ``LatchkeyError`` with the `CFError` Security gave (no Secure Enclave, …).
    public static func create(
        tag: String, accessControl: SecAccessControlCreateFlags = .biometryCurrentSet, localizedReason: String
    ) throws -> SecureEnclaveDeviceKey {
        try SecureEnclaveDeviceKey(tag: tag, localizedReason: localizedReason).delete()
        var error: Unmanaged<CFError>?
        guard
            let control = SecAccessControlCreateWithFlags(
                nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage, accessControl], &error)
        else {
            throw LatchkeyError(.keychainMisconfigured, "the key's access control cannot be created: \(reason(error))")
        }
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
            kSecAttrKeySizeInBits as String: 256,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            kSecPrivateKeyAttrs as String: [
                kSecAttrIsPermanent as String: true,
                kSecAttrApplicationTag as String: Data(tag.utf8),
                kSecAttrAccessControl as String: control,
            ] as [String: Any],
        ]
        guard SecKeyCreateRandomKey(attributes as CFDictionary, &error) != nil else {
            throw LatchkeyError(.storage, "the Secure Enclave key cannot be created: \(reason(error))")
        }
        return SecureEnclaveDeviceKey(tag: tag, localizedReason: localizedReason)
    }

    /// The public key, uncompressed X9.63 (`04 || x || y`), as the server registers it. Needs no
    /// authentication: only the private key is protected.
    public func publicKeyX963() async throws -> Data {
        var error: Unmanaged<CFError>?
        guard let publicKey = SecKeyCopyPublicKey(try privateKey(context: nil)),
            let bytes = SecKeyCopyExternalRepresentation(publicKey, &error)
        else {
            throw LatchkeyError(.storage, "the public key cannot be exported: \(Self.reason(error))")
        }
        return bytes as Data
    }

    /// Signs `challenge` (ECDSA over SHA-256, DER), after one authentication prompt.
    ///
    /// - Throws: ``LatchkeyError`` with ``LatchkeyError/Code/canceled`` when the user dismissed
    ///   the prompt.
    public func sign(_ challenge: Data) async throws -> Data {
        let context = LAContext()
        do {
            guard try await context.evaluateAccessControl(try accessControl(), operation: .useKeySign, localizedReason: localizedReason)
            else { throw LatchkeyError(.canceled, "the key's use was not authorized") }
        } catch let error as LAError where error.code == .userCancel || error.code == .appCancel || error.code == .systemCancel {
            throw LatchkeyError(.canceled, "the user dismissed the prompt")
        }
        let key = try privateKey(context: context)
        var error: Unmanaged<CFError>?
        guard let signature = SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, challenge as CFData, &error) else {
            throw LatchkeyError(.storage, "the Secure Enclave did not sign: \(Self.reason(error))")
        }
        return signature as Data
    }

    /// Deletes the key; deleting a key that is not there is not an error.
    public func delete() throws {
        let status = SecItemDelete(keyQuery() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw LatchkeyError(KeychainError(.delete, status)) }
    }

    private func keyQuery() -> [String: Any] {
        [
            kSecClass as String: kSecClassKey,
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            kSecAttrApplicationTag as String: Data(tag.utf8),
        ]
    }

    /// The access control the key was created with (seed 001: read it from the key's attributes).
    private func accessControl() throws -> SecAccessControl {
        var query = keyQuery()
        query[kSecReturnAttributes as String] = true
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess else { throw LatchkeyError(KeychainError(.key, status)) }
        guard let attributes = item as? [String: Any], let value = attributes[kSecAttrAccessControl as String],
            CFGetTypeID(value as AnyObject) == SecAccessControlGetTypeID()
        else {
            throw LatchkeyError(.keychainMisconfigured, "the key has no access control")
        }
        return value as AnyObject as! SecAccessControl  // the type id was checked: CF types cannot be cast with `as?`
    }

    /// The private key's reference, fetched with `context` so that an evaluated access control is
    /// not asked again.
    private func privateKey(context: LAContext?) throws -> SecKey {
        var query = keyQuery()
        query[kSecReturnRef as String] = true
        if let context { query[kSecUseAuthenticationContext as String] = context }
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess, let item, CFGetTypeID(item) == SecKeyGetTypeID() else {
            throw LatchkeyError(KeychainError(.key, status == errSecSuccess ? errSecItemNotFound : status))
        }
        return item as! SecKey  // the type id was checked: CF types cannot be cast with `as?`
    }

    private static func reason(_ error: Unmanaged<CFError>?) -> String {
        error.map { String(describing: $0.takeRetainedValue()) } ?? "no reason given"
    }
}
#endif
