package import LatchkeyCrypto
package import LatchkeyJSON

/// A JSON Web Key (RFC 7517) holding a public key (or, for tests and the sandbox, a private one).
///
/// Only the members Latchkey uses are kept: `kty`, `crv`, `x`, `y`, `n`, `e`, `k`, `d` and the
/// metadata `kid`, `use`, `key_ops`, `alg`. Binary members are strict base64url (RFC 7518 §6);
/// a member of the wrong JSON type or with bad base64url makes the whole key malformed.
package struct JWK: Sendable, Hashable {
    /// `kty`: `EC`, `RSA`, `oct`, or `OKP` (RFC 8037; read for DPoP proofs' Ed25519 keys).
    package var keyType: String
    /// The key types this library reads; a JWK Set skips members of any other (RFC 7517 §5).
    static let knownKeyTypes: Set<String> = ["EC", "RSA", "oct"]
    /// `crv` for EC keys, e.g. `P-256`.
    package var curve: String?
    /// EC public coordinates (`x`, `y`) and private scalar (`d`).
    package var x: [UInt8]?, y: [UInt8]?, d: [UInt8]?
    /// RSA modulus (`n`) and public exponent (`e`).
    package var modulus: [UInt8]?, exponent: [UInt8]?
    /// Symmetric key bytes (`k`).
    package var symmetricKey: [UInt8]?
    /// `kid`: a lookup key only, never a path or URL (docs/security.md S3).
    package var keyID: String?
    /// `use`: `sig` or `enc`.
    package var use: String?
    /// `key_ops`, e.g. `["verify"]`.
    package var keyOperations: [String]?
    /// `alg`: the one algorithm this key is for.
    package var algorithm: JWSAlgorithm?

    /// Creates a JWK from its members; see the properties for their meaning.
    package init(
        keyType: String, curve: String? = nil, x: [UInt8]? = nil, y: [UInt8]? = nil, d: [UInt8]? = nil,
        modulus: [UInt8]? = nil, exponent: [UInt8]? = nil, symmetricKey: [UInt8]? = nil,
        keyID: String? = nil, use: String? = nil, keyOperations: [String]? = nil, algorithm: JWSAlgorithm? = nil
    ) {
        self.keyType = keyType
        self.curve = curve
        self.x = x
        self.y = y
        self.d = d
        self.modulus = modulus
        self.exponent = exponent
        self.symmetricKey = symmetricKey
        self.keyID = keyID
        self.use = use
        self.keyOperations = keyOperations
        self.algorithm = algorithm
    }

    /// The public JWK of a P-256 key, for ES256.
    package init(_ key: P256.Signing.PublicKey, keyID: String?) {
        self.init(keyType: "EC", curve: "P-256", x: key.x, y: key.y, keyID: keyID, use: "sig", algorithm: .es256)
    }

    /// The public JWK of an RSA key, for RS256 or PS256.
    package init(_ key: RSA.Signing.PublicKey, algorithm: JWSAlgorithm, keyID: String?) {
        self.init(
            keyType: "RSA", modulus: key.modulus, exponent: key.exponent, keyID: keyID, use: "sig",
            algorithm: algorithm)
    }

    /// Reads a JWK from a parsed JSON object.
    ///
    /// - Throws: ``JOSEError/Code/malformed`` when a member has the wrong type or bad base64url.
    package init(json: JSONValue) throws(JOSEError) {
        guard case .object(let members) = json else { throw .malformed("a JWK must be a JSON object") }
        func string(_ name: String) throws(JOSEError) -> String? {
            switch members[name] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw .malformed("JWK member \(name) must be a string")
            }
        }
        func bytes(_ name: String) throws(JOSEError) -> [UInt8]? {
            guard let text = try string(name) else { return nil }
            guard let bytes = Base64URL.decode(text) else { throw .malformed("JWK member \(name) is not base64url") }
            return bytes
        }
        guard let keyType = try string("kty") else { throw .malformed("a JWK needs kty") }
        self.keyType = keyType
        self.curve = try string("crv")
        self.x = try bytes("x")
        self.y = try bytes("y")
        self.d = try bytes("d")
        self.modulus = try bytes("n")
        self.exponent = try bytes("e")
        self.symmetricKey = try bytes("k")
        self.keyID = try string("kid")
        self.use = try string("use")
        self.algorithm = try string("alg").map(JWSAlgorithm.init(rawValue:))
        switch members["key_ops"] {
        case nil: self.keyOperations = nil
        case .array(let values)?:
            let operations = values.compactMap(\.stringValue)
            guard operations.count == values.count else { throw .malformed("JWK key_ops must hold strings") }
            self.keyOperations = operations
        default: throw .malformed("JWK key_ops must be an array")
        }
    }

    /// Parses a JWK from JSON text.
    package init(parsing bytes: some Collection<UInt8>) throws(JOSEError) {
        try self.init(json: try JOSEJSON.parse(bytes, what: "JWK"))
    }

    /// The JWK as a JSON object, with only the members that are set.
    package var json: JSONValue {
        var members = [String: JSONValue]()
        members["kty"] = .string(keyType)
        func put(_ name: String, _ value: String?) { if let value { members[name] = .string(value) } }
        func put(_ name: String, _ value: [UInt8]?) { if let value { members[name] = .string(Base64URL.encode(value)) } }
        put("crv", curve)
        put("x", x)
        put("y", y)
        put("d", d)
        put("n", modulus)
        put("e", exponent)
        put("k", symmetricKey)
        put("kid", keyID)
        put("use", use)
        put("alg", algorithm?.rawValue)
        if let keyOperations { members["key_ops"] = .array(keyOperations.map(JSONValue.string)) }
        return .object(members)
    }

    /// The same key without its private or symmetric parts.
    package var publicKey: JWK {
        var copy = self
        copy.d = nil
        copy.symmetricKey = nil
        return copy
    }

    /// The RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order,
    /// base64url-encoded.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` when a required member is missing.
    package func thumbprint() throws(JOSEError) -> String {
        let required: [String]
        switch keyType {
        case "EC": required = ["crv", "kty", "x", "y"]
        case "RSA": required = ["e", "kty", "n"]
        case "oct": required = ["k", "kty"]
        case "OKP": required = ["crv", "kty", "x"]
        default: throw JOSEError(.invalidKey, "no thumbprint is defined for kty \(keyType)")
        }
        let all = json.objectValue ?? [:]
        var members = [String: JSONValue]()
        for name in required {
            guard let value = all[name] else { throw JOSEError(.invalidKey, "thumbprint needs member \(name)") }
            members[name] = value
        }
        return Base64URL.encode(HashFunction.sha256.hash(JSONValue.object(members).serialized))
    }
}
