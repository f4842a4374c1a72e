#if canImport(Security)
public import Security

/// A Keychain call that failed: which one, its `OSStatus`, and Security's message for it
/// (`SecCopyErrorMessageString`). Never carries the item's data.
public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The Keychain call.
    public struct Operation: Sendable, Hashable, CustomStringConvertible {
        /// Its name: `SecItemCopyMatching`, ….
        public let name: String
        /// Reading an item (`SecItemCopyMatching`).
        public static let read = Operation(name: "SecItemCopyMatching")
        /// Adding an item (`SecItemAdd`).
        public static let add = Operation(name: "SecItemAdd")
        /// Updating an item (`SecItemUpdate`).
        public static let update = Operation(name: "SecItemUpdate")
        /// Deleting an item (`SecItemDelete`).
        public static let delete = Operation(name: "SecItemDelete")
        /// Creating or finding a key (`SecKeyCreateRandomKey`, `SecItemCopyMatching` on a key).
        public static let key = Operation(name: "SecKey")
        public var description: String { name }
    }

    /// The call that failed.
    public let operation: Operation
    /// Its result code.
    public let status: OSStatus
    /// Security's text for `status`, or the number when it has none.
    public let message: String

    /// The error for `status` returned by `operation`.
    public init(_ operation: Operation, _ status: OSStatus) {
        self.operation = operation
        self.status = status
        self.message = (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
    }

    /// Whether the item exists but cannot be read now: the device has not been unlocked since it
    /// started (or is locked, for `whenUnlocked` items), as during prewarming.
    public var isLocked: Bool { status == errSecInteractionNotAllowed }

    /// Whether the app lacks the entitlement for the item's access group.
    public var isMisconfigured: Bool { status == errSecMissingEntitlement }

    /// Whether the user dismissed the prompt of an item with access control.
    public var isCanceled: Bool { status == errSecUserCanceled }

    public var description: String { "\(operation) failed: \(message) (OSStatus \(status))" }
}

extension LatchkeyError {
    /// The SDK error for a failed Keychain call: ``Code/keychainLocked`` while the device is
    /// locked (the session is kept), ``Code/keychainMisconfigured`` for a missing entitlement,
    /// ``Code/canceled`` when the user dismissed the prompt, else ``Code/storage``; the message
    /// carries the call, the `OSStatus` and Security's text for it.
    public init(_ keychain: KeychainError) {
        let code: Code
        if keychain.isLocked {
            code = .keychainLocked
        } else if keychain.isMisconfigured {
            code = .keychainMisconfigured
        } else if keychain.isCanceled {
            code = .canceled
        } else {
            code = .storage
        }
        self.init(code, keychain.description)
    }
}
#endif
