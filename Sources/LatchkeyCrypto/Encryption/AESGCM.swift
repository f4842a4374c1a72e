internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// AES in Galois/Counter Mode (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
///
/// Keys may be 128, 192 or 256 bits; Latchkey uses 256. Only 12-byte nonces are accepted: other
/// lengths go through GHASH first, which weakens the uniqueness guarantees (SP 800-38D §8.2),
/// and nobody needs them. Never seal two messages with the same key and nonce; the default
/// random nonce makes that negligible for up to about 2³² messages per key.
package enum AESGCM {
    /// Bytes in a nonce.
    static let nonceByteCount = 12
    /// Bytes in a tag.
    static let tagByteCount = 16

    /// A nonce, ciphertext and authentication tag.
    package struct SealedBox: Sendable, Hashable {
        /// The 12-byte nonce.
        package private(set) var nonce: [UInt8]
        /// The encrypted bytes, as long as the plaintext.
        package private(set) var ciphertext: [UInt8]
        /// The 16-byte tag.
        package private(set) var tag: [UInt8]

        /// nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes): the form to store or send.
        package var combined: [UInt8] { nonce + ciphertext + tag }

        /// Splits a combined box.
        ///
        /// - Parameter combined: nonce ‖ ciphertext ‖ tag, at least 28 bytes.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedInput`` when shorter than 28 bytes.
        package init(combined: some ContiguousBytes) throws {
            let bytes = combined.byteArray
            guard bytes.count >= nonceByteCount + tagByteCount else {
                throw CryptoError.malformedInput("an AES-GCM sealed box is at least 28 bytes")
            }
            nonce = Array(bytes[..<nonceByteCount])
            ciphertext = Array(bytes[nonceByteCount..<(bytes.count - tagByteCount)])
            tag = Array(bytes[(bytes.count - tagByteCount)...])
        }

        /// Assembles a box from its parts.
        ///
        /// - Parameters:
        ///   - nonce: Exactly 12 bytes.
        ///   - ciphertext: The encrypted bytes.
        ///   - tag: Exactly 16 bytes.
        /// - Throws: ``CryptoError/Code-swift.struct/invalidParameter`` for other lengths.
        package init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws {
            guard nonce.count == nonceByteCount else {
                throw CryptoError.invalidParameter("AES-GCM nonces are 12 bytes")
            }
            guard tag.count == tagByteCount else {
                throw CryptoError.invalidParameter("AES-GCM tags are 16 bytes")
            }
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }
    }

    /// Encrypts and authenticates `plaintext`, and authenticates `aad`.
    ///
    /// - Parameters:
    ///   - plaintext: The bytes to encrypt.
    ///   - key: 16, 24 or 32 bytes.
    ///   - nonce: 12 bytes never used before with this key; nil picks 12 random bytes.
    ///   - aad: Additional data to authenticate but not encrypt, such as a record id.
    /// - Returns: The sealed box.
    /// - Throws: ``CryptoError/Code-swift.struct/invalidParameter`` for a bad key or nonce
    ///   length; ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
    package static func seal(
        _ plaintext: some ContiguousBytes, key: some ContiguousBytes, nonce: [UInt8]? = nil,
        authenticating aad: some ContiguousBytes = [UInt8]()
    ) throws -> SealedBox {
        let nonce = nonce ?? SecureRandom.bytes(count: nonceByteCount)
        guard nonce.count == nonceByteCount else {
            throw CryptoError.invalidParameter("AES-GCM nonces are 12 bytes")
        }
        let cipher = try cipher(forKeyByteCount: key.withUnsafeBytes { $0.count })
        let (ciphertext, tag) = try key.withUnsafeBytes { key in
            try aad.withUnsafeBytes { aad in
                try plaintext.withUnsafeBytes { plaintext in
                    let context = try CipherContext()
                    OpenSSLErrors.clear()
                    guard EVP_EncryptInit_ex2(context.pointer, cipher, key.bytePointerOrNil, nonce, nil) == 1 else {
                        throw CryptoError.openSSL(.library, "EVP_EncryptInit_ex2")
                    }
                    try context.update(aad, into: nil, encrypting: true)
                    let ciphertext = try [UInt8](unsafeUninitializedCapacity: plaintext.count) { output, initialized in
                        try context.update(plaintext, into: output.baseAddress, encrypting: true)
                        initialized = plaintext.count
                    }
                    var finalLength: Int32 = 0
                    var tag = [UInt8](repeating: 0, count: tagByteCount)
                    guard EVP_EncryptFinal_ex(context.pointer, nil, &finalLength) == 1, finalLength == 0,
                        EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagByteCount), &tag) == 1
                    else {
                        throw CryptoError.openSSL(.library, "AES-GCM encryption")
                    }
                    return (ciphertext, tag)
                }
            }
        }
        return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// Checks the tag and decrypts.
    ///
    /// - Parameters:
    ///   - box: The sealed box.
    ///   - key: The key it was sealed with.
    ///   - aad: The additional data it was sealed with.
    /// - Returns: The plaintext.
    /// - Throws: ``CryptoError/Code-swift.struct/authenticationFailure`` when the tag does not
    ///   match (wrong key, wrong data, or tampering); ``CryptoError/Code-swift.struct/invalidParameter``
    ///   for a bad key length; ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
    package static func open(
        _ box: SealedBox, key: some ContiguousBytes, authenticating aad: some ContiguousBytes = [UInt8]()
    ) throws -> [UInt8] {
        let cipher = try cipher(forKeyByteCount: key.withUnsafeBytes { $0.count })
        return try key.withUnsafeBytes { key in
            try aad.withUnsafeBytes { aad in
                try box.ciphertext.withUnsafeBytes { ciphertext in
                    let context = try CipherContext()
                    OpenSSLErrors.clear()
                    guard EVP_DecryptInit_ex2(context.pointer, cipher, key.bytePointerOrNil, box.nonce, nil) == 1 else {
                        throw CryptoError.openSSL(.library, "EVP_DecryptInit_ex2")
                    }
                    try context.update(aad, into: nil, encrypting: false)
                    var plaintext = try [UInt8](unsafeUninitializedCapacity: ciphertext.count) { output, initialized in
                        try context.update(ciphertext, into: output.baseAddress, encrypting: false)
                        initialized = ciphertext.count
                    }
                    var tag = box.tag
                    guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagByteCount), &tag) == 1 else {
                        throw CryptoError.openSSL(.library, "EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_SET_TAG)")
                    }
                    var finalLength: Int32 = 0
                    guard EVP_DecryptFinal_ex(context.pointer, nil, &finalLength) == 1, finalLength == 0 else {
                        // Unauthenticated plaintext must not leak out, even by accident.
                        plaintext.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
                        OpenSSLErrors.clear()
                        throw CryptoError.authenticationFailure("AES-GCM tag does not match")
                    }
                    return plaintext
                }
            }
        }
    }

    private static func cipher(forKeyByteCount count: Int) throws -> OpaquePointer {
        switch count {
        case 16: Algorithms.aes128GCM.pointer
        case 24: Algorithms.aes192GCM.pointer
        case 32: Algorithms.aes256GCM.pointer
        default: throw CryptoError.invalidParameter("AES keys are 16, 24 or 32 bytes")
        }
    }
}

/// An `EVP_CIPHER_CTX` for one seal or open.
private final class CipherContext {
    let pointer: OpaquePointer

    init() throws {
        OpenSSLErrors.clear()
        guard let pointer = EVP_CIPHER_CTX_new() else {
            throw CryptoError.openSSL(.library, "EVP_CIPHER_CTX_new")
        }
        self.pointer = pointer
    }

    deinit {
        EVP_CIPHER_CTX_free(pointer)
    }

    /// Feeds `input` through `EVP_EncryptUpdate`/`EVP_DecryptUpdate` in chunks that fit an
    /// `int`; with a nil `output` the input is additional authenticated data.
    func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>?, encrypting: Bool) throws {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let chunkSize = 1 << 30
        var offset = 0
        while offset < input.count {
            let count = min(chunkSize, input.count - offset)
            var written: Int32 = 0
            let destination = output.map { $0 + offset }
            let status = encrypting
                ? EVP_EncryptUpdate(pointer, destination, &written, base + offset, Int32(count))
                : EVP_DecryptUpdate(pointer, destination, &written, base + offset, Int32(count))
            // GCM is a stream mode: every input byte comes out at once.
            guard status == 1, Int(written) == count else {
                throw CryptoError.openSSL(.library, encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
            }
            offset += count
        }
    }
}
