internal import CLatchkeyOpenSSL
package import FoundationEssentials

extension P256.Signing {
    /// A P-256 private key for ECDSA-SHA256 signatures (JWS `ES256`).
    ///
    /// Whatever the source format, the key is rebuilt from its scalar d and the public key is
    /// derived from d; a public key stored beside d in a file must match it.
    package final class PrivateKey: Sendable {
        private let key: EVPKey
        private let signers: OperationContextPool
        private let derivedPublicKey: PublicKey

        /// Generates a new key from OpenSSL's CSPRNG.
        ///
        /// Stops the process if OpenSSL cannot generate a P-256 key, which only happens when the
        /// random generator or the installation is broken.
        package convenience init() {
            do {
                let key = try EVPKey.generate(type: "EC") { context in
                    guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else {
                        throw CryptoError.openSSL(.library, "EVP_PKEY_CTX_set_group_name")
                    }
                }
                try self.init(key: key, expectedPoint: nil)
            } catch {
                fatalError("P-256 key generation failed: \(error)")
            }
        }

        /// Reads a PEM private key: PKCS#8 `PRIVATE KEY` (Apple's .p8 files, `openssl genpkey`)
        /// or SEC1 `EC PRIVATE KEY` (`openssl ecparam -genkey`).
        ///
        /// Encrypted keys are not supported. Other blocks in the text, such as `EC PARAMETERS`,
        /// are skipped.
        ///
        /// - Parameter pemRepresentation: The PEM text.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when there is no such block
        ///   or it does not hold a valid P-256 key.
        package convenience init(pemRepresentation: String) throws {
            guard let (label, der) = PEM.decode(pemRepresentation, labels: ["PRIVATE KEY", "EC PRIVATE KEY"]) else {
                throw CryptoError.malformedKey("no PEM PRIVATE KEY or EC PRIVATE KEY block")
            }
            if label == "PRIVATE KEY" {
                try self.init(derRepresentation: der)
            } else {
                guard let parsed = ECPrivateKeyDER.parse(der[...]), parsed.hasCurveParameter else {
                    throw CryptoError.malformedKey("not a SEC1 ECPrivateKey naming P-256")
                }
                try self.init(scalar: parsed.scalar, expectedPoint: parsed.publicPoint)
            }
        }

        /// Reads a DER PKCS#8 `PrivateKeyInfo` (RFC 5208) or `OneAsymmetricKey` (RFC 5958)
        /// holding an id-ecPublicKey secp256r1 key (RFC 5915 §3).
        ///
        /// - Parameter derRepresentation: The DER bytes.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when the bytes are not such a
        ///   structure, the scalar is out of range, or an included public key does not match.
        package convenience init(derRepresentation: some ContiguousBytes) throws {
            guard let parsed = ECPrivateKeyDER.parsePKCS8(derRepresentation.byteArray[...]) else {
                throw CryptoError.malformedKey("not a PKCS#8 P-256 private key")
            }
            try self.init(scalar: parsed.scalar, expectedPoint: parsed.publicPoint)
        }

        /// Reads the private scalar d (JWK `d`, RFC 7518 §6.2.2.1) and derives the public key.
        ///
        /// - Parameter rawRepresentation: d, exactly 32 bytes big-endian.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` for another length or a d that
        ///   is 0 or not below the group order.
        package convenience init(rawRepresentation: some ContiguousBytes) throws {
            try self.init(scalar: rawRepresentation.byteArray, expectedPoint: nil)
        }

        private convenience init(scalar: [UInt8], expectedPoint: [UInt8]?) throws {
            guard scalar.count == P256.coordinateByteCount else {
                throw CryptoError.malformedKey("a P-256 private key is 32 bytes")
            }
            guard !P256.isZero(scalar), P256.isLess(scalar, than: P256.order) else {
                throw CryptoError.malformedKey("a P-256 private key must be between 1 and n − 1")
            }
            // OpenSSL 3.0's EVP_PKEY_fromdata does not derive the public point from d, but its
            // SEC1 decoder does when the point is absent; so d goes in as a minimal ECPrivateKey.
            let sec1 = ECPrivateKeyDER.encode(scalar: scalar, publicPoint: nil, includeCurveParameter: true)
            OpenSSLErrors.clear()
            let decoded = sec1.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_PrivateKey_ex(EVP_PKEY_EC, nil, &cursor, buffer.count, nil, nil)
            }
            guard let decoded else {
                throw CryptoError.openSSL(.malformedKey, "d2i_PrivateKey_ex")
            }
            try self.init(key: EVPKey(taking: decoded), expectedPoint: expectedPoint)
        }

        private init(key: EVPKey, expectedPoint: [UInt8]?) throws {
            let point = try key.octetString(ParamName.publicKey, capacity: 133)
            guard point.count == 65, point[0] == 0x04 else {
                throw CryptoError.library("OpenSSL returned a P-256 public point that is not uncompressed")
            }
            if let expectedPoint, expectedPoint != point {
                throw CryptoError.malformedKey("the public key stored with the private key does not match it")
            }
            self.key = key
            self.derivedPublicKey = try PublicKey(x963Representation: point)
            self.signers = OperationContextPool(key: key, operation: "ECDSA sign") { context in
                EVP_PKEY_sign_init(context) == 1
                    && EVP_PKEY_CTX_set_signature_md(context, Algorithms.sha256.pointer) == 1
            }
        }

        /// The matching public key.
        package var publicKey: PublicKey { derivedPublicKey }

        /// The private scalar d, 32 bytes big-endian (JWK `d`).
        package var rawRepresentation: [UInt8] {
            do {
                return try key.bigNumber(ParamName.privateKey, minimumCount: P256.coordinateByteCount)
            } catch {
                fatalError("reading a P-256 private scalar failed: \(error)")
            }
        }

        /// The DER PKCS#8 `PrivateKeyInfo`, with the public key inside the ECPrivateKey, as
        /// `openssl genpkey` and CryptoKit write it.
        package var derRepresentation: [UInt8] {
            ECPrivateKeyDER.encodePKCS8(scalar: rawRepresentation, publicPoint: derivedPublicKey.x963Representation)
        }

        /// The PEM `PRIVATE KEY` block (PKCS#8), lines ending in "\n".
        package var pemRepresentation: String {
            PEM.encode(label: "PRIVATE KEY", der: derRepresentation)
        }

        /// Signs the SHA-256 of `data` with ECDSA (JWS `ES256`).
        ///
        /// Each call uses a fresh random nonce, so signing the same data twice gives different
        /// signatures.
        ///
        /// - Parameter data: The bytes to sign; they are hashed here.
        /// - Returns: The signature.
        /// - Throws: ``CryptoError/Code-swift.struct/library`` when OpenSSL fails.
        package func signature(for data: some ContiguousBytes) throws -> ECDSASignature {
            let digest = data.withUnsafeBytes { HashFunction.sha256.digest($0) }
            return try signature(digest: digest)
        }

        /// Signs a SHA-256 digest computed by the caller.
        func signature(digest: [UInt8]) throws -> ECDSASignature {
            let der = try signers.withContext { context in
                OpenSSLErrors.clear()
                // 72 bytes is the largest DER ECDSA-Sig-Value for a 256-bit order.
                var length = 72
                let buffer = try [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
                    guard EVP_PKEY_sign(context, output.baseAddress, &length, digest, digest.count) == 1,
                        length <= 72
                    else {
                        throw CryptoError.openSSL(.library, "EVP_PKEY_sign")
                    }
                    initialized = length
                }
                return buffer
            }
            do {
                return try ECDSASignature(derRepresentation: der)
            } catch {
                throw CryptoError.library("OpenSSL produced an ECDSA signature that is not strict DER")
            }
        }
    }
}
