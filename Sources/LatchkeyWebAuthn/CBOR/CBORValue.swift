/// One CBOR data item (RFC 8949 §3) of the kinds WebAuthn uses.
///
/// Floats, tags, `undefined` and other simple values are not represented: the decoder refuses
/// them, since no WebAuthn structure (attestation object, COSE key, authenticator extensions)
/// needs them.
package indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the integer −1 − n, stored as n.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string, valid UTF-8.
    case text(String)
    /// Major type 4: an array.
    case array([CBORValue])
    /// Major type 5: a map, its entries in the order they were encoded; keys are unique.
    case map([CBORMapEntry])
    /// Simple values 20 and 21.
    case bool(Bool)
    /// Simple value 22.
    case null

    /// The value as a signed integer, when it is an integer that fits an `Int64`.
    package var integerValue: Int64? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: nil
        }
    }

    /// The bytes of a byte string.
    package var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { bytes } else { nil }
    }

    /// The text of a text string.
    package var textValue: String? {
        if case .text(let text) = self { text } else { nil }
    }

    /// The items of an array.
    package var arrayValue: [CBORValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    /// The entries of a map.
    package var mapValue: [CBORMapEntry]? {
        if case .map(let entries) = self { entries } else { nil }
    }

    /// The value of a map entry whose key is this integer (COSE labels).
    ///
    /// - Parameter label: The integer key.
    /// - Returns: The value, or nil when this is not a map or has no such key.
    package subscript(label label: Int64) -> CBORValue? {
        mapValue?.first { $0.key.integerValue == label }?.value
    }

    /// The value of a map entry whose key is this text (attestation object members).
    ///
    /// - Parameter key: The text key.
    /// - Returns: The value, or nil when this is not a map or has no such key.
    package subscript(key: String) -> CBORValue? {
        mapValue?.first { $0.key.textValue == key }?.value
    }

    /// An integer value: `.unsigned` for zero and above, `.negative` below.
    ///
    /// - Parameter value: The integer.
    /// - Returns: The CBOR integer.
    package static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }
}

/// One key and value of a CBOR map.
package struct CBORMapEntry: Sendable, Hashable {
    /// The key: an integer or a text string.
    package var key: CBORValue
    /// The value.
    package var value: CBORValue

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The value.
    package init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}
