extension JSONValue {
    /// The default nesting limit: far beyond any JOSE header, claims set or API body.
    public static let defaultMaxDepth = 32

    /// Parses JSON text strictly (RFC 8259).
    ///
    /// Refuses what a lenient parser lets through: duplicate member names, invalid UTF-8 (also
    /// lone surrogates in `\u` escapes), a byte order mark, trailing content, leading zeros,
    /// numbers that overflow a `Double`, and nesting deeper than `maxDepth`.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - maxDepth: The deepest nesting of arrays and objects allowed.
    /// - Throws: ``JSONError`` naming the first problem and its byte offset.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = JSONValue.defaultMaxDepth) throws {
        let input = Array(bytes)
        self = try input.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(input: buffer, maxDepth: maxDepth)
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error(.syntax) }
            return value
        }
    }

    /// Parses a JSON string; see ``init(parsing:maxDepth:)``.
    public init(parsing text: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws {
        try self.init(parsing: Array(text.utf8), maxDepth: maxDepth)
    }
}

/// A recursive-descent parser over a byte buffer; recursion is bounded by `maxDepth`.
private struct JSONParser {
    let input: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0

    init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.input = input
        self.maxDepth = maxDepth
    }

    func error(_ code: JSONError.Code) -> JSONError { JSONError(code: code, offset: index) }

    mutating func skipWhitespace() {
        while index < input.count {
            switch input[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < input.count else { throw error(.syntax) }
        switch input[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return .number(try parseNumber())
        }
    }

    mutating func expect(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard input.count - index >= count else { throw error(.syntax) }
        for offset in 0..<count where input[index + offset] != literal.utf8Start[offset] {
            throw error(.syntax)
        }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maxDepth else { throw error(.tooDeep) }
        index += 1
        var members = [String: JSONValue]()
        skipWhitespace()
        if index < input.count, input[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: "\"") else { throw error(.syntax) }
            let nameOffset = index
            let name = try parseString()
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: ":") else { throw error(.syntax) }
            index += 1
            let value = try parseValue(depth: depth)
            guard members.updateValue(value, forKey: name) == nil else {
                throw JSONError(code: .duplicateName, offset: nameOffset)
            }
            skipWhitespace()
            guard index < input.count else { throw error(.syntax) }
            switch input[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw error(.syntax)
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maxDepth else { throw error(.tooDeep) }
        index += 1
        var elements = [JSONValue]()
        skipWhitespace()
        if index < input.count, input[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < input.count else { throw error(.syntax) }
            switch input[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: throw error(.syntax)
            }
        }
    }

    mutating func parseString() throws(JSONError) -> String {
        index += 1  // the opening quote
        let start = index
        // Fast path: no escapes, so the bytes are the string.
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "\"") {
                let bytes = UnsafeBufferPointer(rebasing: input[start..<index])
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw JSONError(code: .invalidUnicode, offset: start)
                }
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error(.syntax) }
            index += 1
        }
        var bytes = Array(input[start..<index])
        while index < input.count {
            let byte = input[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw JSONError(code: .invalidUnicode, offset: start)
                }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < input.count else { throw error(.syntax) }
                let escape = input[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"): bytes.append(contentsOf: try parseUnicodeEscape())
                default: throw error(.syntax)
                }
            case 0..<0x20:
                throw error(.syntax)
            default:
                bytes.append(byte)
                index += 1
            }
        }
        throw error(.syntax)
    }

    /// Reads the four hex digits after `\u` (and a second escape for a surrogate pair).
    mutating func parseUnicodeEscape() throws(JSONError) -> [UInt8] {
        let first = try parseHex4()
        var scalarValue = UInt32(first)
        if (0xD800..<0xDC00).contains(first) {
            guard input.count - index >= 2, input[index] == UInt8(ascii: "\\"), input[index + 1] == UInt8(ascii: "u")
            else { throw error(.invalidUnicode) }
            index += 2
            let second = try parseHex4()
            guard (0xDC00..<0xE000).contains(second) else { throw error(.invalidUnicode) }
            scalarValue = 0x10000 + (UInt32(first - 0xD800) << 10) + UInt32(second - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw error(.invalidUnicode) }
        return Array(String(Character(scalar)).utf8)
    }

    mutating func parseHex4() throws(JSONError) -> UInt16 {
        guard input.count - index >= 4 else { throw error(.syntax) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = input[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.syntax)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func parseNumber() throws(JSONError) -> Double {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.input.count,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.input[parser.index])
            {
                parser.index += 1
            }
            return parser.index - from
        }
        if index < input.count, input[index] == UInt8(ascii: "-") { index += 1 }
        guard index < input.count else { throw error(.syntax) }
        if input[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits(&self) > 0 else { throw error(.syntax) }
        }
        if index < input.count, input[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw error(.syntax) }
        }
        if index < input.count, input[index] == UInt8(ascii: "e") || input[index] == UInt8(ascii: "E") {
            index += 1
            if index < input.count, input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits(&self) > 0 else { throw error(.syntax) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONError(code: .numberOutOfRange, offset: start)
        }
        return value
    }
}
