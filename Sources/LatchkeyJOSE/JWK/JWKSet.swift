package import LatchkeyJSON
/// A JWK Set (RFC 7517 §5): `{"keys": [...]}`.
package struct JWKSet: Sendable, Hashable {
    /// The keys that could be read, in document order.
    package var keys: [JWK]
    /// The members that could not be read as a JWK, in document order (docs/security.md S30).
    package var skipped: [SkippedKey]

    /// Creates a set from keys.
    package init(keys: [JWK]) {
        self.keys = keys
        self.skipped = []
    }

    /// Parses a JWK Set.
    ///
    /// The document itself is strict: it must be JSON with a `keys` array. Its members are not:
    /// one that is malformed, or has a `kty` this library does not know (RFC 7517 §5 says to
    /// ignore those), is set aside in ``skipped`` with its reason, so a set that also lists a key
    /// we cannot read keeps serving with the rest (S30).
    ///
    /// - Throws: ``JOSEError/Code/malformed`` when the document is not a JWK Set.
    package init(parsing bytes: some Collection<UInt8>) throws(JOSEError) {
        try self.init(json: try JOSEJSON.parse(bytes, what: "JWK Set"))
    }

    /// Reads a JWK Set from parsed JSON; see ``init(parsing:)``.
    package init(json: JSONValue) throws(JOSEError) {
        guard case .object = json, case .array(let entries)? = json["keys"] else { throw .malformed("a JWK Set needs a keys array") }
        var keys = [JWK]()
        var skipped = [SkippedKey]()
        for entry in entries {
            // A kid is kept only when it is a string, so a token naming it learns why it fails.
            let keyID = entry["kid"]?.stringValue
            guard let keyType = entry["kty"]?.stringValue else {
                skipped.append(SkippedKey(keyID: keyID, reason: .malformed, detail: "the member is not a JWK with a kty string"))
                continue
            }
            guard JWK.knownKeyTypes.contains(keyType) else {
                skipped.append(SkippedKey(keyID: keyID, reason: .unsupportedKeyType, detail: "kty \(keyType.prefix(20)) is not supported"))
                continue
            }
            do {
                keys.append(try JWK(json: entry))
            } catch {
                skipped.append(SkippedKey(keyID: keyID, reason: .malformed, detail: error.message))
            }
        }
        self.keys = keys
        self.skipped = skipped
    }

    /// The set as JSON; the set's public form when every key is public. Skipped members are not
    /// written.
    package var json: JSONValue { ["keys": .array(keys.map(\.json))] }

    /// The key with this `kid`.
    package subscript(keyID keyID: String) -> JWK? { keys.first { $0.keyID == keyID } }
}

/// A key a JWK Set lists that cannot be used, and why (docs/security.md S30).
///
/// Consumers log each one and count it by ``reason``; a token that names a skipped key's `kid`
/// fails with ``JOSEError/Code/invalidKey`` saying the key was skipped and why.
package struct SkippedKey: Sendable, Hashable, CustomStringConvertible {
    /// Why a key was skipped: a closed set of short names, safe as a metric label.
    package struct Reason: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The short name, e.g. `weak_key`.
        package var description: String { name }

        /// Not a JSON object with a `kty` string, a member of the wrong type, bad base64url, or a
        /// required member missing.
        package static let malformed = Reason("malformed")
        /// A `kty` other than `EC`, `RSA` and `oct`.
        package static let unsupportedKeyType = Reason("unsupported_key_type")
        /// An `alg` we do not implement or that does not fit the key type, or an RSA key with no
        /// `alg` where no default was given.
        package static let unsupportedAlgorithm = Reason("unsupported_algorithm")
        /// An EC curve other than P-256.
        package static let unsupportedCurve = Reason("unsupported_curve")
        /// `use` is not `sig`, or `key_ops` does not allow `verify`.
        package static let notForSigning = Reason("not_for_signing")
        /// An RSA modulus under 2048 bits (RFC 7518 §3.3), or an HMAC secret under 32 bytes.
        package static let weakKey = Reason("weak_key")
        /// Key material the import policy refuses: a point off the curve, an even modulus, a bad
        /// exponent, the ROCA fingerprint.
        package static let invalidKey = Reason("invalid_key")
        /// A symmetric (`oct`) key where only public keys are accepted.
        package static let symmetricKey = Reason("symmetric_key")
        /// The `kid` is listed more than once, so no key can be chosen for it safely.
        package static let duplicateKeyID = Reason("duplicate_kid")
    }

    /// The member's `kid`, when it has a string one: document data, never a metric label.
    package var keyID: String?
    /// Why it was skipped.
    package var reason: Reason
    /// A sentence for a developer; never holds key bytes.
    package var detail: String

    /// Creates a record of a skipped key.
    package init(keyID: String?, reason: Reason, detail: String) {
        self.keyID = keyID
        self.reason = reason
        self.detail = detail
    }

    package var description: String { "\(reason): \(detail)" }
}
