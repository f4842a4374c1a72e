package import FoundationEssentials
package import LatchkeyJSON

/// The claims of a JWT (RFC 7519 §4), with typed access to the registered ones.
///
/// Registered claims of the wrong JSON type make the token malformed when read through
/// ``init(json:)``, so `"exp": "tomorrow"` cannot slip past a time check.
package struct JWTClaims: Sendable, Hashable {
    /// Every claim, registered or not.
    package var members: [String: JSONValue]

    /// Claims from members, unchecked; for building tokens to sign.
    package init(_ members: [String: JSONValue] = [:]) { self.members = members }

    /// Reads claims from a JSON object, checking the registered claims' types.
    ///
    /// - Throws: ``JOSEError/Code/malformed``.
    package init(json: JSONValue) throws(JOSEError) {
        guard case .object(let members) = json else { throw .malformed("the claims must be a JSON object") }
        for name in ["iss", "sub", "jti"] where members[name] != nil && members[name]?.stringValue == nil {
            throw .malformed("claim \(name) must be a string")
        }
        for name in ["exp", "nbf", "iat"] where members[name] != nil && members[name]?.numberValue == nil {
            throw .malformed("claim \(name) must be a number")
        }
        switch members["aud"] {
        case nil, .string?: break
        case .array(let values)? where values.allSatisfy({ $0.stringValue != nil }): break
        default: throw .malformed("claim aud must be a string or an array of strings")
        }
        self.members = members
    }

    /// The claim `name`.
    package subscript(name: String) -> JSONValue? {
        get { members[name] }
        set { members[name] = newValue }
    }

    /// `iss` (RFC 7519 §4.1.1).
    package var issuer: String? {
        get { members["iss"]?.stringValue }
        set { members["iss"] = newValue.map(JSONValue.string) }
    }

    /// `sub` (RFC 7519 §4.1.2).
    package var subject: String? {
        get { members["sub"]?.stringValue }
        set { members["sub"] = newValue.map(JSONValue.string) }
    }

    /// `aud` (RFC 7519 §4.1.3), a single string or an array; always read as an array.
    package var audience: [String] {
        get {
            switch members["aud"] {
            case .string(let value)?: return [value]
            case .array(let values)?: return values.compactMap(\.stringValue)
            default: return []
            }
        }
        set { members["aud"] = newValue.count == 1 ? .string(newValue[0]) : .array(newValue.map(JSONValue.string)) }
    }

    /// `exp` (RFC 7519 §4.1.4).
    package var expiresAt: Date? {
        get { date("exp") }
        set { setDate("exp", newValue) }
    }

    /// `nbf` (RFC 7519 §4.1.5).
    package var notBefore: Date? {
        get { date("nbf") }
        set { setDate("nbf", newValue) }
    }

    /// `iat` (RFC 7519 §4.1.6).
    package var issuedAt: Date? {
        get { date("iat") }
        set { setDate("iat", newValue) }
    }

    /// `jti` (RFC 7519 §4.1.7).
    package var tokenID: String? {
        get { members["jti"]?.stringValue }
        set { members["jti"] = newValue.map(JSONValue.string) }
    }

    private func date(_ name: String) -> Date? {
        members[name]?.numberValue.map { Date(timeIntervalSince1970: $0) }
    }

    /// NumericDate is seconds since the epoch; we write whole seconds.
    private mutating func setDate(_ name: String, _ date: Date?) {
        members[name] = date.map { .number($0.timeIntervalSince1970.rounded(.down)) }
    }

    /// The claims as compact JSON, ready to sign.
    package var serialized: [UInt8] { JSONValue.object(members).serialized }
}
