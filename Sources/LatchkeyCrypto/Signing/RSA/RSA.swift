internal import CLatchkeyOpenSSL

/// RSA (RFC 8017).
package enum RSA {
    /// RSA signatures: JWS `RS256`/`PS256` (RFC 7518 §3.3, §3.5); Apple signs identity tokens
    /// with RS256.
    package enum Signing {}
}

extension RSA.Signing {
    /// The signature scheme.
    package struct Padding: Sendable, Hashable {
        enum Kind: Int, CaseIterable {
            case pkcs1v1_5
            case pss
        }

        let kind: Kind

        /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2), JWS `RS256`/`RS384`/`RS512`.
        package static let pkcs1v1_5 = Padding(kind: .pkcs1v1_5)

        /// RSASSA-PSS (RFC 8017 §8.1), JWS `PS256`/`PS384`/`PS512`: MGF1 with the signature's
        /// hash function and a salt as long as the hash (RFC 7518 §3.5). Verification requires
        /// exactly that salt length.
        package static let pss = Padding(kind: .pss)
    }

    /// The import policy shared by public and private keys.
    enum Policy {
        /// NIST SP 800-131A and RFC 7518 §3.3 require at least 2048 bits.
        static let minimumModulusBits = 2048
        /// OpenSSL's own ceiling (`OPENSSL_RSA_MAX_MODULUS_BITS`).
        static let maximumModulusBits = 16384
        /// A 64-bit ceiling keeps verification cheap; OpenSSL applies the same limit above 3072
        /// bits (`OPENSSL_RSA_MAX_PUBEXP_BITS`), and real keys use 3 or 65537.
        static let maximumExponentBits = 64
    }

    /// The index of a (padding, hash) pair among the per-key context pools.
    static func poolIndex(_ padding: Padding, _ hash: HashFunction) -> Int {
        let hashIndex = switch hash {
        case .sha256: 0
        case .sha384: 1
        case .sha512: 2
        }
        return padding.kind.rawValue * 3 + hashIndex
    }

    /// Every (padding, hash) pair, in ``poolIndex(_:_:)`` order.
    static let configurations: [(Padding, HashFunction)] = Padding.Kind.allCases.flatMap { kind in
        [HashFunction.sha256, .sha384, .sha512].map { (Padding(kind: kind), $0) }
    }

    /// Sets the padding, digest and (for PSS) MGF1 digest and salt length on an initialised
    /// signing or verifying context.
    static func configure(_ context: OpaquePointer, padding: Padding, hash: HashFunction) -> Bool {
        switch padding.kind {
        case .pkcs1v1_5:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
                && EVP_PKEY_CTX_set_signature_md(context, hash.algorithm) == 1
        case .pss:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_signature_md(context, hash.algorithm) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(context, hash.algorithm) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
        }
    }
}
