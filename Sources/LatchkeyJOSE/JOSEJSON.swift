import LatchkeyJSON
/// JSON reading shared by the JOSE types: strict parsing mapped to ``JOSEError``.
enum JOSEJSON {
    /// Parses strict JSON; any ``JSONError`` becomes a malformed-`what` error.
    static func parse(_ bytes: some Collection<UInt8>, what: String) throws(JOSEError) -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch let error as JSONError {
            throw .malformed("\(what) is not valid JSON (\(error))")
        } catch {
            throw .malformed("\(what) is not valid JSON")
        }
    }

    /// Parses strict JSON that must be an object.
    static func parseObject(_ bytes: some Collection<UInt8>, what: String) throws(JOSEError) -> [String: JSONValue] {
        guard case .object(let members) = try parse(bytes, what: what) else {
            throw .malformed("\(what) must be a JSON object")
        }
        return members
    }
}
