public import Foundation

/// Who else may refresh the same session.
public enum RefreshCoordination: Sendable {
    /// Only this process uses the store: one refresh at a time among this client's callers.
    case inProcess
    /// Several processes share the store (an app and its extensions, through a Keychain access
    /// group or a file): a refresh takes an exclusive lock on `lockFile`, re-reads the store, and
    /// presents the refresh token only if it is still the one that was due; otherwise it adopts
    /// the session a sibling stored.
    case shared(lockFile: URL)
}
