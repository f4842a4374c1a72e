import LatchkeyCrypto

extension FuzzTarget {
    /// The strict DER reader and writer, and the key and signature decoders built on it.
    ///
    /// Properties: every element the reader accepts, at any depth, re-encodes to the bytes it was
    /// read from (one value, one encoding); an accepted ECDSA DER signature re-encodes to the
    /// input, also through its raw r‖s form; an accepted P-256 SubjectPublicKeyInfo re-encodes to
    /// the input; accepted RSA public keys and P-256 private keys re-import from their own DER as
    /// the same key.
    public static let der = FuzzTarget(name: "der") { (input) throws(PropertyFailure) in
        try checkElements(input[...], depth: 0)
        var outcome = Outcome.refused

        if let signature = try? P256.Signing.ECDSASignature(derRepresentation: input) {
            try require(signature.derRepresentation == input, "an accepted DER signature re-encodes differently")
            let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature.rawRepresentation)
            try require(raw?.derRepresentation == input, "the raw form of a DER signature re-encodes differently")
            outcome = .accepted
        }
        if input.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: input) {
            let der = try? P256.Signing.ECDSASignature(derRepresentation: signature.derRepresentation)
            try require(der?.rawRepresentation == input, "a raw signature does not survive its DER form")
            outcome = .accepted
        }
        if let key = try? P256.Signing.PublicKey(derRepresentation: input) {
            try require(key.derRepresentation == input, "an accepted P-256 SubjectPublicKeyInfo re-encodes differently")
            outcome = .accepted
        }
        if let key = try? RSA.Signing.PublicKey(derRepresentation: input) {
            let again = try? RSA.Signing.PublicKey(derRepresentation: key.derRepresentation)
            try require(again == key, "an RSA public key does not re-import from its own DER")
            outcome = .accepted
        }
        if let key = try? P256.Signing.PrivateKey(derRepresentation: input) {
            let again = try? P256.Signing.PrivateKey(derRepresentation: key.derRepresentation)
            try require(
                again?.rawRepresentation == key.rawRepresentation && again?.publicKey == key.publicKey,
                "a P-256 private key does not re-import from its own DER")
            outcome = .accepted
        }
        return outcome
    }

    /// Reads `bytes` as a series of elements, descending into constructed ones while they parse.
    static func checkElements(_ bytes: ArraySlice<UInt8>, depth: Int) throws(PropertyFailure) {
        var rest = bytes
        while !rest.isEmpty {
            let before = rest
            guard let element = DER.read(&rest) else { return }
            let consumed = before[before.startIndex..<rest.startIndex]
            try require(
                DER.encode(element.tag, Array(element.content)).elementsEqual(consumed),
                "a DER element re-encodes differently")
            // Bit 6 (0x20) marks a constructed encoding (X.690 §8.1.2.5); BIT and OCTET STRINGs
            // often wrap DER too.
            let wraps = element.tag & 0x20 != 0 || element.tag == 0x04 || element.tag == 0x03
            if wraps && depth < 8 {
                let content = element.tag == 0x03 ? element.content.dropFirst() : element.content
                try checkElements(content, depth: depth + 1)
            }
        }
    }
}
