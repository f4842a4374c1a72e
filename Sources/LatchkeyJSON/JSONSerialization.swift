extension JSONValue {
    /// The value as compact JSON text: no whitespace, object members sorted by name.
    ///
    /// Sorted, compact output is deterministic, which RFC 7638 thumbprints require and which keeps
    /// the tokens we sign reproducible. Integral numbers below 2^53 print without a fraction;
    /// non-finite numbers, which JSON cannot carry, print as `null`.
    public var serialized: [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(128)
        serialize(into: &output)
        return output
    }

    /// ``serialized`` as a `String`.
    public var serializedString: String { String(decoding: serialized, as: UTF8.self) }

    /// Appends ``serialized`` to `output`, for writers that fill one buffer with many values.
    public func serialize(into output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): Self.write(number: value, to: &output)
        case .string(let value): Self.write(string: value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                element.serialize(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (offset, name) in members.keys.sorted().enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                Self.write(string: name, to: &output)
                output.append(UInt8(ascii: ":"))
                members[name]!.serialize(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func write(number: Double, to output: inout [UInt8]) {
        if !number.isFinite {
            output.append(contentsOf: "null".utf8)
        } else if let integer = Int64(exactly: number), abs(integer) < 1 << 53 {
            output.append(contentsOf: String(integer).utf8)
        } else {
            output.append(contentsOf: number.description.utf8)
        }
    }

    private static func write(string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            // Most strings (ids, names, routes) need no escape: one scan, then one copy.
            if bytes.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
                output.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), byte])
                case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hexDigit(byte >> 4), hexDigit(byte & 0xF)])
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The lowercase hexadecimal digit of a value below 16.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
