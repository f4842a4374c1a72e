package import FoundationEssentials

extension P256.Signing {
    /// An ECDSA signature: the integers r and s.
    ///
    /// Two encodings exist and each wire format uses exactly one: JWS `ES256` uses the raw
    /// 64-byte r‖s (RFC 7518 §3.4, also IEEE P1363), while Apple's `SecKeyCreateSignature` with
    /// `.ecdsaSignatureMessageX962SHA256` produces DER (X9.62 `ECDSA-Sig-Value`).
    ///
    /// Equal signatures compare equal, but a valid signature has a second valid form (r, n − s):
    /// never use signature bytes to detect replays.
    package struct ECDSASignature: Sendable, Hashable {
        /// r‖s, 32 bytes each.
        private let bytes: [UInt8]

        /// Reads a raw r‖s signature.
        ///
        /// - Parameter rawRepresentation: 64 bytes, r then s, each big-endian and left-padded.
        /// - Throws: ``CryptoError/Code-swift.struct/malformedSignature`` unless exactly 64 bytes.
        package init(rawRepresentation: some ContiguousBytes) throws {
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
        package init(derRepresentation: some ContiguousBytes) throws {
            guard let bytes = derRepresentation.withUnsafeBytes({ Self.parseDER($0) }) else {
                throw CryptoError.malformedSignature("not a strict DER ECDSA-Sig-Value with 32-byte integers")
            }
            self.bytes = bytes
            // The parser already refuses non-minimal forms; comparing the re-encoding makes the
            // "exactly one accepted encoding" rule independent of the parser's details.
            guard derRepresentation.withUnsafeBytes({ $0.elementsEqual(self.derRepresentation) }) else {
                throw CryptoError.malformedSignature("not a strict DER ECDSA signature")
            }
        }

        /// The raw form: r‖s, 64 bytes.
        package var rawRepresentation: [UInt8] { bytes }

        /// The strict DER form.
        package var derRepresentation: [UInt8] {
            // Signing and verifying both pass through here, so it builds the encoding in one
            // buffer rather than through the general DER writer.
            let half = P256.coordinateByteCount
            let rStart = bytes[..<half].firstIndex { $0 != 0 } ?? half
            let sStart = bytes[half...].firstIndex { $0 != 0 } ?? 2 * half
            // Content length of each INTEGER: the magnitude, plus a 0x00 when the high bit is
            // set or the value is zero.
            let rLength = half - rStart + (rStart == half || bytes[rStart] & 0x80 != 0 ? 1 : 0)
            let sLength = 2 * half - sStart + (sStart == 2 * half || bytes[sStart] & 0x80 != 0 ? 1 : 0)
            let contentLength = 2 + rLength + 2 + sLength
            var der: [UInt8] = []
            der.reserveCapacity(contentLength + 3)
            der.append(DER.Tag.sequence)
            // At most 2 × 35 = 70 content bytes, but the long form is needed from 128.
            if contentLength >= 0x80 { der.append(0x81) }
            der.append(UInt8(contentLength))
            der.append(DER.Tag.integer)
            der.append(UInt8(rLength))
            if rLength > half - rStart { der.append(0) }
            der.append(contentsOf: bytes[rStart..<half])
            der.append(DER.Tag.integer)
            der.append(UInt8(sLength))
            if sLength > 2 * half - sStart { der.append(0) }
            der.append(contentsOf: bytes[sStart...])
            return der
        }

        /// Parses `SEQUENCE { INTEGER r, INTEGER s }` with minimal, non-negative integers of at
        /// most 32 bytes of magnitude, and nothing after it.
        ///
        /// - Returns: r‖s, or nil.
        static func parseDER(_ der: UnsafeRawBufferPointer) -> [UInt8]? {
            guard der.count >= 8, der[0] == DER.Tag.sequence else { return nil }
            var index = 2
            var length = Int(der[1])
            if length == 0x81 {
                // Long form is only minimal from 128 up.
                guard der[2] >= 0x80 else { return nil }
                length = Int(der[2])
                index = 3
            } else if length >= 0x80 {
                return nil
            }
            guard index + length == der.count else { return nil }
            var output = [UInt8](repeating: 0, count: 2 * P256.coordinateByteCount)
            for half in 0..<2 {
                guard der.count - index >= 2, der[index] == DER.Tag.integer else { return nil }
                let count = Int(der[index + 1])
                index += 2
                guard count >= 1, count <= P256.coordinateByteCount + 1, der.count - index >= count else { return nil }
                let first = der[index]
                // Negative values, and zero padding that is not needed, are not DER.
                guard first & 0x80 == 0 else { return nil }
                if count > 1 {
                    guard first != 0 || der[index + 1] & 0x80 != 0 else { return nil }
                }
                var magnitudeStart = index
                var magnitudeCount = count
                if first == 0 {
                    magnitudeStart += 1
                    magnitudeCount -= 1
                }
                guard magnitudeCount <= P256.coordinateByteCount else { return nil }
                let destination = (half + 1) * P256.coordinateByteCount - magnitudeCount
                for offset in 0..<magnitudeCount {
                    output[destination + offset] = der[magnitudeStart + offset]
                }
                index += count
            }
            return index == der.count ? output : nil
        }
    }
}
