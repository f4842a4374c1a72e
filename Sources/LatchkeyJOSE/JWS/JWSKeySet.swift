/// The keys one verification context trusts, looked up by `kid`.
///
/// Built from a JWK Set (Apple's, ours) or from keys in code. A set is refused when two keys
/// share a `kid`, or when it mixes symmetric and asymmetric keys: either makes the choice of key
/// ambiguous, which is how algorithm-confusion attacks start.
public struct JWSKeySet: Sendable {
    /// The keys, in the order given.
    public let keys: [JWSVerificationKey]
    private let byKeyID: [String: JWSVerificationKey]

    /// Creates a key set.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` on a duplicate `kid` or mixed symmetric and
    ///   asymmetric keys.
    public init(_ keys: [JWSVerificationKey]) throws(JOSEError) {
        var byKeyID = [String: JWSVerificationKey]()
        for key in keys {
            guard let keyID = key.keyID else { continue }
            guard byKeyID.updateValue(key, forKey: keyID) == nil else {
                throw JOSEError(.invalidKey, "two keys share the kid \(keyID)")
            }
        }
        let symmetric = keys.filter { $0.algorithm == .hs256 }.count
        guard symmetric == 0 || symmetric == keys.count else {
            throw JOSEError(.invalidKey, "a key set may not mix symmetric and asymmetric keys")
        }
        self.keys = keys
        self.byKeyID = byKeyID
    }

    /// Creates a key set from a JWK Set; see ``JWSVerificationKey/init(jwk:defaultAlgorithm:allowSymmetric:)``.
    ///
    /// A key that cannot be used fails the whole set, so a bad key never hides behind good ones.
    public init(jwks: JWKSet, defaultAlgorithm: JWSAlgorithm? = nil, allowSymmetric: Bool = false) throws(JOSEError) {
        var keys = [JWSVerificationKey]()
        for jwk in jwks.keys {
            keys.append(try JWSVerificationKey(jwk: jwk, defaultAlgorithm: defaultAlgorithm, allowSymmetric: allowSymmetric))
        }
        try self.init(keys)
    }

    /// The keys that may check a token with this header: the one whose `kid` matches, or, for a
    /// header without `kid`, every key of the token's algorithm.
    func candidates(keyID: String?, algorithm: JWSAlgorithm) throws(JOSEError) -> [JWSVerificationKey] {
        guard let keyID else {
            let matching = keys.filter { $0.algorithm == algorithm }
            guard !matching.isEmpty else { throw JOSEError(.unknownKey, "no \(algorithm) key for a token without kid") }
            return matching
        }
        guard let key = byKeyID[keyID] else { throw JOSEError(.unknownKey, "no key has this token's kid") }
        guard key.algorithm == algorithm else {
            throw JOSEError(.algorithmNotAllowed, "the key for this kid is \(key.algorithm), the token says \(algorithm)")
        }
        return [key]
    }
}
