import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON

/// The string fields of a JSON object body, with clear errors for what is missing or mistyped.
struct JSONFields {
    let members: [String: JSONValue]

    init(_ request: HTTPRequest) throws {
        guard case .object(let members) = try request.jsonBody() else { throw HTTPError.invalidRequest("the body must be a JSON object") }
        self.members = members
    }

    /// The string `name`, or `nil` when it is absent or null.
    ///
    /// - Throws: `invalid_request` when it is not a string, empty or longer than `maxLength` bytes.
    func optional(_ name: String, maxLength: Int) throws -> String? {
        switch members[name] {
        case nil, .null?:
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

    /// The string `name`.
    ///
    /// - Throws: `invalid_request` when it is absent, not a string, empty or too long.
    func required(_ name: String, maxLength: Int) throws -> String {
        guard let value = try optional(name, maxLength: maxLength) else { throw HTTPError.invalidRequest("\(name) is required") }
        return value
    }

    /// The required binary field `name`: base64url without padding, or standard base64 with
    /// padding (what `SecKey` and CryptoKit hand an app).
    func binary(_ name: String, maxLength: Int = 512) throws -> [UInt8] {
        guard let bytes = Base64URL.decodeLenient(try required(name, maxLength: maxLength)) else {
            throw HTTPError.invalidRequest("\(name) is not base64url or base64")
        }
        return bytes
    }
}
