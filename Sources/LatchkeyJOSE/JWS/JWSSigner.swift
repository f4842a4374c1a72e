package import LatchkeyCrypto

/// A private key paired with the algorithm and `kid` it signs with.
package struct JWSSigner: Sendable {
    /// The `alg` this signer writes.
    package let algorithm: JWSAlgorithm
    /// The `kid` this signer writes, if any.
    package let keyID: String?
    private let material: Material

    private enum Material: Sendable {
        case p256(P256.Signing.PrivateKey)
        case rsa(RSA.Signing.PrivateKey)
        case hmac([UInt8])
    }

    /// An ES256 signer.
    package static func es256(_ key: P256.Signing.PrivateKey, keyID: String? = nil) -> JWSSigner {
        JWSSigner(algorithm: .es256, keyID: keyID, material: .p256(key))
    }

    /// An RS256 signer (the Apple sandbox signs identity tokens with it).
    package static func rs256(_ key: RSA.Signing.PrivateKey, keyID: String? = nil) -> JWSSigner {
        JWSSigner(algorithm: .rs256, keyID: keyID, material: .rsa(key))
    }

    /// A PS256 signer.
    package static func ps256(_ key: RSA.Signing.PrivateKey, keyID: String? = nil) -> JWSSigner {
        JWSSigner(algorithm: .ps256, keyID: keyID, material: .rsa(key))
    }

    /// An HS256 signer for internal tokens.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` when the secret is shorter than 32 bytes.
    package static func hs256(secret: [UInt8], keyID: String? = nil) throws(JOSEError) -> JWSSigner {
        guard secret.count >= 32 else { throw JOSEError(.invalidKey, "an HS256 secret needs at least 32 bytes") }
        return JWSSigner(algorithm: .hs256, keyID: keyID, material: .hmac(secret))
    }

    private init(algorithm: JWSAlgorithm, keyID: String?, material: Material) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.material = material
    }

    /// The key that verifies this signer's signatures.
    package var verificationKey: JWSVerificationKey {
        get throws(JOSEError) {
            switch material {
            case .p256(let key): return .es256(key.publicKey, keyID: keyID)
            case .rsa(let key): return algorithm == .rs256 ? .rs256(key.publicKey, keyID: keyID) : .ps256(key.publicKey, keyID: keyID)
            case .hmac(let secret): return try .hs256(secret: secret, keyID: keyID)
            }
        }
    }

    /// The public JWK that publishes this signer's key, with its `kid`, `alg` and `use: sig`.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` for an HS256 signer: a secret is never published.
    package var publicJWK: JWK {
        get throws(JOSEError) {
            switch material {
            case .p256(let key): return JWK(key.publicKey, keyID: keyID)
            case .rsa(let key): return JWK(key.publicKey, algorithm: algorithm, keyID: keyID)
            case .hmac: throw JOSEError(.invalidKey, "an HS256 secret has no public JWK")
            }
        }
    }

    /// Signs the JWS signing input.
    func signature(for signingInput: [UInt8]) throws -> [UInt8] {
        switch material {
        case .p256(let key): return try key.signature(for: signingInput).rawRepresentation
        case .rsa(let key): return try key.signature(for: signingInput, padding: algorithm == .rs256 ? .pkcs1v1_5 : .pss)
        case .hmac(let secret): return HMAC.authenticationCode(for: signingInput, key: secret)
        }
    }
}
