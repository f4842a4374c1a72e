internal import LatchkeyCrypto

/// A credential public key in COSE form (RFC 9052 §7, RFC 9053), as authenticator data carries
/// it and as the server stores it.
///
/// Three shapes are accepted, each with its one algorithm:
/// - kty EC2 (2), alg ES256 (−7), crv P-256 (1), x and y 32-byte byte strings, the point on
///   the curve (compressed points, with y a bool, are refused);
/// - kty OKP (1), alg EdDSA (−8), crv Ed25519 (6), x a 32-byte byte string;
/// - kty RSA (3), alg RS256 (−257), n with at least 2,048 bits, e (LatchkeyCrypto's RSA import
///   policy applies: odd modulus, odd exponent above 1, no ROCA fingerprint).
/// A key with a private member (`d`, or RSA's private parameters) is refused. Other labels are
/// ignored. The key keeps the bytes it was read from, which are what the server stores.
package struct COSEKey: Sendable {
    /// The key's algorithm.
    package let algorithm: COSEAlgorithm
    /// The CBOR encoding the key was read from.
    package let bytes: [UInt8]
    private let verifier: Verifier

    private enum Verifier: Sendable {
        case p256(P256.Signing.PublicKey)
        case ed25519(Ed25519.Signing.PublicKey)
        case rsa(RSA.Signing.PublicKey)
    }

    private enum Label {
        static let kty: Int64 = 1
        static let alg: Int64 = 3
        static let crv: Int64 = -1
        static let x: Int64 = -2
        static let y: Int64 = -3
        static let d: Int64 = -4
        static let rsaN: Int64 = -1
        static let rsaE: Int64 = -2
    }

    /// Reads a stored key: exactly one CBOR map.
    ///
    /// - Parameter bytes: The COSE key's CBOR encoding.
    /// - Throws: ``WebAuthnError`` `malformed`, `unsupported_algorithm` or `invalid_public_key`.
    package init(bytes: some Collection<UInt8>) throws(WebAuthnError) {
        let bytes = Array(bytes)
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes)
        } catch {
            throw .malformed("the COSE key is not CBOR: \(error.message)")
        }
        try self.init(value: value, bytes: bytes)
    }

    /// Reads a key already decoded, keeping `bytes` as its encoding.
    ///
    /// - Parameters:
    ///   - value: The decoded map.
    ///   - bytes: Its encoding.
    /// - Throws: ``WebAuthnError`` `malformed`, `unsupported_algorithm` or `invalid_public_key`.
    package init(value: CBORValue, bytes: [UInt8]) throws(WebAuthnError) {
        guard value.mapValue != nil else { throw .malformed("the COSE key is not a map") }
        guard let kty = value[label: Label.kty]?.integerValue else {
            throw .malformed("the COSE key has no integer kty")
        }
        guard let alg = value[label: Label.alg]?.integerValue else {
            throw .malformed("the COSE key has no integer alg")
        }
        let algorithm = COSEAlgorithm(rawValue: alg)
        switch (kty, algorithm) {
        case (2, .es256):
            guard value[label: Label.crv]?.integerValue == 1 else {
                throw WebAuthnError(.unsupportedAlgorithm, "an ES256 key must be on P-256 (crv 1)")
            }
            guard value[label: Label.d] == nil else { throw WebAuthnError(.invalidPublicKey, "the COSE key holds a private key") }
            guard let x = value[label: Label.x]?.bytesValue, let y = value[label: Label.y]?.bytesValue,
                x.count == 32, y.count == 32
            else {
                throw .malformed("an EC2 key needs x and y as 32-byte byte strings")
            }
            do {
                verifier = .p256(try P256.Signing.PublicKey(x: x, y: y))
            } catch {
                throw WebAuthnError(.invalidPublicKey, "the P-256 point is not valid")
            }
        case (1, .edDSA):
            guard value[label: Label.crv]?.integerValue == 6 else {
                throw WebAuthnError(.unsupportedAlgorithm, "an EdDSA key must be Ed25519 (crv 6)")
            }
            guard value[label: Label.d] == nil else { throw WebAuthnError(.invalidPublicKey, "the COSE key holds a private key") }
            guard let x = value[label: Label.x]?.bytesValue, x.count == 32 else {
                throw .malformed("an OKP key needs x as a 32-byte byte string")
            }
            do {
                verifier = .ed25519(try Ed25519.Signing.PublicKey(rawRepresentation: x))
            } catch {
                throw WebAuthnError(.invalidPublicKey, "the Ed25519 key is not valid")
            }
        case (3, .rs256):
            guard let n = value[label: Label.rsaN]?.bytesValue, let e = value[label: Label.rsaE]?.bytesValue else {
                throw .malformed("an RSA key needs n and e as byte strings")
            }
            // RFC 8230 §4: labels −3 to −12 are the private key's parameters.
            guard (-12 ... -3).allSatisfy({ value[label: $0] == nil }) else {
                throw WebAuthnError(.invalidPublicKey, "the COSE key holds a private key")
            }
            let significant = n.drop { $0 == 0 }
            let bits = significant.isEmpty ? 0 : significant.count * 8 - significant.first!.leadingZeroBitCount
            guard bits >= 2048 else {
                throw WebAuthnError(.unsupportedAlgorithm, "an RSA modulus of \(bits) bits is below 2048")
            }
            do {
                verifier = .rsa(try RSA.Signing.PublicKey(modulus: n, exponent: e))
            } catch {
                throw WebAuthnError(.invalidPublicKey, "the RSA key breaks the import policy")
            }
        case (1, _), (2, _), (3, _):
            throw WebAuthnError(.unsupportedAlgorithm, "algorithm \(algorithm) with key type \(kty) is not supported")
        default:
            throw WebAuthnError(.unsupportedAlgorithm, "key type \(kty) is not supported")
        }
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Checks a signature by this key over `data`, in WebAuthn's encoding for the algorithm:
    /// ASN.1 DER for ES256 (WebAuthn §6.5.6), 64 bytes for Ed25519, the modulus's length for
    /// RS256.
    ///
    /// - Parameters:
    ///   - signature: The signature bytes.
    ///   - data: The signed bytes (`authenticatorData ‖ SHA-256(clientDataJSON)`).
    /// - Returns: Whether the signature is valid; false for a signature that does not parse.
    package func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch verifier {
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: data)
        case .rsa(let key):
            return key.isValidSignature(signature, for: data, padding: .pkcs1v1_5, hash: .sha256)
        }
    }

    /// The key as a DER SubjectPublicKeyInfo, to compare with a certificate's key; nil for
    /// Ed25519, which no supported attestation format certifies.
    package var subjectPublicKeyInfo: [UInt8]? {
        switch verifier {
        case .p256(let key): key.derRepresentation
        case .rsa(let key): key.derRepresentation
        case .ed25519: nil
        }
    }

    /// For an ES256 key, the uncompressed point 04‖x‖y (FIDO U2F's public key form).
    package var x963Representation: [UInt8]? {
        if case .p256(let key) = verifier { key.x963Representation } else { nil }
    }
}
