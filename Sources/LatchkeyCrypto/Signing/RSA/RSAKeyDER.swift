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
