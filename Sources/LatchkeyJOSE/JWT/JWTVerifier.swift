package import FoundationEssentials
package import LatchkeyJSON

/// A JWT that passed every check.
package struct VerifiedJWT: Sendable {
    /// The protected header's members.
    package var header: [String: JSONValue]
    /// The claims.
    package var claims: JWTClaims
    /// The `kid` of the key that verified it.
    package var keyID: String?
}

/// Verifies JWTs against one key set and one policy.
///
/// The order of checks is fixed: structure, algorithm allow-list, `typ`, key lookup, signature,
/// then claims. Nothing in the payload is read before the signature holds.
package struct JWTVerifier: Sendable {
    /// The trusted keys.
    package var keys: JWSKeySet
    /// The rules.
    package var policy: JWTValidationPolicy
    /// Tokens these keys already verified; `nil` to check every token in full.
    package var cache: VerifiedJWTCache?

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - keys: The trusted keys.
    ///   - policy: The rules.
    ///   - cache: Tokens `keys` already verified, kept with `keys` by the caller (see
    ///     ``VerifiedJWTCache``); `nil` to check every token in full.
    package init(keys: JWSKeySet, policy: JWTValidationPolicy, cache: VerifiedJWTCache? = nil) {
        self.keys = keys
        self.policy = policy
        self.cache = cache
    }

    /// Verifies a compact JWT.
    ///
    /// - Parameters:
    ///   - token: The compact JWS.
    ///   - now: The time to check `exp`, `nbf` and `iat` against; injected so tests can move it.
    /// - Returns: The header and claims.
    /// - Throws: ``JOSEError`` whose code names the failed check.
    package func verify(_ token: some StringProtocol, now: Date = Date()) throws(JOSEError) -> VerifiedJWT {
        if let cache, let known = cache.entry(for: String(token)) {
            // The same bytes verified against these keys: only what depends on the policy and
            // the clock is left to check, in the same order.
            try checkAlgorithm(known.algorithm)
            try policy.checkType(known.type)
            try policy.checkClaims(known.jwt.claims, now: now)
            return known.jwt
        }
        let jws = try JWS(compact: token)
        try checkAlgorithm(jws.algorithm)
        try policy.checkType(jws.type)
        try jws.verify(with: keys, algorithms: policy.algorithms)
        let claims = try JWTClaims(json: try JOSEJSON.parse(jws.payload, what: "the claims"))
        try policy.checkClaims(claims, now: now)
        let verified = VerifiedJWT(header: jws.header, claims: claims, keyID: jws.keyID)
        cache?.insert(.init(jwt: verified, algorithm: jws.algorithm, type: jws.type), for: String(token))
        return verified
    }

    private func checkAlgorithm(_ algorithm: JWSAlgorithm) throws(JOSEError) {
        guard policy.algorithms.contains(algorithm) else {
            throw JOSEError(.algorithmNotAllowed, "\(algorithm) is not allowed here")
        }
    }
}

extension JWSSigner {
    /// Signs claims as a JWT.
    ///
    /// - Parameters:
    ///   - claims: The claims.
    ///   - type: The `typ` header, e.g. `at+jwt` (RFC 9068); `JWT` by default.
    /// - Returns: The compact JWT.
    /// - Throws: ``LatchkeyCrypto/CryptoError`` if the crypto library fails.
    package func sign(_ claims: JWTClaims, type: String? = "JWT") throws -> String {
        var header = [String: JSONValue]()
        if let type { header["typ"] = .string(type) }
        return try JWS.sign(payload: claims.serialized, header: header, signer: self)
    }
}

/// Inspection without verification, for tools and logs. The name says what it is.
package enum Insecure {
    /// The header and claims of a compact JWT, *without verifying anything*.
    ///
    /// - Throws: ``JOSEError/Code/malformed`` when the token cannot be read.
    package static func unverifiedContents(of token: some StringProtocol) throws(JOSEError) -> (header: [String: JSONValue], claims: JSONValue) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= JWS.maxCompactLength,
            let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1])
        else { throw .malformed("not a compact JWS") }
        return (try JOSEJSON.parseObject(header, what: "the header"), try JOSEJSON.parse(payload, what: "the claims"))
    }
}
