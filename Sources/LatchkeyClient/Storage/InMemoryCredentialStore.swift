import Foundation

/// A store in memory: one shared value for every client given the same instance. For tests,
/// previews and tools that must not persist a session.
public final class InMemoryCredentialStore: CredentialStore, @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`. NSLock rather than Mutex, which needs
    // iOS 18 / macOS 15 and the SDK supports iOS 16 / macOS 13.
    private let lock = NSLock()
    private var value: StoredSession?

    /// An empty store.
    public init() {}

    /// The value, `nil` when empty.
    public func load() throws -> StoredSession? {
        lock.withLock { value }
    }

    /// Replaces the value.
    public func save(_ session: StoredSession) throws {
        lock.withLock { value = session }
    }

    /// Empties the store.
    public func delete() throws {
        lock.withLock { value = nil }
    }
}
