import LatchkeyHTTP
import LatchkeyJOSE

/// The string fields of a JSON object body, with clear errors for what is missing or mistyped.
struct JSONFields {
    let members: [String: JSONValue]

    init(_ request: HTTPRequest) throws {
        guard case .object(let members) = try request.jsonBody() else { throw HTTPError.invalidRequest("the body must be a JSON object") }
        self.members = members
    }

    /// The string `name`: `nil` when absent or null and not required.
    ///
    /// - Throws: `invalid_request` when it is required and absent, not a string, empty or too long.
    func string(_ name: String, required: Bool = true, maxLength: Int) throws -> String? {
        switch members[name] {
        case nil, .null?:
            if required { throw HTTPError.invalidRequest("\(name) is required") }
            return nil
        case .string(let value)?:
            guard !value.isEmpty, value.utf8.count <= maxLength else {
                throw HTTPError.invalidRequest("\(name) must be a non-empty string of at most \(maxLength) bytes")
            }
            return value
        default:
            throw HTTPError.invalidRequest("\(name) must be a string")
        }
    }
}
