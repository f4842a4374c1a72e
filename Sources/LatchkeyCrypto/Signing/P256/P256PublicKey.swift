internal import CLatchkeyOpenSSL
package import FoundationEssentials

extension P256.Signing {
    /// A P-256 public key for verifying ECDSA-SHA256 signatures.
    ///
    /// Every initialiser checks that the point is on the curve, with coordinates below the field
    /// prime; only uncompressed points are accepted (what Apple, JWK and OpenSSL produce).
    /// Two keys are equal when their points are.
    package final class PublicKey: Sendable, Hashable {
        /// 04‖X‖Y.
        private let point: [UInt8]
        private let key: EVPKey
        private let verifiers: OperationContextPool

        /// Reads an uncompressed point in ANSI X9.63 form.
        ///
        /// This is what `SecKeyCopyExternalRepresentation` returns for a P-256 public key.
        ///
        /// - Parameter x963Representation: 65 bytes: 0x04, X, Y.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` for another length or
        ///   prefix (compressed points included) or a point not on the curve.
        package convenience init(x963Representation: some ContiguousBytes) throws {
            let point = x963Representation.byteArray
            guard point.count == 65, point[0] == 0x04 else {
                throw CryptoError.malformedKey("a P-256 X9.63 public key is 65 bytes starting with 04")
            }
            try self.init(checkedPoint: point)
        }

        /// Reads a point given as X‖Y.
        ///
        /// - Parameter rawRepresentation: 64 bytes: X then Y, big-endian.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` for another length or a point
        ///   not on the curve.
        package convenience init(rawRepresentation: some ContiguousBytes) throws {
            let raw = rawRepresentation.byteArray
            guard raw.count == 64 else {
                throw CryptoError.malformedKey("a raw P-256 public key is 64 bytes")
            }
            try self.init(checkedPoint: [0x04] + raw)
        }

        /// Reads a point from its coordinates, as a JWK carries them (RFC 7518 §6.2.1).
        ///
        /// - Parameters:
        ///   - x: The X coordinate, exactly 32 bytes (RFC 7518 §6.2.1.2 requires the full size).
        ///   - y: The Y coordinate, exactly 32 bytes.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` for other lengths or a point
        ///   not on the curve.
        package convenience init(x: some ContiguousBytes, y: some ContiguousBytes) throws {
            let x = x.byteArray
            let y = y.byteArray
            guard x.count == P256.coordinateByteCount, y.count == P256.coordinateByteCount else {
                throw CryptoError.malformedKey("P-256 coordinates are 32 bytes each")
            }
            try self.init(checkedPoint: [0x04] + x + y)
        }

        /// Reads a DER SubjectPublicKeyInfo (RFC 5480).
        ///
        /// The algorithm must be id-ecPublicKey with the named curve secp256r1 and the point
        /// uncompressed; explicit curve parameters are refused.
        ///
        /// - Parameter derRepresentation: The DER bytes, with nothing after them.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` for anything else.
        package convenience init(derRepresentation: some ContiguousBytes) throws {
            let der = derRepresentation.byteArray
            let prefix = P256.subjectPublicKeyInfoPrefix
            guard der.count == prefix.count + 65, der.starts(with: prefix) else {
                throw CryptoError.malformedKey(
                    "not a DER SubjectPublicKeyInfo holding an uncompressed P-256 point")
            }
            try self.init(x963Representation: der[prefix.count...])
        }

        /// Reads a PEM `PUBLIC KEY` block (a SubjectPublicKeyInfo).
        ///
        /// - Parameter pemRepresentation: Text containing `-----BEGIN PUBLIC KEY-----`.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when there is no such block
        ///   or it does not hold a P-256 key.
        package convenience init(pemRepresentation: String) throws {
            guard let (_, der) = PEM.decode(pemRepresentation, labels: ["PUBLIC KEY"]) else {
                throw CryptoError.malformedKey("no PEM PUBLIC KEY block")
            }
            try self.init(derRepresentation: der)
        }

        /// Builds the key from 04‖X‖Y after range-checking the coordinates.
        private init(checkedPoint point: [UInt8]) throws {
            let x = point[1...32]
            let y = point[33...64]
            guard P256.isLess(x, than: P256.fieldPrime), P256.isLess(y, than: P256.fieldPrime) else {
                throw CryptoError.malformedKey("a P-256 coordinate is not below the field prime")
            }
            let key = try point.withUnsafeBytes { pointBuffer in
                var parameters = [
                    Param.utf8(ParamName.groupName, "prime256v1"),
                    Param.octets(ParamName.publicKey, pointBuffer),
                    Param.end(),
                ]
                // EVP_PKEY_fromdata decodes with EC_POINT_oct2point, which rejects points off
                // the curve.
                return try EVPKey.fromData(
                    type: "EC", selection: KeySelection.publicKey, parameters: &parameters, code: .malformedKey)
            }
            try Self.checkPublicKey(key)
            self.point = point
            self.key = key
            self.verifiers = OperationContextPool(key: key, operation: "ECDSA verify") { context in
                EVP_PKEY_verify_init(context) == 1
                    && EVP_PKEY_CTX_set_signature_md(context, Algorithms.sha256.pointer) == 1
            }
        }

        /// A second, independent check that the point is on the curve and not at infinity.
        private static func checkPublicKey(_ key: EVPKey) throws {
            OpenSSLErrors.clear()
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
                throw CryptoError.openSSL(.library, "EVP_PKEY_CTX_new_from_pkey")
            }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_public_check_quick(context) == 1 else {
                throw CryptoError.openSSL(.malformedKey, "EVP_PKEY_public_check_quick")
            }
        }

        /// 04‖X‖Y, 65 bytes.
        package var x963Representation: [UInt8] { point }

        /// X‖Y, 64 bytes.
        package var rawRepresentation: [UInt8] { Array(point[1...]) }

        /// The X coordinate, 32 bytes (JWK `x`).
        package var x: [UInt8] { Array(point[1...32]) }

        /// The Y coordinate, 32 bytes (JWK `y`).
        package var y: [UInt8] { Array(point[33...64]) }

        /// The DER SubjectPublicKeyInfo, 91 bytes.
        package var derRepresentation: [UInt8] { P256.subjectPublicKeyInfoPrefix + point }

        /// The PEM `PUBLIC KEY` block, lines ending in "\n".
        package var pemRepresentation: String {
            PEM.encode(label: "PUBLIC KEY", der: derRepresentation)
        }

        /// Checks an ECDSA signature over the SHA-256 of `data` (JWS `ES256`).
        ///
        /// - Parameters:
        ///   - signature: The signature.
        ///   - data: The signed bytes; they are hashed here.
        /// - Returns: Whether the signature is valid. Both (r, s) and (r, n − s) are valid.
        package func isValidSignature(_ signature: ECDSASignature, for data: some ContiguousBytes) -> Bool {
            let digest = data.withUnsafeBytes { HashFunction.sha256.digest($0) }
            return isValidSignature(signature, digest: digest)
        }

        /// Checks a signature over a SHA-256 digest computed by the caller.
        ///
        /// For a caller that keeps only the SHA-256 of what was signed, as Latchkey keeps device
        /// challenges (docs/security.md S7, S16).
        ///
        /// - Parameters:
        ///   - signature: The signature.
        ///   - digest: The SHA-256 of the signed bytes, 32 bytes.
        /// - Returns: Whether the signature is valid; false for a digest of another length.
        package func isValidSignature(_ signature: ECDSASignature, digest: [UInt8]) -> Bool {
            guard digest.count == HashFunction.sha256.byteCount else { return false }
            let der = signature.derRepresentation
            let valid = try? verifiers.withContext { context in
                OpenSSLErrors.clear()
                let result = EVP_PKEY_verify(context, der, der.count, digest, digest.count)
                // A failed check leaves reasons in the queue; "no" is an answer, not an error.
                OpenSSLErrors.clear()
                return result == 1
            }
            return valid ?? false
        }

        /// Compares the points.
        ///
        /// - Parameters:
        ///   - lhs: A key.
        ///   - rhs: Another key.
        /// - Returns: Whether both are the same point.
        package static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.point == rhs.point
        }

        /// Hashes the point.
        ///
        /// - Parameter hasher: The hasher to feed.
        package func hash(into hasher: inout Hasher) {
            hasher.combine(point)
        }
    }
}
