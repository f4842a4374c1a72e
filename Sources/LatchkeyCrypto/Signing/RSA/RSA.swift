internal import CLatchkeyOpenSSL

/// RSA (RFC 8017).
public enum RSA {
    /// RSA signatures: JWS `RS256`/`PS256` (RFC 7518 §3.3, §3.5); Apple signs identity tokens
    /// with RS256.
    public enum Signing {}
}

extension RSA.Signing {
    /// The signature scheme.
    public struct Padding: Sendable, Hashable {
        enum Kind: Int, CaseIterable {
            case pkcs1v1_5
            case pss
        }

        let kind: Kind

        /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2), JWS `RS256`/`RS384`/`RS512`.
        public static let pkcs1v1_5 = Padding(kind: .pkcs1v1_5)

        /// RSASSA-PSS (RFC 8017 §8.1), JWS `PS256`/`PS384`/`PS512`: MGF1 with the signature's
        /// hash function and a salt as long as the hash (RFC 7518 §3.5). Verification requires
        /// exactly that salt length.
        public static let pss = Padding(kind: .pss)
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

/// The RSA key structures of RFC 8017 Appendix A.1 and their X.509 and PKCS#8 wrappings.
enum RSAKeyDER {
    /// `AlgorithmIdentifier { rsaEncryption, NULL }` (RFC 3279 §2.3.1: the NULL is required).
    static let algorithmIdentifier = DER.sequence(of: [OID.encoded(OID.rsaEncryption), DER.encode(DER.Tag.null, [])])

    /// Parses `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }`.
    static func parsePublicKey(_ der: ArraySlice<UInt8>) -> (modulus: [UInt8], exponent: [UInt8])? {
        guard let content = DER.single(der, tag: DER.Tag.sequence),
            let parts = DER.children(content), parts.count == 2,
            let modulus = DER.unsignedMagnitude(parts[0]), let exponent = DER.unsignedMagnitude(parts[1])
        else { return nil }
        return (Array(modulus), Array(exponent))
    }

    /// Parses a SubjectPublicKeyInfo with the rsaEncryption algorithm.
    static func parseSubjectPublicKeyInfo(_ der: ArraySlice<UInt8>) -> (modulus: [UInt8], exponent: [UInt8])? {
        guard let content = DER.single(der, tag: DER.Tag.sequence),
            let parts = DER.children(content), parts.count == 2,
            parts[0].tag == DER.Tag.sequence,
            DER.encode(DER.Tag.sequence, Array(parts[0].content)) == algorithmIdentifier,
            let key = DER.bitStringBytes(parts[1])
        else { return nil }
        return parsePublicKey(key)
    }

    /// Whether `der` starts like a SubjectPublicKeyInfo (a SEQUENCE whose first child is a
    /// SEQUENCE) rather than an RSAPublicKey (whose first child is an INTEGER).
    static func looksLikeSubjectPublicKeyInfo(_ der: ArraySlice<UInt8>) -> Bool {
        guard let content = DER.single(der, tag: DER.Tag.sequence) else { return false }
        var rest = content
        return DER.read(&rest)?.tag == DER.Tag.sequence
    }

    static func encodePublicKey(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        DER.sequence(of: [DER.unsignedInteger(modulus), DER.unsignedInteger(exponent)])
    }

    static func encodeSubjectPublicKeyInfo(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        DER.sequence(of: [algorithmIdentifier, DER.bitString(wrapping: encodePublicKey(modulus: modulus, exponent: exponent))])
    }

    /// The eight integers of a two-prime `RSAPrivateKey`, in file order: n, e, d, p, q,
    /// d mod (p−1), d mod (q−1), q⁻¹ mod p.
    static let privateComponentNames: [StaticString] = [
        ParamName.rsaN, ParamName.rsaE, ParamName.rsaD, ParamName.rsaFactor1, ParamName.rsaFactor2,
        ParamName.rsaExponent1, ParamName.rsaExponent2, ParamName.rsaCoefficient1,
    ]

    /// Parses a two-prime `RSAPrivateKey` (version 0; multi-prime keys are refused).
    static func parsePrivateKey(_ der: ArraySlice<UInt8>) -> [[UInt8]]? {
        guard let content = DER.single(der, tag: DER.Tag.sequence),
            let parts = DER.children(content), parts.count == 9,
            DER.unsignedMagnitude(parts[0]) == []
        else { return nil }
        var components: [[UInt8]] = []
        for part in parts.dropFirst() {
            guard let value = DER.unsignedMagnitude(part), !value.isEmpty else { return nil }
            components.append(Array(value))
        }
        return components
    }

    /// Parses a PKCS#8 `PrivateKeyInfo` holding an RSA key; attributes are ignored.
    static func parsePKCS8(_ der: ArraySlice<UInt8>) -> [[UInt8]]? {
        guard let content = DER.single(der, tag: DER.Tag.sequence),
            var parts = DER.children(content)?[...],
            let version = parts.popFirst(), DER.unsignedMagnitude(version) == [],
            let algorithm = parts.popFirst(), algorithm.tag == DER.Tag.sequence,
            DER.encode(DER.Tag.sequence, Array(algorithm.content)) == algorithmIdentifier,
            let privateKey = parts.popFirst(), privateKey.tag == DER.Tag.octetString
        else { return nil }
        if let attributes = parts.first, attributes.tag == DER.Tag.context0 {
            parts.removeFirst()
        }
        guard parts.isEmpty else { return nil }
        return parsePrivateKey(privateKey.content)
    }

    static func encodePKCS8(components: [[UInt8]]) -> [UInt8] {
        let privateKey = DER.sequence(of: [DER.smallInteger(0)] + components.map { DER.unsignedInteger($0) })
        return DER.sequence(of: [DER.smallInteger(0), algorithmIdentifier, DER.encode(DER.Tag.octetString, privateKey)])
    }
}
