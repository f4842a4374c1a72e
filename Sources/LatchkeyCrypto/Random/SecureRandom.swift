internal import CLatchkeyOpenSSL

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`, seeded from the operating system).
package enum SecureRandom {
    /// Returns `count` random bytes.
    ///
    /// Stops the process if the CSPRNG fails: continuing with predictable keys or nonces would
    /// be worse, and a failing `RAND_bytes` means the operating system's entropy source broke.
    ///
    /// - Parameter count: How many bytes; must not be negative.
    /// - Returns: The bytes.
    package static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes(count:) needs a count of at least 0")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var offset = 0
            while offset < count {
                let chunk = min(count - offset, Int(Int32.max))
                OpenSSLErrors.clear()
                guard RAND_bytes(buffer.baseAddress! + offset, Int32(chunk)) == 1 else {
                    fatalError("RAND_bytes failed: \(OpenSSLErrors.drain())")
                }
                offset += chunk
            }
            initialized = count
        }
    }
}
