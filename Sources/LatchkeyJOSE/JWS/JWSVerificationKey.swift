package import LatchkeyCrypto

/// A public key paired with the one algorithm it may verify (docs/security.md S1, RFC 8725 §3.1).
///
/// Binding the algorithm to the key, not reading it from the token, is what defeats algorithm
/// confusion: an RSA key cannot become an HMAC secret, and an RS256 key never checks PS256.
package struct JWSVerificationKey: Sendable {
    /// The only algorithm this key verifies.
    package let algorithm: JWSAlgorithm
    /// The `kid` tokens use to select this key.
    package let keyID: String?
    let material: Material

    enum Material: Sendable {
        case p256(P256.Signing.PublicKey)
        case rsa(RSA.Signing.PublicKey)
        case ed25519(Ed25519.Signing.PublicKey)
        case hmac([UInt8])
    }

    private init(algorithm: JWSAlgorithm, keyID: String?, material: Material) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.material = material
    }

    /// An ES256 key.
    package static func es256(_ key: P256.Signing.PublicKey, keyID: String? = nil) -> JWSVerificationKey {
        JWSVerificationKey(algorithm: .es256, keyID: keyID, material: .p256(key))
    }

    /// An RS256 key.
    package static func rs256(_ key: RSA.Signing.PublicKey, keyID: String? = nil) -> JWSVerificationKey {
        JWSVerificationKey(algorithm: .rs256, keyID: keyID, material: .rsa(key))
    }

    /// A PS256 key.
    package static func ps256(_ key: RSA.Signing.PublicKey, keyID: String? = nil) -> JWSVerificationKey {
        JWSVerificationKey(algorithm: .ps256, keyID: keyID, material: .rsa(key))
    }

    /// An EdDSA (Ed25519) key: only for a DPoP proof's own key, never from a published key set.
    package static func edDSA(_ key: Ed25519.Signing.PublicKey, keyID: String? = nil) -> JWSVerificationKey {
        JWSVerificationKey(algorithm: .edDSA, keyID: keyID, material: .ed25519(key))
    }

    /// An HS256 secret, for Latchkey's own internal tokens only.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` when the secret is shorter than the 256-bit hash
    ///   output (RFC 7518 §3.2).
    package static func hs256(secret: [UInt8], keyID: String? = nil) throws(JOSEError) -> JWSVerificationKey {
        guard secret.count >= 32 else { throw JOSEError(.invalidKey, "an HS256 secret needs at least 32 bytes") }
        return JWSVerificationKey(algorithm: .hs256, keyID: keyID, material: .hmac(secret))
    }

    /// The verification key a public JWK describes.
    ///
    /// The algorithm is the JWK's `alg`; without one, EC P-256 means ES256 and an RSA key takes
    /// `defaultAlgorithm` (there is no safe guess between RS256 and PS256). A key whose `use` is
    /// not `sig`, whose `key_ops` lacks `verify`, or whose `alg` does not fit its type is refused.
    /// Symmetric (`oct`) keys are refused unless `allowSymmetric`, because a published key set
    /// must never turn into an HMAC secret.
    ///
    /// - Parameters:
    ///   - jwk: The key.
    ///   - defaultAlgorithm: The algorithm for an RSA key without `alg`.
    ///   - allowSymmetric: Whether an `oct` key may become an HS256 key.
    /// - Throws: ``JOSEError/Code/invalidKey``.
    package init(jwk: JWK, defaultAlgorithm: JWSAlgorithm? = nil, allowSymmetric: Bool = false) throws(JOSEError) {
        do {
            self = try Self.load(jwk, defaultAlgorithm: defaultAlgorithm, allowSymmetric: allowSymmetric)
        } catch {
            throw JOSEError(.invalidKey, error.detail)
        }
    }

    /// Why a JWK cannot be a verification key: the reason a key set records when it skips it.
    struct Unusable: Error {
        var reason: SkippedKey.Reason
        var detail: String
        init(_ reason: SkippedKey.Reason, _ detail: String) {
            self.reason = reason
            self.detail = detail
        }
    }

    /// The key a JWK describes; see ``init(jwk:defaultAlgorithm:allowSymmetric:)``.
    ///
    /// Strings from the document are cut short in the detail: it goes to logs and error bodies.
    static func load(_ jwk: JWK, defaultAlgorithm: JWSAlgorithm?, allowSymmetric: Bool) throws(Unusable) -> JWSVerificationKey {
        if let use = jwk.use, use != "sig" {
            throw Unusable(.notForSigning, "key use is \(use.prefix(20)), not sig")
        }
        if let operations = jwk.keyOperations, !operations.contains("verify") {
            throw Unusable(.notForSigning, "key_ops does not allow verify")
        }
        func unsupported(_ algorithm: JWSAlgorithm) -> Unusable {
            Unusable(.unsupportedAlgorithm, "a \(jwk.keyType) key cannot be used for \(algorithm.rawValue.prefix(20))")
        }
        switch jwk.keyType {
        case "EC":
            guard jwk.curve == "P-256" else {
                throw Unusable(.unsupportedCurve, "curve \(jwk.curve?.prefix(20) ?? "(none)") is not supported; only P-256 is")
            }
            let algorithm = jwk.algorithm ?? .es256
            guard algorithm == .es256 else { throw unsupported(algorithm) }
            guard let x = jwk.x, let y = jwk.y else { throw Unusable(.malformed, "a P-256 key needs x and y") }
            do {
                return .es256(try P256.Signing.PublicKey(x: x, y: y), keyID: jwk.keyID)
            } catch {
                throw Unusable(.invalidKey, "the P-256 key is unusable: \(error)")
            }
        case "RSA":
            guard let algorithm = jwk.algorithm ?? defaultAlgorithm else { throw Unusable(.unsupportedAlgorithm, "the RSA key names no alg") }
            guard algorithm == .rs256 || algorithm == .ps256 else { throw unsupported(algorithm) }
            guard let modulus = jwk.modulus, let exponent = jwk.exponent else { throw Unusable(.malformed, "an RSA key needs n and e") }
            let bits = bitCount(modulus)
            guard bits >= 2048 else {
                throw Unusable(.weakKey, "the RSA modulus has \(bits) bits; RFC 7518 §3.3 requires at least 2048")
            }
            do {
                let key = try RSA.Signing.PublicKey(modulus: modulus, exponent: exponent)
                return algorithm == .rs256 ? .rs256(key, keyID: jwk.keyID) : .ps256(key, keyID: jwk.keyID)
            } catch {
                throw Unusable(.invalidKey, "the RSA key is unusable: \(error)")
            }
        case "oct":
            guard allowSymmetric else { throw Unusable(.symmetricKey, "a symmetric key is never taken from this key set") }
            guard let algorithm = jwk.algorithm ?? defaultAlgorithm else { throw Unusable(.unsupportedAlgorithm, "the oct key names no alg") }
            guard algorithm == .hs256 else { throw unsupported(algorithm) }
            guard let secret = jwk.symmetricKey else { throw Unusable(.malformed, "an oct key needs k") }
            do {
                return try .hs256(secret: secret, keyID: jwk.keyID)
            } catch {
                throw Unusable(.weakKey, error.message)
            }
        default:
            throw Unusable(.unsupportedKeyType, "kty \(jwk.keyType.prefix(20)) is not supported")
        }
    }

    /// The number of significant bits in a big-endian integer.
    private static func bitCount(_ bytes: [UInt8]) -> Int {
        guard let first = bytes.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (bytes.count - first) * 8 - bytes[first].leadingZeroBitCount
    }

    /// Whether `signature` is this key's signature over `signingInput`.
    func isValidSignature(_ signature: [UInt8], for signingInput: ArraySlice<UInt8>) -> Bool {
        switch material {
        case .p256(let key):
            // RFC 7518 §3.4: exactly 64 bytes, r‖s; anything else (DER included) is refused.
            guard signature.count == 64,
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: signingInput)
        case .rsa(let key):
            let padding: RSA.Signing.Padding = algorithm == .rs256 ? .pkcs1v1_5 : .pss
            return key.isValidSignature(signature, for: signingInput, padding: padding)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: signingInput)
        case .hmac(let secret):
            return HMAC.isValidAuthenticationCode(signature, for: signingInput, key: secret)
        }
    }
}
