internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// A SHA-2 hash function (FIPS 180-4).
package enum HashFunction: Sendable, Hashable {
    /// SHA-256, 32-byte digests.
    case sha256
    /// SHA-384, 48-byte digests.
    case sha384
    /// SHA-512, 64-byte digests.
    case sha512

    /// The length of a digest in bytes.
    package var byteCount: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// Hashes `data` in one call.
    ///
    /// - Parameter data: The bytes to hash.
    /// - Returns: The digest, ``byteCount`` bytes long.
    package func hash(_ data: some ContiguousBytes) -> [UInt8] {
        data.withUnsafeBytes { buffer in digest(buffer) }
    }

    /// Hashes `data` and writes the digest as lower-case hex, as Sign in with Apple nonces are
    /// written.
    package func hexDigest(_ data: some ContiguousBytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let digest = hash(data)
        return String(unsafeUninitializedCapacity: digest.count * 2) { buffer in
            for (index, byte) in digest.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return digest.count * 2
        }
    }

    /// The OpenSSL digest, fetched once per process.
    var algorithm: OpaquePointer {
        switch self {
        case .sha256: Algorithms.sha256.pointer
        case .sha384: Algorithms.sha384.pointer
        case .sha512: Algorithms.sha512.pointer
        }
    }

    /// The name OpenSSL's HMAC and HKDF take in their "digest" parameter.
    var openSSLName: StaticString {
        switch self {
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        }
    }

    /// Hashes raw bytes (the shared core of ``hash(_:)`` and the signature code).
    func digest(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        let count = byteCount
        return [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            OpenSSLErrors.clear()
            var length: UInt32 = 0
            // EVP_Digest only fails when memory allocation fails; there is nothing to report.
            guard EVP_Digest(buffer.baseAddress, buffer.count, output.baseAddress, &length, algorithm, nil) == 1,
                Int(length) == count
            else {
                fatalError("EVP_Digest failed: \(OpenSSLErrors.drain())")
            }
            initialized = count
        }
    }
}
