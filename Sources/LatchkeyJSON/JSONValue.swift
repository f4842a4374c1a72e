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
    /// The kind of failure; compare errors by code. New codes may be added, so switch with a
    /// `default`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not JSON: an unexpected byte, a missing delimiter, trailing content.
        public static let syntax = Code(rawValue: "syntax")
        /// A string that is not valid UTF-8, or a `\u` escape naming a lone surrogate.
        public static let invalidUnicode = Code(rawValue: "invalid_unicode")
        /// The same member name twice in one object.
        public static let duplicateName = Code(rawValue: "duplicate_name")
        /// Arrays and objects nested deeper than the limit.
        public static let tooDeep = Code(rawValue: "too_deep")
        /// A number that does not fit a finite `Double`.
        public static let numberOutOfRange = Code(rawValue: "number_out_of_range")
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

    /// What went wrong and where, for example `syntax at byte 12`; never the input's bytes.
    public var message: String { "\(code) at byte \(offset)" }

    /// `JSON ` and the ``message``.
    public var description: String { "JSON \(message)" }

    /// Compares the codes only.
    public static func == (lhs: JSONError, rhs: JSONError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only, to agree with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
