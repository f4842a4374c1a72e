public import LatchkeyJSON

/// A body or member that has one JSON form on the wire.
public protocol WireEncodable: Sendable {
    /// The JSON form, as docs/reference.md shows it.
    var json: JSONValue { get }
}

/// A body or member that can be read back from its JSON form.
///
/// Readers are tolerant: members they do not know are ignored, so a client keeps working when
/// the server adds one. What they know must have the documented type.
public protocol WireDecodable: Sendable {
    /// Reads the value from its JSON form.
    ///
    /// - Throws: ``WireDecodingError`` naming the first member that is missing or mistyped.
    init(json: JSONValue) throws(WireDecodingError)
}

/// Both directions.
public typealias WireCodable = WireEncodable & WireDecodable

extension WireDecodable {
    /// Parses strict JSON text and reads the value from it.
    ///
    /// - Throws: ``WireDecodingError`` with code ``WireDecodingError/Code/notJSON`` when the bytes
    ///   are not one JSON value, or naming the first member that is missing or mistyped.
    public init(parsing bytes: some Collection<UInt8>) throws(WireDecodingError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw WireDecodingError(code: .notJSON, path: "", expectation: "is not valid JSON")
        }
        try self.init(json: value)
    }
}

/// A JSON value that does not have the shape a wire model expects.
///
/// Unlike the package's other errors, equality compares every field, not only the code: which
/// member is wrong and how (`user.email must be a string`) is what a 400 answer tells the
/// client, so a test pins all of it.
public struct WireDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bytes are not one JSON value.
        public static let notJSON = Code(rawValue: "not_json")
        /// A required member is absent or null.
        public static let missing = Code(rawValue: "missing")
        /// A member has another JSON type than documented.
        public static let mistyped = Code(rawValue: "mistyped")
        /// A member has the right type but a value outside what is documented (a bad timestamp).
        public static let invalid = Code(rawValue: "invalid")
    }

    /// What is wrong.
    public var code: Code
    /// Where: member names joined by `.`, with `[n]` for array elements; empty for the whole body.
    public var path: String
    /// What was expected, completing a sentence about the member: `is required`, `must be a string`.
    public var expectation: String

    public init(code: Code, path: String, expectation: String) {
        self.code = code
        self.path = path
        self.expectation = expectation
    }

    /// A sentence for a developer, without the value itself: `user.email must be a string`.
    public var description: String { (path.isEmpty ? "the body" : path) + " " + expectation }

    /// The same error for a value found at `parent` inside a larger document.
    public func nested(under parent: String) -> WireDecodingError {
        WireDecodingError(code: code, path: path.isEmpty ? parent : parent + "." + path, expectation: expectation)
    }
}

/// Reads the members of one JSON object with clear errors, for ``WireDecodable`` conformances.
///
/// Errors name the member relative to this object; nested models read through ``model(_:as:)``
/// and ``models(_:as:)`` come back with the full path (`user.email`, `factors[1].type`).
public struct WireObject: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]

    /// Wraps `json`, which must be an object.
    ///
    /// - Throws: ``WireDecodingError/Code/mistyped`` when it is not.
    public init(_ json: JSONValue) throws(WireDecodingError) {
        guard case .object(let members) = json else {
            throw WireDecodingError(code: .mistyped, path: "", expectation: "must be a JSON object")
        }
        self.members = members
    }


    /// A nested model, its errors placed at `path` in this document.
    private static func decode<Model: WireDecodable>(_ value: JSONValue, at path: String) throws(WireDecodingError) -> Model {
        do {
            return try Model(json: value)
        } catch {
            throw error.nested(under: path)
        }
    }

    private func mistyped(_ member: String, _ type: String) -> WireDecodingError {
        WireDecodingError(code: .mistyped, path: member, expectation: "must be \(type)")
    }

    private func present(_ member: String) throws(WireDecodingError) -> JSONValue {
        guard let value = members[member], value != .null else {
            throw WireDecodingError(code: .missing, path: member, expectation: "is required")
        }
        return value
    }

    /// The member, when present and not null.
    public func optionalValue(_ member: String) -> JSONValue? {
        guard let value = members[member], value != .null else { return nil }
        return value
    }

    /// The string `member`, or `nil` when absent or null.
    public func optionalString(_ member: String) throws(WireDecodingError) -> String? {
        guard let value = optionalValue(member) else { return nil }
        guard case .string(let string) = value else { throw mistyped(member, "a string") }
        return string
    }

    /// The string `member`.
    public func string(_ member: String) throws(WireDecodingError) -> String {
        guard case .string(let string) = try present(member) else { throw mistyped(member, "a string") }
        return string
    }

    /// The boolean `member`, or `nil` when absent or null.
    public func optionalBool(_ member: String) throws(WireDecodingError) -> Bool? {
        guard let value = optionalValue(member) else { return nil }
        guard case .bool(let bool) = value else { throw mistyped(member, "true or false") }
        return bool
    }

    /// The boolean `member`.
    public func bool(_ member: String) throws(WireDecodingError) -> Bool {
        guard case .bool(let bool) = try present(member) else { throw mistyped(member, "true or false") }
        return bool
    }

    /// The integer `member`, or `nil` when absent or null.
    public func optionalInt(_ member: String) throws(WireDecodingError) -> Int? {
        guard let value = optionalValue(member) else { return nil }
        guard case .number(let number) = value, let int = Int(exactly: number) else { throw mistyped(member, "an integer") }
        return int
    }

    /// The integer `member`.
    public func int(_ member: String) throws(WireDecodingError) -> Int {
        guard case .number(let number) = try present(member), let int = Int(exactly: number) else { throw mistyped(member, "an integer") }
        return int
    }

    /// The RFC 3339 timestamp `member`, or `nil` when absent or null.
    public func optionalTimestamp(_ member: String) throws(WireDecodingError) -> WireTimestamp? {
        guard let text = try optionalString(member) else { return nil }
        guard let timestamp = WireTimestamp(rfc3339: text) else {
            throw WireDecodingError(code: .invalid, path: member, expectation: "must be an RFC 3339 timestamp")
        }
        return timestamp
    }

    /// The RFC 3339 timestamp `member`.
    public func timestamp(_ member: String) throws(WireDecodingError) -> WireTimestamp {
        guard let timestamp = try optionalTimestamp(member) else {
            throw WireDecodingError(code: .missing, path: member, expectation: "is required")
        }
        return timestamp
    }

    /// The array of strings `member`, or `nil` when absent or null.
    public func optionalStrings(_ member: String) throws(WireDecodingError) -> [String]? {
        guard let value = optionalValue(member) else { return nil }
        guard case .array(let elements) = value else { throw mistyped(member, "an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let string) = element else { throw mistyped(member, "an array of strings") }
            strings.append(string)
        }
        return strings
    }

    /// The array of strings `member`.
    public func strings(_ member: String) throws(WireDecodingError) -> [String] {
        _ = try present(member)
        return try optionalStrings(member) ?? []
    }

    /// The nested model `member`, or `nil` when absent or null.
    public func optionalModel<Model: WireDecodable>(_ member: String, as type: Model.Type = Model.self) throws(WireDecodingError) -> Model? {
        guard let value = optionalValue(member) else { return nil }
        return try Self.decode(value, at: member)
    }

    /// The nested model `member`.
    public func model<Model: WireDecodable>(_ member: String, as type: Model.Type = Model.self) throws(WireDecodingError) -> Model {
        try Self.decode(try present(member), at: member)
    }

    /// The array of nested models `member`, or `nil` when absent or null.
    public func optionalModels<Model: WireDecodable>(_ member: String, as type: Model.Type = Model.self) throws(WireDecodingError) -> [Model]? {
        guard let value = optionalValue(member) else { return nil }
        guard case .array(let elements) = value else { throw mistyped(member, "an array") }
        var models: [Model] = []
        models.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            models.append(try Self.decode(element, at: "\(member)[\(index)]"))
        }
        return models
    }

    /// The array of nested models `member`.
    public func models<Model: WireDecodable>(_ member: String, as type: Model.Type = Model.self) throws(WireDecodingError) -> [Model] {
        _ = try present(member)
        return try optionalModels(member) ?? []
    }
}


extension JSONValue {
    /// `value` as a JSON string, or `null` when it is `nil`.
    public static func optional(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }

    /// An integer as a JSON number.
    public static func integer(_ value: Int) -> JSONValue {
        .number(Double(value))
    }
}
