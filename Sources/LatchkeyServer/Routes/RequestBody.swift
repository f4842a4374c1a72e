import LatchkeyJOSE
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// Reading request bodies into their `LatchkeyWire` models, and the one check of a string
/// member's length, for every route.
extension HTTPRequest {
    /// The JSON body read as `Model`.
    ///
    /// - Throws: 400 `invalid_request` for a body that is not a JSON object, or naming the first
    ///   member that is missing or mistyped, as `WireDecodingError` describes it
    ///   (`username is required`, `code must be a string`).
    func wireBody<Model: WireDecodable>(_ type: Model.Type = Model.self) throws -> Model {
        try Self.decode(Model.self, try jsonBody())
    }

    /// The body read as `Model` from either form: OAuth clients send form fields, apps may send
    /// JSON; both carry flat string fields, read here as one JSON object (`/v1/token`, `/v1/revoke`).
    ///
    /// - Throws: 415 for another media type; 400 `invalid_request` as ``wireBody(_:)`` does, or
    ///   for a JSON member that is not a string.
    func fieldsBody<Model: WireDecodable>(_ type: Model.Type = Model.self) throws -> Model {
        try requireMediaType(["application/json", "application/x-www-form-urlencoded"])
        if mediaType(is: "application/x-www-form-urlencoded") { return try Self.decode(Model.self, .object(try formBody().mapValues(JSONValue.string))) }
        guard case .object(let members) = try jsonBody() else { throw HTTPError.invalidRequest("the body must be a JSON object") }
        for (name, value) in members where value.stringValue == nil {
            throw HTTPError.invalidRequest("\(name) must be a string")
        }
        return try Self.decode(Model.self, .object(members))
    }

    private static func decode<Model: WireDecodable>(_ type: Model.Type, _ json: JSONValue) throws -> Model {
        do {
            return try Model(json: json)
        } catch {
            throw HTTPError.invalidRequest(error.description)
        }
    }
}

/// The checks of a body's string members that the wire contract states: present, not empty,
/// not longer than documented.
enum BodyMember {
    /// `value` of the member `name`, which must be non-empty and at most `maxLength` bytes.
    ///
    /// - Throws: 400 `invalid_request` naming the member and its limit.
    static func text(_ value: String, _ name: String, maxLength: Int) throws -> String {
        guard !value.isEmpty, value.utf8.count <= maxLength else {
            throw HTTPError.invalidRequest("\(name) must be a non-empty string of at most \(maxLength) bytes")
        }
        return value
    }

    /// ``text(_:_:maxLength:)`` for an optional member: absent or null is `nil`.
    static func text(_ value: String?, _ name: String, maxLength: Int) throws -> String? {
        try value.map { try text($0, name, maxLength: maxLength) }
    }

    /// The bytes of the binary member `name`: base64url without padding, or standard base64 with
    /// padding (what `SecKey` and CryptoKit hand an app).
    static func binary(_ value: String, _ name: String, maxLength: Int = 512) throws -> [UInt8] {
        guard let bytes = Base64URL.decodeLenient(try text(value, name, maxLength: maxLength)) else {
            throw HTTPError.invalidRequest("\(name) is not base64url or base64")
        }
        return bytes
    }
}
