/// A JSON value (RFC 8259), as parsed by ``JSONValue/init(parsing:maxDepth:)``.
///
/// JOSE headers and claims are read through this type rather than `JSONDecoder` because the
/// security rules need what a general decoder hides: duplicate names must be rejected
/// (docs/security.md S2, RFC 7515 §5.2 step 4), invalid UTF-8 must be rejected, and nesting is bounded.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member `name` when this is an object.
    public subscript(name: String) -> JSONValue? {
        if case .object(let members) = self { return members[name] }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, when this is a number.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

/// Why JSON text was refused.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; compare errors by code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not JSON: an unexpected byte, a missing delimiter, trailing content.
        public static let syntax = Code("syntax")
        /// A string that is not valid UTF-8, or a `\u` escape naming a lone surrogate.
        public static let invalidUnicode = Code("invalid_unicode")
        /// The same member name twice in one object.
        public static let duplicateName = Code("duplicate_name")
        /// Arrays and objects nested deeper than the limit.
        public static let tooDeep = Code("too_deep")
        /// A number that does not fit a finite `Double`.
        public static let numberOutOfRange = Code("number_out_of_range")
    }

    /// The kind of failure.
    public var code: Code
    /// The byte offset in the input where the failure was found.
    public var offset: Int

    /// Creates an error.
    public init(code: Code, offset: Int) {
        self.code = code
        self.offset = offset
    }

    public var description: String { "JSON \(code) at byte \(offset)" }

    public static func == (lhs: JSONError, rhs: JSONError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
