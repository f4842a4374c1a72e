import LatchkeyCrypto
import Synchronization

/// RSA keys made once per test process and handed out again.
///
/// Generating an RSA 2048 key takes about 0.3 s of CPU, and every in-process server makes two:
/// its RS256 signing key and its sandbox Apple's key. Over hundreds of servers that was a fifth
/// of the whole test run. A ``source()`` hands out the keys of one list in order, growing the
/// list when it runs out, so one server never gets the same key twice (a rotation still brings
/// a new key) while servers share keys. Sharing changes nothing a test checks: every server has
/// its own database and key ids, and the two lists keep a server's key apart from its Apple's.
final class SharedRSAKeys: Sendable {
    /// For the servers' signing-key rings.
    static let signing = SharedRSAKeys()
    /// For the sandbox Apples.
    static let apple = SharedRSAKeys()

    private let keys = Mutex<[RSA.Signing.PrivateKey]>([])

    /// Hands out this list's keys in order, from the first.
    func source() -> @Sendable () throws -> RSA.Signing.PrivateKey {
        let next = Mutex(0)
        return {
            let index = next.withLock { index in
                defer { index += 1 }
                return index
            }
            return try self.key(index)
        }
    }

    private func key(_ index: Int) throws -> RSA.Signing.PrivateKey {
        try keys.withLock { keys in
            while keys.count <= index { keys.append(try RSA.Signing.PrivateKey(keySize: 2048)) }
            return keys[index]
        }
    }
}
