#if canImport(Security)
import Foundation
public import Security

/// The session in the Keychain: one generic-password item holding the ``StoredSession``.
///
/// The item is readable from the first unlock after a restart by default
/// (``KeychainAccessibility/afterFirstUnlockThisDeviceOnly``), so background refresh and
/// prewarmed launches work, and it never leaves the device in a backup. A read while the device
/// is still locked (`errSecInteractionNotAllowed`) throws ``LatchkeyError/Code/keychainLocked``,
/// which the client treats as "try later", never as a sign-out. An app and its extensions share
/// the session through a Keychain access group (the Keychain Sharing entitlement).
public struct KeychainCredentialStore: CredentialStore {
    /// The item's service (`kSecAttrService`).
    public let service: String
    /// The item's account (`kSecAttrAccount`).
    public let account: String
    /// The Keychain access group shared with the app's extensions (`kSecAttrAccessGroup`), or
    /// `nil` for the app's default group.
    public let accessGroup: String?
    /// When the item can be read (`kSecAttrAccessible`).
    public let accessibility: KeychainAccessibility
    /// What the user must do before each read (`kSecAttrAccessControl`), or `nil` for nothing.
    /// With `.biometryCurrentSet`, `.biometryAny` or `.userPresence` every read shows a prompt,
    /// so background refresh cannot read the session: use it for apps that want exactly that. It
    /// is set when the item is first written; a later change applies after ``delete()``.
    public let accessControl: SecAccessControlCreateFlags?

    /// A store for one session.
    ///
    /// - Parameters:
    ///   - service: the item's service; the default names the SDK.
    ///   - account: the item's account, to keep several sessions apart.
    ///   - accessibility: when the item can be read (default: after the first unlock, this device only).
    ///   - accessGroup: the Keychain access group to share with extensions (`TEAMID.com.example.shared`).
    ///   - accessControl: flags for `SecAccessControlCreateWithFlags`, e.g. `.biometryCurrentSet`.
    public init(
        service: String = "dev.latchkey.session", account: String = "default",
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly, accessGroup: String? = nil,
        accessControl: SecAccessControlCreateFlags? = nil
    ) {
        self.service = service
        self.account = account
        self.accessibility = accessibility
        self.accessGroup = accessGroup
        self.accessControl = accessControl
    }

    public func load() throws -> StoredSession? {
        var query = itemQuery()
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw LatchkeyError(KeychainError(.read, status)) }
        guard let data = result as? Data else {
            throw LatchkeyError(.storage, "the Keychain item holds no data")
        }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            throw LatchkeyError(.storage, "the Keychain item is not a stored session")
        }
    }

    public func save(_ session: StoredSession) throws {
        let data: Data
        do {
            data = try JSONEncoder().encode(session)
        } catch {
            throw LatchkeyError(.storage, "the session cannot be encoded")
        }
        let protection = try protectionAttributes()
        var item = itemQuery()
        item[kSecValueData as String] = data
        item.merge(protection) { _, new in new }
        let added = SecItemAdd(item as CFDictionary, nil)
        if added == errSecSuccess { return }
        guard added == errSecDuplicateItem else { throw LatchkeyError(KeychainError(.add, added)) }
        // Update on duplicate: the data, and the accessibility when there is no access control.
        // An item's access control is fixed when it is added (delete() first to change it).
        var changes: [String: Any] = [kSecValueData as String: data]
        if accessControl == nil { changes[kSecAttrAccessible as String] = accessibility.attribute }
        let updated = SecItemUpdate(itemQuery() as CFDictionary, changes as CFDictionary)
        guard updated == errSecSuccess else { throw LatchkeyError(KeychainError(.update, updated)) }
    }

    public func delete() throws {
        let status = SecItemDelete(itemQuery() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw LatchkeyError(KeychainError(.delete, status))
        }
    }

    /// What finds the item: class, service, account, access group, and the data-protection
    /// Keychain on macOS (where `kSecAttrAccessible` means what it means on iOS).
    private func itemQuery() -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// `kSecAttrAccessControl` when flags were given (it carries the accessibility itself), else
    /// `kSecAttrAccessible`.
    private func protectionAttributes() throws -> [String: Any] {
        guard let accessControl else { return [kSecAttrAccessible as String: accessibility.attribute] }
        var error: Unmanaged<CFError>?
        guard let control = SecAccessControlCreateWithFlags(nil, accessibility.attribute, accessControl, &error) else {
            let reason = error.map { String(describing: $0.takeRetainedValue()) } ?? "no reason given"
            throw LatchkeyError(.keychainMisconfigured, "the access control cannot be created: \(reason)")
        }
        return [kSecAttrAccessControl as String: control]
    }
}

/// When a Keychain item can be read: the `kSecAttrAccessible` values that make sense for a session.
public enum KeychainAccessibility: Sendable, Hashable {
    /// From the first unlock after a restart until the next restart; never in a backup. The
    /// default: background refresh and prewarmed launches can read it.
    case afterFirstUnlockThisDeviceOnly
    /// As ``afterFirstUnlockThisDeviceOnly``, but restored from an encrypted backup to a new device.
    case afterFirstUnlock
    /// Only while the device is unlocked; never in a backup. Background refresh fails while locked.
    case whenUnlockedThisDeviceOnly
    /// Only while the device is unlocked; restored from an encrypted backup.
    case whenUnlocked
    /// Only while unlocked, only while a passcode is set (the item goes when it is removed).
    case whenPasscodeSetThisDeviceOnly

    var attribute: CFString {
        switch self {
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        }
    }
}
#endif
