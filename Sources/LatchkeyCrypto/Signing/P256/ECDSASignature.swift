#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension P256.Signing {
    /// An ECDSA signature: the integers r and s.
    ///
    /// Two encodings exist and each wire format uses exactly one: JWS `ES256` uses the raw
    /// 64-byte r‖s (RFC 7518 §3.4, also IEEE P1363), while Apple's `SecKeyCreateSignature` with
    /// `.ecdsaSignatureMessageX962SHA256` produces DER (X9.62 `ECDSA-Sig-Value`).
    ///
    /// Equal signatures compare equal, but a valid signature has a second valid form (r, n − s):
    /// never use signature bytes to detect replays.
    public struct ECDSASignature: Sendable, Hashable {
        /// r‖s, 32 bytes each.
        private let bytes: [UInt8]

        /// Reads a raw r‖s signature.
        ///
        /// - Parameter rawRepresentation: 64 bytes, r then s, each big-endian and left-padded.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedSignature`` unless exactly 64 bytes.
        public init(rawRepresentation: some ContiguousBytes) throws {
            let bytes = rawRepresentation.byteArray
            guard bytes.count == 2 * P256.coordinateByteCount else {
                throw CryptoError.malformedSignature(
                    "a raw P-256 signature is 64 bytes, got \(bytes.count)")
            }
            self.bytes = bytes
        }

        /// Reads a DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`.
        ///
        /// Strict DER only: the input is parsed, re-encoded and compared byte for byte, so BER
        /// forms (long-form lengths that fit the short form, indefinite lengths, padded or
        /// negative integers) and trailing bytes are rejected.
        ///
        /// - Parameter derRepresentation: The DER bytes.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedSignature`` when the bytes are not
        ///   strict DER or an integer is negative or longer than 32 bytes.
        public init(derRepresentation: some ContiguousBytes) throws {
            let der = derRepresentation.byteArray
            guard let content = DER.single(der[...], tag: DER.Tag.sequence),
                let children = DER.children(content), children.count == 2,
                let r = DER.unsignedMagnitude(children[0]), let s = DER.unsignedMagnitude(children[1])
            else {
                throw CryptoError.malformedSignature("not a strict DER ECDSA signature")
            }
            guard r.count <= P256.coordinateByteCount, s.count <= P256.coordinateByteCount else {
                throw CryptoError.malformedSignature("an ECDSA P-256 integer is longer than 32 bytes")
            }
            let padding = [UInt8](repeating: 0, count: P256.coordinateByteCount)
            self.bytes = padding.dropLast(r.count) + r + padding.dropLast(s.count) + s
            // The reader already refuses non-minimal forms; comparing the re-encoding makes the
            // "exactly one accepted encoding" rule independent of the reader's details.
            guard derRepresentation.withUnsafeBytes({ $0.elementsEqual(self.derRepresentation) }) else {
                throw CryptoError.malformedSignature("not a strict DER ECDSA signature")
            }
        }

        /// The raw form: r‖s, 64 bytes.
        public var rawRepresentation: [UInt8] { bytes }

        /// The strict DER form.
        public var derRepresentation: [UInt8] {
            DER.sequence(of: [
                DER.unsignedInteger(bytes[..<P256.coordinateByteCount]),
                DER.unsignedInteger(bytes[P256.coordinateByteCount...]),
            ])
        }
    }
}
