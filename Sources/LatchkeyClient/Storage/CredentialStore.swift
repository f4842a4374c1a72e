/// Where the session lives: the Keychain on Apple platforms, a file or memory elsewhere.
///
/// Calls are short and synchronous. A store that cannot be read *now* (a locked Keychain) throws
/// ``LatchkeyError`` with ``LatchkeyError/Code/keychainLocked``; the client then keeps the
/// session it has rather than signing out.
public protocol CredentialStore: Sendable {
    /// The stored session, or `nil` when there is none.
    ///
    /// - Throws: ``LatchkeyError`` (``LatchkeyError/Code/keychainLocked``, ``LatchkeyError/Code/storage``, …).
    func load() throws -> StoredSession?
    /// Replaces the stored session.
    ///
    /// - Throws: ``LatchkeyError`` when it cannot be written.
    func save(_ session: StoredSession) throws
    /// Removes the stored session; deleting nothing is not an error.
    ///
    /// - Throws: ``LatchkeyError`` when it cannot be removed.
    func delete() throws
}
