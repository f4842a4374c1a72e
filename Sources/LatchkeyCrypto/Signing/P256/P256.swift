/// The NIST P-256 curve (secp256r1, FIPS 186-5 / SEC 2 §2.4.2).
package enum P256 {
    /// ECDSA over P-256 with SHA-256: JWS `ES256` (RFC 7518 §3.4) and Apple's device and
    /// App Attest keys.
    package enum Signing {}

    /// Bytes in a coordinate, a scalar, and each of r and s.
    static let coordinateByteCount = 32

    /// The field prime p, big-endian.
    static let fieldPrime: [UInt8] = bytes(
        "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")

    /// The group order n, big-endian.
    static let order: [UInt8] = bytes(
        "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    /// The DER of a SubjectPublicKeyInfo for id-ecPublicKey on namedCurve secp256r1 (RFC 5480
    /// §2), up to and including the BIT STRING's unused-bits byte; the 65-byte uncompressed
    /// point follows. DER is unique, so every such key is exactly these bytes plus the point.
    static let subjectPublicKeyInfoPrefix: [UInt8] = DER.sequence(of: [
        DER.sequence(of: [OID.encoded(OID.ecPublicKey), OID.encoded(OID.secp256r1)]),
        DER.bitString(wrapping: [UInt8](repeating: 0, count: 65)),
    ]).dropLast(65)

    /// Whether a big-endian number of `coordinateByteCount` bytes is below `limit`.
    static func isLess(_ value: some Collection<UInt8>, than limit: [UInt8]) -> Bool {
        value.lexicographicallyPrecedes(limit)
    }

    /// Whether a 32-byte big-endian number is zero.
    static func isZero(_ value: some Collection<UInt8>) -> Bool {
        value.allSatisfy { $0 == 0 }
    }

    private static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            result.append(UInt8(nibble(high) << 4 | nibble(low)))
        }
        return result
    }

    private static func nibble(_ character: UInt8) -> UInt8 {
        character <= UInt8(ascii: "9") ? character - UInt8(ascii: "0") : character - UInt8(ascii: "a") + 10
    }
}
