/// The ECPrivateKey structure (RFC 5915 §3) and its PKCS#8 wrapping (RFC 5208, RFC 5958).
enum ECPrivateKeyDER {
    struct Parsed {
        var scalar: [UInt8]
        var hasCurveParameter: Bool
        var publicPoint: [UInt8]?
    }

    /// Parses `ECPrivateKey ::= SEQUENCE { version INTEGER (1), privateKey OCTET STRING,
    /// parameters [0] ECParameters OPTIONAL, publicKey [1] BIT STRING OPTIONAL }`.
    ///
    /// - Returns: The parts, or nil unless the version is 1, the scalar is 32 bytes, any curve
    ///   parameter names secp256r1 and any public key is a 65-byte uncompressed point.
    static func parse(_ der: ArraySlice<UInt8>) -> Parsed? {
        guard let content = DER.single(der, tag: DER.Tag.sequence),
            var children = DER.children(content)?[...],
            let version = children.popFirst(), DER.unsignedMagnitude(version) == [1],
            let scalar = children.popFirst(), scalar.tag == DER.Tag.octetString,
            scalar.content.count == P256.coordinateByteCount
        else { return nil }
        var parsed = Parsed(scalar: Array(scalar.content), hasCurveParameter: false, publicPoint: nil)
        if let parameters = children.first, parameters.tag == DER.Tag.context0 {
            children.removeFirst()
            guard DER.single(parameters.content, tag: DER.Tag.objectIdentifier) == OID.secp256r1[...] else {
                return nil
            }
            parsed.hasCurveParameter = true
        }
        if let publicKey = children.first, publicKey.tag == DER.Tag.context1 {
            children.removeFirst()
            guard let bits = DER.single(publicKey.content, tag: DER.Tag.bitString),
                let point = DER.bitStringBytes(DER.Element(tag: DER.Tag.bitString, content: bits)),
                point.count == 65, point.first == 0x04
            else { return nil }
            parsed.publicPoint = Array(point)
        }
        return children.isEmpty ? parsed : nil
    }

    /// Parses a PKCS#8 `PrivateKeyInfo` (version 0) or `OneAsymmetricKey` (version 1) whose
    /// algorithm is id-ecPublicKey on secp256r1. Attributes are ignored.
    static func parsePKCS8(_ der: ArraySlice<UInt8>) -> Parsed? {
        guard let content = DER.single(der, tag: DER.Tag.sequence),
            var children = DER.children(content)?[...],
            let version = children.popFirst().flatMap(DER.unsignedMagnitude), version == [] || version == [1],
            let algorithm = children.popFirst(), algorithm.tag == DER.Tag.sequence,
            let algorithmParts = DER.children(algorithm.content), algorithmParts.count == 2,
            algorithmParts[0].tag == DER.Tag.objectIdentifier, algorithmParts[0].content.elementsEqual(OID.ecPublicKey),
            algorithmParts[1].tag == DER.Tag.objectIdentifier, algorithmParts[1].content.elementsEqual(OID.secp256r1),
            let privateKey = children.popFirst(), privateKey.tag == DER.Tag.octetString,
            var parsed = parse(privateKey.content)
        else { return nil }
        if let attributes = children.first, attributes.tag == DER.Tag.context0 {
            children.removeFirst()
        }
        if let publicKey = children.first, publicKey.tag == DER.Tag.contextPrimitive1 {
            children.removeFirst()
            // OneAsymmetricKey only; [1] IMPLICIT BIT STRING, so the content is the bit string's.
            guard version == [1], publicKey.content.first == 0 else { return nil }
            let point = Array(publicKey.content.dropFirst())
            guard point.count == 65, point[0] == 0x04, parsed.publicPoint.map({ $0 == point }) ?? true else {
                return nil
            }
            parsed.publicPoint = point
        }
        return children.isEmpty ? parsed : nil
    }

    /// Encodes an ECPrivateKey.
    static func encode(scalar: [UInt8], publicPoint: [UInt8]?, includeCurveParameter: Bool) -> [UInt8] {
        var parts = [DER.smallInteger(1), DER.encode(DER.Tag.octetString, scalar)]
        if includeCurveParameter {
            parts.append(DER.encode(DER.Tag.context0, OID.encoded(OID.secp256r1)))
        }
        if let publicPoint {
            parts.append(DER.encode(DER.Tag.context1, DER.bitString(wrapping: publicPoint)))
        }
        return DER.sequence(of: parts)
    }

    /// Encodes a PKCS#8 `PrivateKeyInfo` (version 0) around an ECPrivateKey without the curve
    /// parameter (the algorithm identifier names the curve) and with the public key.
    static func encodePKCS8(scalar: [UInt8], publicPoint: [UInt8]) -> [UInt8] {
        DER.sequence(of: [
            DER.smallInteger(0),
            DER.sequence(of: [OID.encoded(OID.ecPublicKey), OID.encoded(OID.secp256r1)]),
            DER.encode(
                DER.Tag.octetString,
                encode(scalar: scalar, publicPoint: publicPoint, includeCurveParameter: false)),
        ])
    }
}
