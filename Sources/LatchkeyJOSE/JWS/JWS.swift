import LatchkeyCrypto
package import LatchkeyJSON

/// A JWS in compact serialization (RFC 7515 §7.1), parsed but not yet verified.
///
/// Only the compact form is accepted (docs/security.md S2): three base64url parts, no JSON
/// serialization, no JWE (five parts). The signature is checked over the exact bytes received,
/// never over a re-encoding (RFC 7515 A.3 has a payload with CRLF that must survive).
package struct JWS: Sendable {
    /// The protected header's members.
    package let header: [String: JSONValue]
    /// The decoded payload bytes.
    package let payload: [UInt8]
    /// The decoded signature bytes.
    package let signature: [UInt8]
    /// The header's `alg`.
    package let algorithm: JWSAlgorithm
    /// The header's `kid`, a lookup key only.
    package let keyID: String?
    /// The header's `typ`.
    package let type: String?
    private let signingInput: ArraySlice<UInt8>

    /// The largest compact JWS accepted: far above any identity or access token.
    package static let maxCompactLength = 16 * 1024

    /// Header members that would take the key from the token; refused (docs/security.md S3).
    private static let keyCarryingHeaders = ["jwk", "jku", "x5u", "x5c"]

    /// Parses a compact JWS.
    ///
    /// - Parameters:
    ///   - compact: `header.payload.signature`.
    ///   - allowingEmbeddedJWK: Whether the header may carry its own public key in `jwk`, as a
    ///     DPoP proof must (RFC 9449 §4.2): the caller then verifies with that key and trusts it
    ///     only as far as it is bound to something else (a token's `cnf.jkt`). `jku`, `x5u` and
    ///     `x5c` stay refused.
    /// - Throws: ``JOSEError`` `malformed` for structure, base64url or JSON problems (duplicate
    ///   names, bad UTF-8), `unsupportedAlgorithm` for `none` or an algorithm we do not implement,
    ///   `unsupportedHeader` for `crit` or key-carrying members.
    package init(compact: some StringProtocol, allowingEmbeddedJWK: Bool = false) throws(JOSEError) {
        guard compact.utf8.count <= JWS.maxCompactLength else {
            throw .malformed("the token is longer than \(JWS.maxCompactLength) bytes")
        }
        let bytes = Array(compact.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw .malformed(dots.count == 4 ? "a JWE is not accepted here" : "not a compact JWS (three parts)")
        }
        guard let headerBytes = Base64URL.decode(bytes: bytes[..<dots[0]]),
            let payload = Base64URL.decode(bytes: bytes[(dots[0] + 1)..<dots[1]]),
            let signature = Base64URL.decode(bytes: bytes[(dots[1] + 1)...])
        else { throw .malformed("a part is not base64url") }

        let header = try JOSEJSON.parseObject(headerBytes, what: "the JWS header")
        guard case .string(let alg)? = header["alg"] else { throw .malformed("the header has no alg string") }
        let algorithm = JWSAlgorithm(rawValue: alg)
        guard JWSAlgorithm.supported.contains(algorithm) else {
            throw JOSEError(.unsupportedAlgorithm, "alg \(alg.prefix(20)) is not supported")
        }
        if header["crit"] != nil {
            throw JOSEError(.unsupportedHeader, "no crit extension is understood")
        }
        if let name = JWS.keyCarryingHeaders.first(where: { header[$0] != nil && !(allowingEmbeddedJWK && $0 == "jwk") }) {
            throw JOSEError(.unsupportedHeader, "keys are never taken from the token (\(name))")
        }
        self.keyID = try Self.optionalString(header, "kid")
        self.type = try Self.optionalString(header, "typ")
        self.header = header
        self.payload = payload
        self.signature = signature
        self.algorithm = algorithm
        self.signingInput = bytes[..<dots[1]]
    }

    private static func optionalString(_ header: [String: JSONValue], _ name: String) throws(JOSEError) -> String? {
        switch header[name] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .malformed("header member \(name) must be a string")
        }
    }

    /// Whether the signature verifies with one of the keys the set offers for this header.
    ///
    /// - Parameters:
    ///   - keys: The trusted keys.
    ///   - algorithms: The context's allow-list (docs/security.md S1).
    /// - Throws: ``JOSEError`` `algorithmNotAllowed`, `unknownKey` or `invalidSignature`.
    package func verify(with keys: JWSKeySet, algorithms: Set<JWSAlgorithm>) throws(JOSEError) {
        guard algorithms.contains(algorithm) else {
            throw JOSEError(.algorithmNotAllowed, "\(algorithm) is not allowed here")
        }
        let candidates = try keys.candidates(keyID: keyID, algorithm: algorithm)
        guard candidates.contains(where: { $0.isValidSignature(signature, for: signingInput) }) else {
            throw JOSEError(.invalidSignature, "the signature does not verify")
        }
    }

    /// Whether the signature verifies with this one key, whose algorithm must be the header's.
    ///
    /// - Throws: ``JOSEError`` `algorithmNotAllowed` or `invalidSignature`.
    package func verify(with key: JWSVerificationKey) throws(JOSEError) {
        guard key.algorithm == algorithm else {
            throw JOSEError(.algorithmNotAllowed, "the key is for \(key.algorithm), the header says \(algorithm)")
        }
        guard key.isValidSignature(signature, for: signingInput) else {
            throw JOSEError(.invalidSignature, "the signature does not verify")
        }
    }

    /// Signs a payload and returns the compact JWS.
    ///
    /// - Parameters:
    ///   - payload: The payload bytes.
    ///   - header: Extra header members (`typ`, ...); `alg` and `kid` come from the signer.
    ///   - signer: The key that signs.
    /// - Throws: ``CryptoError`` if the crypto library fails.
    package static func sign(payload: some Collection<UInt8>, header: [String: JSONValue] = [:], signer: JWSSigner) throws -> String {
        var header = header
        header["alg"] = .string(signer.algorithm.rawValue)
        if let keyID = signer.keyID { header["kid"] = .string(keyID) }
        let signingInput = Base64URL.encode(JSONValue.object(header).serialized) + "." + Base64URL.encode(payload)
        let signature = try signer.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
