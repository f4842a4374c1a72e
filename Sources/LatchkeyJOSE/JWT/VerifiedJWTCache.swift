import Synchronization

/// Tokens that already passed ``JWTVerifier/verify(_:now:)`` against one key set, so that a token
/// presented again costs a dictionary lookup instead of parsing and a signature check.
///
/// An app sends the same access token with every call for the token's lifetime, and a P-256
/// signature check costs more CPU than the rest of an authenticated request. A hit skips only
/// what cannot change for the same bytes and keys: the parse and the signature. The algorithm,
/// `typ` and claims (`exp`, `aud`, …) are checked again against the caller's policy and clock.
///
/// Keys are whole compact tokens, compared in full, and only tokens that passed every check go
/// in, so nothing an attacker makes up takes room. A cache belongs to one key set: its owner
/// starts a new one when the keys change (a key that leaves the set must take its tokens with
/// it). When full it empties: tokens live minutes, and each one still in use is checked once more.
package final class VerifiedJWTCache: Sendable {
    struct Entry: Sendable {
        var jwt: VerifiedJWT
        var algorithm: JWSAlgorithm
        var type: String?
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// The most tokens it holds.
    package let capacity: Int

    /// Creates an empty cache.
    ///
    /// - Parameter capacity: The most tokens it holds before it empties.
    package init(capacity: Int = 16_384) {
        self.capacity = capacity
    }

    /// Tokens held now.
    package var count: Int { entries.withLock { $0.count } }

    func entry(for token: String) -> Entry? {
        entries.withLock { $0[token] }
    }

    func insert(_ entry: Entry, for token: String) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = entry
        }
    }
}
