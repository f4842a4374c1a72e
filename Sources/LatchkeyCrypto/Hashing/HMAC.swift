internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// HMAC (RFC 2104) over a SHA-2 hash function, and HMAC-SHA-1 for TOTP.
package enum HMAC {
    /// Computes an HMAC.
    ///
    /// - Parameters:
    ///   - data: The message.
    ///   - key: The key, any length (RFC 2104 §3: longer than the block size gets hashed).
    ///   - hash: The hash function; SHA-256 by default.
    /// - Returns: The authentication code, `hash.byteCount` bytes long.
    package static func authenticationCode(
        for data: some ContiguousBytes, key: some ContiguousBytes, using hash: HashFunction = .sha256
    ) -> [UInt8] {
        key.withNonNullBytes { keyBuffer in
            data.withUnsafeBytes { dataBuffer in
                compute(data: dataBuffer, key: keyBuffer, digestName: hash.openSSLName, count: hash.byteCount)
            }
        }
    }

    /// Computes an HMAC-SHA-1, 20 bytes: only for TOTP and HOTP (RFC 6238, RFC 4226), whose
    /// authenticator apps use SHA-1. HMAC-SHA-1 stays sound although SHA-1 collisions are
    /// practical (RFC 6151 §3); SHA-1 is deliberately not a ``HashFunction``, so nothing else can
    /// pick it.
    ///
    /// - Parameters:
    ///   - data: The message (for TOTP, the 8-byte big-endian time step).
    ///   - key: The key, any length.
    /// - Returns: The 20-byte authentication code.
    package static func sha1AuthenticationCode(for data: some ContiguousBytes, key: some ContiguousBytes) -> [UInt8] {
        key.withNonNullBytes { keyBuffer in
            data.withUnsafeBytes { dataBuffer in
                compute(data: dataBuffer, key: keyBuffer, digestName: "SHA1", count: 20)
            }
        }
    }

    /// Checks an HMAC in constant time.
    ///
    /// The comparison takes the same time wherever the first differing byte is, so a forger
    /// learns nothing from timing. A code of the wrong length is simply not valid.
    ///
    /// - Parameters:
    ///   - code: The code received.
    ///   - data: The message.
    ///   - key: The key.
    ///   - hash: The hash function; SHA-256 by default.
    /// - Returns: Whether `code` is the HMAC of `data` under `key`.
    package static func isValidAuthenticationCode(
        _ code: some ContiguousBytes, for data: some ContiguousBytes, key: some ContiguousBytes,
        using hash: HashFunction = .sha256
    ) -> Bool {
        ConstantTime.equals(authenticationCode(for: data, key: key, using: hash), code)
    }

    private static func compute(
        data: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, digestName: StaticString, count: Int
    ) -> [UInt8] {
        OpenSSLErrors.clear()
        // Allocation is the only way these can fail with a fetched HMAC and a SHA name.
        guard let context = EVP_MAC_CTX_new(Algorithms.hmac.pointer) else {
            fatalError("EVP_MAC_CTX_new failed: \(OpenSSLErrors.drain())")
        }
        defer { EVP_MAC_CTX_free(context) }
        var parameters = [Param.utf8(ParamName.digest, digestName), Param.end()]
        return [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            var length = 0
            guard EVP_MAC_init(context, key.bytePointer, key.count, &parameters) == 1,
                EVP_MAC_update(context, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count) == 1,
                EVP_MAC_final(context, output.baseAddress, &length, count) == 1,
                length == count
            else {
                fatalError("HMAC failed: \(OpenSSLErrors.drain())")
            }
            initialized = count
        }
    }
}
