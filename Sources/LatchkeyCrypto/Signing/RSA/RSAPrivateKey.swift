internal import CLatchkeyOpenSSL
package import FoundationEssentials

extension RSA.Signing {
    /// An RSA private key for signing; used by the local Apple sandbox and by tests.
    ///
    /// Only two-prime keys are supported. The public half follows the ``PublicKey`` import
    /// policy.
    package final class PrivateKey: Sendable {
        private let key: EVPKey
        private let derivedPublicKey: PublicKey
        /// One pool per (padding, hash), indexed by `RSA.Signing.poolIndex`.
        private let signers: [OperationContextPool]

        /// Generates a key with public exponent 65537.
        ///
        /// - Parameter keySize: The modulus size in bits, 2048 to 16384 and a multiple of 8.
        /// - Throws: ``CryptoError/Code-swift.struct/invalidParameter`` for another size,
        ///   ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
        package convenience init(keySize: Int = 2048) throws {
            guard keySize >= Policy.minimumModulusBits, keySize <= Policy.maximumModulusBits, keySize % 8 == 0 else {
                throw CryptoError.invalidParameter("RSA key size must be a multiple of 8 from 2048 to 16384 bits")
            }
            let key = try EVPKey.generate(type: "RSA") { context in
                guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(keySize)) == 1 else {
                    throw CryptoError.openSSL(.library, "EVP_PKEY_CTX_set_rsa_keygen_bits")
                }
            }
            try self.init(key: key)
        }

        /// Reads a PEM private key: PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`.
        ///
        /// Encrypted keys are not supported. The key is checked by signing and verifying a test
        /// message, so inconsistent components are refused rather than producing bad signatures.
        ///
        /// - Parameter pemRepresentation: The PEM text.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when there is no such block,
        ///   it does not hold a two-prime RSA key, the key is inconsistent, or its public half
        ///   breaks the import policy.
        package convenience init(pemRepresentation: String) throws {
            guard let (label, der) = PEM.decode(pemRepresentation, labels: ["PRIVATE KEY", "RSA PRIVATE KEY"]) else {
                throw CryptoError.malformedKey("no PEM PRIVATE KEY or RSA PRIVATE KEY block")
            }
            let components = label == "PRIVATE KEY" ? RSAKeyDER.parsePKCS8(der[...]) : RSAKeyDER.parsePrivateKey(der[...])
            guard let components else {
                throw CryptoError.malformedKey("the PEM \(label) block does not hold a two-prime RSA key")
            }
            // Applies the public-key policy before OpenSSL sees the numbers.
            _ = try PublicKey(modulus: components[0], exponent: components[1])
            let key = try EVPKey.fromBigNumbers(
                type: "RSA", selection: KeySelection.keyPair,
                numbers: Array(zip(RSAKeyDER.privateComponentNames, components)), code: .malformedKey)
            try self.init(key: key)
            try checkConsistency()
        }

        private init(key: EVPKey) throws {
            let modulus = try key.bigNumber(ParamName.rsaN)
            let exponent = try key.bigNumber(ParamName.rsaE)
            self.key = key
            self.derivedPublicKey = try PublicKey(modulus: modulus, exponent: exponent)
            self.signers = RSA.Signing.configurations.map { padding, hash in
                OperationContextPool(key: key, operation: "RSA sign") { context in
                    EVP_PKEY_sign_init(context) == 1 && RSA.Signing.configure(context, padding: padding, hash: hash)
                }
            }
        }

        /// A pairwise consistency test: a signature must verify with the public half.
        private func checkConsistency() throws {
            let message = Array("Latchkey RSA key check".utf8)
            let signature: [UInt8]
            do {
                signature = try self.signature(for: message, padding: .pkcs1v1_5)
            } catch {
                throw CryptoError.malformedKey("the RSA private key cannot sign")
            }
            guard derivedPublicKey.isValidSignature(signature, for: message, padding: .pkcs1v1_5) else {
                throw CryptoError.malformedKey("the RSA private key's components do not belong together")
            }
        }

        /// The matching public key.
        package var publicKey: PublicKey { derivedPublicKey }

        /// The PEM `PRIVATE KEY` block (PKCS#8), lines ending in "\n".
        package var pemRepresentation: String {
            do {
                let components = try RSAKeyDER.privateComponentNames.map { try key.bigNumber($0) }
                return PEM.encode(label: "PRIVATE KEY", der: RSAKeyDER.encodePKCS8(components: components))
            } catch {
                fatalError("reading RSA key components failed: \(error)")
            }
        }

        /// Signs `data`.
        ///
        /// - Parameters:
        ///   - data: The bytes to sign; they are hashed here.
        ///   - padding: The signature scheme.
        ///   - hash: The hash function; SHA-256 by default.
        /// - Returns: The signature, as long as the modulus.
        /// - Throws: ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
        package func signature(
            for data: some ContiguousBytes, padding: Padding, hash: HashFunction = .sha256
        ) throws -> [UInt8] {
            let digest = data.withUnsafeBytes { hash.digest($0) }
            let capacity = derivedPublicKey.modulus.count
            return try signers[RSA.Signing.poolIndex(padding, hash)].withContext { context in
                OpenSSLErrors.clear()
                var length = capacity
                return try [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
                    guard EVP_PKEY_sign(context, output.baseAddress, &length, digest, digest.count) == 1,
                        length == capacity
                    else {
                        throw CryptoError.openSSL(.library, "EVP_PKEY_sign")
                    }
                    initialized = length
                }
            }
        }
    }
}
