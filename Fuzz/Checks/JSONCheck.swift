import LatchkeyJSON

extension FuzzTarget {
    /// The strict JSON parser (RFC 8259) and the serializer that writes what we sign.
    ///
    /// Properties: a refusal is a ``JSONError``; an accepted value serializes to text that parses
    /// back to an equal value, and that text is a fixed point of parse-then-serialize (sorted,
    /// compact output is what RFC 7638 thumbprints and our token signatures rely on).
    public static let json = FuzzTarget(name: "json") { (input) throws(PropertyFailure) in
        let value: JSONValue
        do {
            value = try JSONValue(parsing: input)
        } catch is JSONError {
            return .refused
        } catch {
            throw PropertyFailure("refused with \(type(of: error)), not a JSONError")
        }
        let text = value.serialized
        let again: JSONValue
        do {
            again = try JSONValue(parsing: text)
        } catch {
            throw PropertyFailure("the serialized form does not parse: \(error)")
        }
        try require(again == value, "parse(serialize(v)) differs from v")
        try require(again.serialized == text, "serialize is not a fixed point")
        return .accepted
    }
}
