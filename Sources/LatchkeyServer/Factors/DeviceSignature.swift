import LatchkeyCrypto

/// The one verifier of device-key signatures (docs/security.md S17), used by every endpoint that
/// checks one and run over the whole Wycheproof ECDSA P-256 DER file by the tests.
///
/// The accepted encoding is exactly what an iOS app produces: the public key is the 65-byte
/// uncompressed X9.63 point of `SecKeyCopyExternalRepresentation`, and the signature is the
/// strict DER `ECDSA-Sig-Value` of `SecKeyCreateSignature` with
/// `.ecdsaSignatureMessageX962SHA256` over the raw challenge bytes. BER forms, trailing bytes,
/// r or s out of range, raw r‖s signatures and points off the curve are all refused.
package enum DeviceSignature {
    /// Whether `signature` is a valid strict-DER ECDSA-SHA256 signature by `publicKey`.
    ///
    /// - Parameters:
    ///   - signature: The DER bytes as the client sent them.
    ///   - publicKey: The 65-byte X9.63 point.
    ///   - digest: The SHA-256 of the signed bytes (what Latchkey stores for a challenge).
    /// - Returns: Whether everything checks out; any malformed input is simply not valid.
    package static func isValid(_ signature: [UInt8], publicKey: [UInt8], digest: [UInt8]) -> Bool {
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        else { return false }
        return key.isValidSignature(signature, digest: digest)
    }
}
