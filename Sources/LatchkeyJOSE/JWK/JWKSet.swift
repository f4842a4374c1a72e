/// A JWK Set (RFC 7517 §5): `{"keys": [...]}`.
public struct JWKSet: Sendable, Hashable {
    /// The keys, in document order.
    public var keys: [JWK]

    /// Creates a set from keys.
    public init(keys: [JWK]) { self.keys = keys }

    /// Parses a JWK Set.
    ///
    /// A key with a `kty` this library does not know is skipped, as RFC 7517 §5 requires; a known
    /// key that is malformed makes the whole set malformed, because a half-read set could verify
    /// with the wrong key.
    ///
    /// - Throws: ``JOSEError/Code/malformed``.
    public init(parsing bytes: some Collection<UInt8>) throws(JOSEError) {
        try self.init(json: try JOSEJSON.parse(bytes, what: "JWK Set"))
    }

    /// Reads a JWK Set from parsed JSON; see ``init(parsing:)``.
    public init(json: JSONValue) throws(JOSEError) {
        guard case .array(let entries)? = json["keys"] else { throw .malformed("a JWK Set needs a keys array") }
        var keys = [JWK]()
        for entry in entries {
            guard let keyType = entry["kty"]?.stringValue, ["EC", "RSA", "oct"].contains(keyType) else { continue }
            keys.append(try JWK(json: entry))
        }
        self.keys = keys
    }

    /// The set as JSON; the set's public form when every key is public.
    public var json: JSONValue { ["keys": .array(keys.map(\.json))] }

    /// The key with this `kid`.
    public subscript(keyID keyID: String) -> JWK? { keys.first { $0.keyID == keyID } }
}
