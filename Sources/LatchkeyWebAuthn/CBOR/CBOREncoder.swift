/// Writes CBOR in the shortest form, map entries in the order given.
///
/// What ``CBORDecoder`` accepts re-encodes to the same bytes, which the fuzz check relies on;
/// the tests' software authenticator builds its attestation objects and COSE keys with it.
package enum CBOREncoder {
    /// Encodes one item.
    ///
    /// - Parameter value: The item.
    /// - Returns: Its encoding.
    package static func encode(_ value: CBORValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, into: &output)
        return output
    }

    private static func head(_ major: UInt8, _ argument: UInt64, into output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24:
            output.append(type | UInt8(argument))
        case 24...0xFF:
            output += [type | 24, UInt8(argument)]
        case 0x100...0xFFFF:
            output.append(type | 25)
            output += (0..<2).reversed().map { UInt8(truncatingIfNeeded: argument >> (8 * $0)) }
        case 0x1_0000...0xFFFF_FFFF:
            output.append(type | 26)
            output += (0..<4).reversed().map { UInt8(truncatingIfNeeded: argument >> (8 * $0)) }
        default:
            output.append(type | 27)
            output += (0..<8).reversed().map { UInt8(truncatingIfNeeded: argument >> (8 * $0)) }
        }
    }

    private static func write(_ value: CBORValue, into output: inout [UInt8]) {
        switch value {
        case .unsigned(let number): head(0, number, into: &output)
        case .negative(let number): head(1, number, into: &output)
        case .bytes(let bytes):
            head(2, UInt64(bytes.count), into: &output)
            output += bytes
        case .text(let text):
            head(3, UInt64(text.utf8.count), into: &output)
            output += text.utf8
        case .array(let items):
            head(4, UInt64(items.count), into: &output)
            for item in items { write(item, into: &output) }
        case .map(let entries):
            head(5, UInt64(entries.count), into: &output)
            for entry in entries {
                write(entry.key, into: &output)
                write(entry.value, into: &output)
            }
        case .bool(let flag): output.append(flag ? 0xF5 : 0xF4)
        case .null: output.append(0xF6)
        }
    }
}
