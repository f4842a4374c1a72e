internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// HKDF, the HMAC-based extract-and-expand key derivation function (RFC 5869).
package enum HKDF {
    /// OpenSSL 3.0.19's HKDF refuses longer `info` (`HKDF_MAXINFO`, measured: 32768 works,
    /// 32769 fails); checking here turns that into a clear parameter error.
    static let maximumInfoByteCount = 32768

    /// Derives key material: extract with `salt`, then expand with `info` (RFC 5869 §2).
    ///
    /// - Parameters:
    ///   - inputKeyMaterial: The secret input (IKM).
    ///   - salt: The salt; empty means HashLen zero bytes (RFC 5869 §2.2).
    ///   - info: Context and application information, at most 32768 bytes.
    ///   - outputByteCount: L, from 1 to 255 × `hash.byteCount` (RFC 5869 §2.3).
    ///   - hash: The hash function; SHA-256 by default.
    /// - Returns: `outputByteCount` bytes of output keying material.
    /// - Throws: ``CryptoError/Code-swift.struct/invalidParameter`` when `outputByteCount` or
    ///   the length of `info` is out of range; ``CryptoError/Code-swift.struct/library`` when
    ///   OpenSSL fails.
    package static func deriveKey(
        inputKeyMaterial: some ContiguousBytes, salt: some ContiguousBytes, info: some ContiguousBytes,
        outputByteCount: Int, using hash: HashFunction = .sha256
    ) throws -> [UInt8] {
        guard outputByteCount >= 1, outputByteCount <= 255 * hash.byteCount else {
            throw CryptoError.invalidParameter("HKDF output length must be 1 to 255 × the hash length")
        }
        return try inputKeyMaterial.withNonNullBytes { ikm in
            try salt.withNonNullBytes { salt in
                try info.withNonNullBytes { info in
                    guard info.count <= maximumInfoByteCount else {
                        throw CryptoError.invalidParameter("HKDF info is limited to 32768 bytes")
                    }
                    return try derive(ikm: ikm, salt: salt, info: info, count: outputByteCount, hash: hash)
                }
            }
        }
    }

    private static func derive(
        ikm: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        count: Int, hash: HashFunction
    ) throws -> [UInt8] {
        OpenSSLErrors.clear()
        guard let context = EVP_KDF_CTX_new(Algorithms.hkdf.pointer) else {
            throw CryptoError.openSSL(.library, "EVP_KDF_CTX_new")
        }
        defer { EVP_KDF_CTX_free(context) }
        var parameters = [
            Param.utf8(ParamName.digest, hash.openSSLName),
            Param.octets(ParamName.key, ikm),
            Param.octets(ParamName.salt, salt),
            Param.octets(ParamName.info, info),
            Param.end(),
        ]
        return try [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            guard EVP_KDF_derive(context, output.baseAddress, count, &parameters) == 1 else {
                throw CryptoError.openSSL(.library, "EVP_KDF_derive")
            }
            initialized = count
        }
    }
}
