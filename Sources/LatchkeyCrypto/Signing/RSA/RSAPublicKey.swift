internal import CLatchkeyOpenSSL
package import FoundationEssentials

extension RSA.Signing {
    /// An RSA public key for verifying signatures.
    ///
    /// Import policy, applied by every initialiser: the modulus is odd and has 2048 to 16384
    /// bits (RFC 7518 §3.3 requires at least 2048; Wycheproof's JWK tests expect 1024-bit keys
    /// refused), and the public exponent is odd, greater than 1 and at most 64 bits (exponent 1
    /// would make every "signature" its own message; the ceiling keeps verification cheap), and
    /// the modulus must not carry the ROCA fingerprint (``ROCAFingerprint``).
    /// Two keys are equal when modulus and exponent are.
    package final class PublicKey: Sendable, Hashable {
        /// Big-endian, without leading zeros.
        private let n: [UInt8]
        private let e: [UInt8]
        private let key: EVPKey
        /// One pool per (padding, hash), indexed by `RSA.Signing.poolIndex`.
        private let verifiers: [OperationContextPool]

        /// Builds a key from its modulus and exponent, as a JWK carries them (RFC 7518 §6.3.1).
        ///
        /// - Parameters:
        ///   - modulus: n, big-endian; leading zero bytes are ignored.
        ///   - exponent: e, big-endian; leading zero bytes are ignored.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when the key breaks the
        ///   import policy.
        package init(modulus: some ContiguousBytes, exponent: some ContiguousBytes) throws {
            let n = Array(modulus.byteArray.drop { $0 == 0 })
            let e = Array(exponent.byteArray.drop { $0 == 0 })
            let bits = RSA.Signing.bitCount(n)
            guard bits >= RSA.Signing.Policy.minimumModulusBits else {
                throw CryptoError.malformedKey("RSA modulus has \(bits) bits; at least 2048 are required")
            }
            guard bits <= RSA.Signing.Policy.maximumModulusBits else {
                throw CryptoError.malformedKey("RSA modulus has \(bits) bits; at most 16384 are supported")
            }
            guard n.last! & 1 == 1 else {
                throw CryptoError.malformedKey("RSA modulus is even")
            }
            guard let lastExponentByte = e.last, lastExponentByte & 1 == 1, e != [1] else {
                throw CryptoError.malformedKey("RSA public exponent must be odd and greater than 1")
            }
            guard RSA.Signing.bitCount(e) <= RSA.Signing.Policy.maximumExponentBits else {
                throw CryptoError.malformedKey("RSA public exponent is longer than 64 bits")
            }
            guard !ROCAFingerprint.matches(modulus: n) else {
                throw CryptoError.malformedKey("RSA modulus has the ROCA fingerprint (CVE-2017-15361): its private key can be recovered")
            }
            let key = try EVPKey.fromBigNumbers(
                type: "RSA", selection: KeySelection.publicKey,
                numbers: [(ParamName.rsaN, n), (ParamName.rsaE, e)], code: .malformedKey)
            self.n = n
            self.e = e
            self.key = key
            self.verifiers = RSA.Signing.configurations.map { padding, hash in
                OperationContextPool(key: key, operation: "RSA verify") { context in
                    EVP_PKEY_verify_init(context) == 1 && RSA.Signing.configure(context, padding: padding, hash: hash)
                }
            }
        }

        /// Reads a DER SubjectPublicKeyInfo (RFC 3279 §2.3.1) or PKCS#1 `RSAPublicKey`
        /// (RFC 8017 Appendix A.1.1).
        ///
        /// - Parameter derRepresentation: The DER bytes, with nothing after them.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when the bytes are neither
        ///   structure or the key breaks the import policy.
        package convenience init(derRepresentation: some ContiguousBytes) throws {
            let der = derRepresentation.byteArray[...]
            let parsed = RSAKeyDER.looksLikeSubjectPublicKeyInfo(der)
                ? RSAKeyDER.parseSubjectPublicKeyInfo(der) : RSAKeyDER.parsePublicKey(der)
            guard let (modulus, exponent) = parsed else {
                throw CryptoError.malformedKey("not a DER RSA SubjectPublicKeyInfo or RSAPublicKey")
            }
            try self.init(modulus: modulus, exponent: exponent)
        }

        /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) or `RSA PUBLIC KEY` (PKCS#1) block.
        ///
        /// - Parameter pemRepresentation: The PEM text.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when there is no such block,
        ///   its contents do not match its label, or the key breaks the import policy.
        package convenience init(pemRepresentation: String) throws {
            guard let (label, der) = PEM.decode(pemRepresentation, labels: ["PUBLIC KEY", "RSA PUBLIC KEY"]) else {
                throw CryptoError.malformedKey("no PEM PUBLIC KEY or RSA PUBLIC KEY block")
            }
            let parsed = label == "PUBLIC KEY"
                ? RSAKeyDER.parseSubjectPublicKeyInfo(der[...]) : RSAKeyDER.parsePublicKey(der[...])
            guard let (modulus, exponent) = parsed else {
                throw CryptoError.malformedKey("the PEM \(label) block does not hold an RSA key")
            }
            try self.init(modulus: modulus, exponent: exponent)
        }

        /// The modulus size in bits.
        package var keySizeInBits: Int { RSA.Signing.bitCount(n) }

        /// n, big-endian, without leading zeros (JWK `n`).
        package var modulus: [UInt8] { n }

        /// e, big-endian, without leading zeros (JWK `e`).
        package var exponent: [UInt8] { e }

        /// The DER SubjectPublicKeyInfo.
        package var derRepresentation: [UInt8] {
            RSAKeyDER.encodeSubjectPublicKeyInfo(modulus: n, exponent: e)
        }

        /// The PEM `PUBLIC KEY` block, lines ending in "\n".
        package var pemRepresentation: String {
            PEM.encode(label: "PUBLIC KEY", der: derRepresentation)
        }

        /// Checks a signature over `data`.
        ///
        /// The signature must be exactly as long as the modulus (RFC 8017 §8.2.2 step 1).
        ///
        /// - Parameters:
        ///   - signature: The signature bytes.
        ///   - data: The signed bytes; they are hashed here.
        ///   - padding: The signature scheme.
        ///   - hash: The hash function; SHA-256 by default.
        /// - Returns: Whether the signature is valid.
        package func isValidSignature(
            _ signature: some ContiguousBytes, for data: some ContiguousBytes, padding: Padding,
            hash: HashFunction = .sha256
        ) -> Bool {
            let digest = data.withUnsafeBytes { hash.digest($0) }
            return signature.withUnsafeBytes { signature in
                guard signature.count == n.count else { return false }
                let valid = try? verifiers[RSA.Signing.poolIndex(padding, hash)].withContext { context in
                    OpenSSLErrors.clear()
                    let result = EVP_PKEY_verify(
                        context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
                        digest, digest.count)
                    // A failed check leaves reasons in the queue; "no" is an answer, not an error.
                    OpenSSLErrors.clear()
                    return result == 1
                }
                return valid ?? false
            }
        }

        /// Compares modulus and exponent.
        ///
        /// - Parameters:
        ///   - lhs: A key.
        ///   - rhs: Another key.
        /// - Returns: Whether both are the same key.
        package static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.n == rhs.n && lhs.e == rhs.e
        }

        /// Hashes modulus and exponent.
        ///
        /// - Parameter hasher: The hasher to feed.
        package func hash(into hasher: inout Hasher) {
            hasher.combine(n)
            hasher.combine(e)
        }
    }

    /// The bit length of a big-endian number without leading zero bytes.
    static func bitCount(_ bytes: [UInt8]) -> Int {
        guard let first = bytes.first else { return 0 }
        return (bytes.count - 1) * 8 + (8 - first.leadingZeroBitCount)
    }
}
