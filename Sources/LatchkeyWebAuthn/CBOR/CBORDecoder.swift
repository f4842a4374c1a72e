/// A strict, bounded CBOR decoder (RFC 8949) for WebAuthn's structures.
///
/// What it accepts, and why:
/// - Definite lengths only. WebAuthn's attestation objects, COSE keys and extension maps are
///   produced by CTAP2 authenticators in CTAP2's canonical form, which has no indefinite lengths.
/// - Integers, lengths and counts in their shortest form (RFC 8949 §4.2.1 "preferred
///   serialization", required by CTAP2 canonical CBOR), so one value has one encoding and a
///   decoded value re-encodes to the very bytes it came from.
/// - Map keys unique, and each an integer or a text string. Map key *order* is not checked:
///   CTAP2 sorts keys, but WebAuthn §6.5.1.1 does not make relying parties enforce it and
///   authenticators in the field are known to differ; a duplicate key is the dangerous case
///   (two readers seeing two values) and that is refused.
/// - Text strings valid UTF-8; false, true and null; no floats, no tags, no `undefined`.
/// - Nesting at most ``Limits/maximumDepth`` deep and at most ``Limits/maximumItems`` items;
///   a length or count that exceeds the bytes left is refused before anything is allocated.
///
/// Every failure is a ``CBORError``; no input can make the decoder trap or allocate more than a
/// small multiple of its size.
package struct CBORDecoder {
    /// The bounds on one decode.
    package struct Limits: Sendable {
        /// How deep arrays and maps may nest; the outermost container is depth 1.
        package var maximumDepth: Int
        /// How many data items (containers, keys and values included) one decode may read.
        package var maximumItems: Int

        /// WebAuthn's structures: depth 16, 2048 items (an attestation object with a certificate
        /// chain and extensions has a few dozen).
        package static let webAuthn = Limits(maximumDepth: 16, maximumItems: 2048)

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maximumDepth: How deep containers may nest.
        ///   - maximumItems: How many items one decode may read.
        package init(maximumDepth: Int, maximumItems: Int) {
            self.maximumDepth = maximumDepth
            self.maximumItems = maximumItems
        }
    }

    private let input: [UInt8]
    private var index: Int
    private let limits: Limits
    private var items = 0

    private init(_ input: [UInt8], limits: Limits) {
        self.input = input
        self.index = 0
        self.limits = limits
    }

    /// Decodes exactly one item that spans all of `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: The encoding.
    ///   - limits: The bounds; WebAuthn's by default.
    /// - Returns: The item.
    /// - Throws: ``CBORError``, ``CBORError/Code-swift.struct/trailingBytes`` when bytes follow
    ///   the item.
    package static func decode(_ bytes: some Collection<UInt8>, limits: Limits = .webAuthn) throws(CBORError) -> CBORValue {
        let (value, consumed) = try decodePrefix(bytes, limits: limits)
        guard consumed == bytes.count else {
            throw CBORError(.trailingBytes, "\(bytes.count - consumed) bytes follow the item")
        }
        return value
    }

    /// Decodes the one item at the start of `bytes`, for structures where more follows (the
    /// COSE key inside authenticator data is followed by the extensions).
    ///
    /// - Parameters:
    ///   - bytes: The bytes, starting with an item.
    ///   - limits: The bounds; WebAuthn's by default.
    /// - Returns: The item and how many bytes it took.
    /// - Throws: ``CBORError``.
    package static func decodePrefix(
        _ bytes: some Collection<UInt8>, limits: Limits = .webAuthn
    ) throws(CBORError) -> (value: CBORValue, consumed: Int) {
        var decoder = CBORDecoder(Array(bytes), limits: limits)
        let value = try decoder.item(depth: 0)
        return (value, decoder.index)
    }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard index < input.count else { throw CBORError(.truncated, "the input ends inside an item") }
        defer { index += 1 }
        return input[index]
    }

    /// The argument of an item's head (RFC 8949 §3), shortest form required.
    private mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24:
            return UInt64(info)
        case 24...27:
            let count = 1 << Int(info - 24)
            var value: UInt64 = 0
            for _ in 0..<count { value = value << 8 | UInt64(try byte()) }
            let minimum: UInt64 = switch count {
            case 1: 24
            case 2: 0x100
            case 4: 0x1_0000
            default: 0x1_0000_0000
            }
            guard value >= minimum else {
                throw CBORError(.nonMinimalEncoding, "an argument of \(value) written in \(count) bytes")
            }
            return value
        case 31:
            throw CBORError(.indefiniteLength, "indefinite lengths are not accepted")
        default:
            throw CBORError(.unsupportedItem, "reserved additional information \(info)")
        }
    }

    /// A length or count that must fit in what is left of the input (each element takes at
    /// least `unit` bytes).
    private mutating func length(_ info: UInt8, unit: Int) throws(CBORError) -> Int {
        let value = try argument(info)
        let left = UInt64(input.count - index)
        guard value <= left / UInt64(unit) else {
            throw CBORError(.truncated, "a length of \(value) exceeds the \(left) bytes left")
        }
        return Int(value)
    }

    private mutating func item(depth: Int) throws(CBORError) -> CBORValue {
        items += 1
        guard items <= limits.maximumItems else {
            throw CBORError(.tooManyItems, "more than \(limits.maximumItems) items")
        }
        let head = try byte()
        let major = head >> 5
        let info = head & 0x1F
        switch major {
        case 0:
            return .unsigned(try argument(info))
        case 1:
            return .negative(try argument(info))
        case 2:
            let count = try length(info, unit: 1)
            defer { index += count }
            return .bytes(Array(input[index..<index + count]))
        case 3:
            let count = try length(info, unit: 1)
            defer { index += count }
            guard let text = String(validating: input[index..<index + count], as: UTF8.self) else {
                throw CBORError(.invalidUTF8, "a text string is not valid UTF-8")
            }
            return .text(text)
        case 4:
            let count = try length(info, unit: 1)
            guard depth + 1 <= limits.maximumDepth else {
                throw CBORError(.tooDeep, "containers nest deeper than \(limits.maximumDepth)")
            }
            var elements: [CBORValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        case 5:
            let count = try length(info, unit: 2)
            guard depth + 1 <= limits.maximumDepth else {
                throw CBORError(.tooDeep, "containers nest deeper than \(limits.maximumDepth)")
            }
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(count)
            var keys = Set<CBORValue>()
            for _ in 0..<count {
                let key = try item(depth: depth + 1)
                switch key {
                case .unsigned, .negative, .text: break
                default: throw CBORError(.unsupportedKey, "a map key is neither an integer nor a text string")
                }
                guard keys.insert(key).inserted else {
                    throw CBORError(.duplicateKey, "a map has the same key twice")
                }
                entries.append(CBORMapEntry(key, try item(depth: depth + 1)))
            }
            return .map(entries)
        case 6:
            throw CBORError(.unsupportedItem, "tags are not accepted")
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            default: throw CBORError(.unsupportedItem, "simple value or float \(info) is not accepted")
            }
        }
    }
}
