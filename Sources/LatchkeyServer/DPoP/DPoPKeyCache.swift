import LatchkeyJOSE
import Synchronization

/// The keys of recent DPoP proofs, by their `jwk` as the header holds it (serialized sorted and
/// compact, so one key has one entry), with their RFC 7638 thumbprints.
///
/// A client signs every request with the same key, and turning a JWK into a key OpenSSL can
/// verify with costs about as much as the verification itself; so each key is read once and kept.
/// Only keys that loaded are kept (a refused `jwk` is refused again each time). Bounded: when
/// full it starts again empty.
final class DPoPKeyCache: Sendable {
    struct Entry: Sendable {
        var key: JWSVerificationKey
        var thumbprint: String
    }

    private let entries = Mutex<[[UInt8]: Entry]>([:])
    private let capacity: Int

    /// - Parameter capacity: The most keys kept.
    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// The entry for `jwk`'s serialized form, loaded now with `load` or earlier.
    func entry(for jwk: [UInt8], load: () throws(AuthError) -> Entry) throws(AuthError) -> Entry {
        if let entry = entries.withLock({ $0[jwk] }) { return entry }
        let entry = try load()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[jwk] = entry
        }
        return entry
    }
}
