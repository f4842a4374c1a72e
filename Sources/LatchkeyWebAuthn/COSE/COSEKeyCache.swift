import Synchronization

/// Parsed keys of recently used credentials, by their COSE bytes.
///
/// Turning a stored COSE key into a key OpenSSL can verify with costs about as much as the
/// verification itself; a credential signs in again and again, so its key is parsed once and
/// kept (with its reusable verification contexts). Bounded: when full it starts again empty.
package final class COSEKeyCache: Sendable {
    private let keys = Mutex<[[UInt8]: COSEKey]>([:])
    private let capacity: Int

    /// - Parameter capacity: The most keys kept.
    package init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// The key these COSE bytes encode, parsed now or earlier.
    ///
    /// - Throws: What ``COSEKey/init(bytes:)`` throws; a refused key is not kept.
    package func key(for bytes: [UInt8]) throws(WebAuthnError) -> COSEKey {
        if let key = keys.withLock({ $0[bytes] }) { return key }
        let key = try COSEKey(bytes: bytes)
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[bytes] = key
        }
        return key
    }
}
