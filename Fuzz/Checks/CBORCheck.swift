import LatchkeyWebAuthn

extension FuzzTarget {
    /// The strict CBOR decoder of WebAuthn's structures, and its encoder.
    ///
    /// Properties: a value decoded from the whole input re-encodes to exactly the input (one
    /// value, one encoding: shortest-form arguments, definite lengths) and decodes again to the
    /// same value; a prefix decode takes at most the input and its bytes are the value's encoding;
    /// no accepted value nests deeper than the decoder's limit; a refusal is a `CBORError`.
    public static let cbor = FuzzTarget(name: "cbor") { (input) throws(PropertyFailure) in
        guard let (value, consumed) = try? CBORDecoder.decodePrefix(input) else {
            try require((try? CBORDecoder.decode(input)) == nil, "the whole input decodes where its prefix does not")
            return .refused
        }
        try require(consumed > 0 && consumed <= input.count, "a value took more bytes than it was given")
        let encoded = CBOREncoder.encode(value)
        try require(encoded.elementsEqual(input[..<consumed]), "a decoded value re-encodes differently")
        try require((try? CBORDecoder.decode(encoded)) == value, "a re-encoded value decodes differently")
        try require(depth(value) <= CBORDecoder.Limits.webAuthn.maximumDepth, "an accepted value nests deeper than the limit")
        let whole = try? CBORDecoder.decode(input)
        try require((whole != nil) == (consumed == input.count), "decode and decodePrefix disagree on trailing bytes")
        return .accepted
    }

    /// How deep arrays and maps nest in `value`; the outermost container is 1.
    static func depth(_ value: CBORValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(depth).max() ?? 0)
        case .map(let entries): 1 + (entries.map { max(depth($0.key), depth($0.value)) }.max() ?? 0)
        default: 0
        }
    }
}
