internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// Ed25519 (RFC 8032): EdDSA over edwards25519 with SHA-512, through OpenSSL's EVP interface.
///
/// WebAuthn's COSE algorithm EdDSA (-8) uses it for the authenticators that offer it.
package enum Ed25519 {
    /// The byte count of a public key and of a private seed.
    package static let keyByteCount = 32
    /// The byte count of a signature.
    package static let signatureByteCount = 64

    /// Ed25519 signing and verification.
    package enum Signing {}
}

extension Ed25519.Signing {
    /// An Ed25519 public key for verifying signatures.
    ///
    /// The 32 bytes are the encoded point (RFC 8032 §5.1.2). OpenSSL decodes the point when it
    /// verifies, so a key whose bytes are not a point fails every verification rather than the
    /// import; the import checks the length only. Two keys are equal when their bytes are.
    package final class PublicKey: Sendable, Hashable {
        private let bytes: [UInt8]
        private let key: EVPKey

        /// Reads the 32-byte encoded point.
        ///
        /// - Parameter rawRepresentation: 32 bytes.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` for another length.
        package init(rawRepresentation: some ContiguousBytes) throws {
            let bytes = rawRepresentation.byteArray
            guard bytes.count == Ed25519.keyByteCount else {
                throw CryptoError.malformedKey("an Ed25519 public key is 32 bytes")
            }
            OpenSSLErrors.clear()
            guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, bytes, bytes.count) else {
                throw CryptoError.openSSL(.malformedKey, "EVP_PKEY_new_raw_public_key_ex")
            }
            self.bytes = bytes
            self.key = EVPKey(taking: key)
        }

        /// The 32-byte encoded point.
        package var rawRepresentation: [UInt8] { bytes }

        /// Checks an Ed25519 signature over `data` (pure Ed25519: the message is not prehashed).
        ///
        /// - Parameters:
        ///   - signature: The signature, 64 bytes.
        ///   - data: The signed bytes.
        /// - Returns: Whether the signature is valid; false for another length. OpenSSL refuses
        ///   a non-canonical S (S ≥ L), so a signature has one valid form.
        package func isValidSignature(_ signature: some ContiguousBytes, for data: some ContiguousBytes) -> Bool {
            let signature = signature.byteArray
            guard signature.count == Ed25519.signatureByteCount else { return false }
            OpenSSLErrors.clear()
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit_ex(context, nil, nil, nil, nil, key.pointer, nil) == 1 else {
                OpenSSLErrors.clear()
                return false
            }
            let result = data.withNonNullBytes { message in
                EVP_DigestVerify(context, signature, signature.count, message.bytePointer, message.count)
            }
            // A failed check leaves reasons in the queue; "no" is an answer, not an error.
            OpenSSLErrors.clear()
            return result == 1
        }

        /// Compares the encoded points.
        ///
        /// - Parameters:
        ///   - lhs: A key.
        ///   - rhs: Another key.
        /// - Returns: Whether both are the same bytes.
        package static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.bytes == rhs.bytes }

        /// Hashes the encoded point.
        ///
        /// - Parameter hasher: The hasher to feed.
        package func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    }

    /// An Ed25519 private key (its 32-byte seed), for signing.
    ///
    /// Latchkey itself never signs with Ed25519; the tests' software authenticator does.
    package final class PrivateKey: Sendable {
        private let key: EVPKey
        /// The public half.
        package let publicKey: PublicKey

        /// Generates a new key from OpenSSL's random generator.
        ///
        /// - Throws: ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
        package init() throws {
            let key = try EVPKey.generate(type: "ED25519") { _ in }
            var length = Ed25519.keyByteCount
            var raw = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_get_raw_public_key(key.pointer, &raw, &length) == 1, length == Ed25519.keyByteCount else {
                throw CryptoError.openSSL(.library, "EVP_PKEY_get_raw_public_key")
            }
            self.key = key
            self.publicKey = try PublicKey(rawRepresentation: raw)
        }

        /// Signs `data` (pure Ed25519).
        ///
        /// - Parameter data: The bytes to sign.
        /// - Returns: The 64-byte signature.
        /// - Throws: ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
        package func signature(for data: some ContiguousBytes) throws -> [UInt8] {
            OpenSSLErrors.clear()
            guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL(.library, "EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit_ex(context, nil, nil, nil, nil, key.pointer, nil) == 1 else {
                throw CryptoError.openSSL(.library, "EVP_DigestSignInit_ex")
            }
            var length = Ed25519.signatureByteCount
            var signature = [UInt8](repeating: 0, count: length)
            let result = data.withNonNullBytes { message in
                EVP_DigestSign(context, &signature, &length, message.bytePointer, message.count)
            }
            guard result == 1, length == Ed25519.signatureByteCount else {
                throw CryptoError.openSSL(.library, "EVP_DigestSign")
            }
            return signature
        }
    }
}
