/// The keys one verification context trusts, looked up by `kid`.
///
/// Built from keys in code, or from a JWK Set (Apple's, ours). Keys in code must be unambiguous:
/// two keys sharing a `kid`, or symmetric and asymmetric keys mixed, are refused, since either is
/// how algorithm-confusion attacks start. A JWK Set instead keeps serving when it also lists keys
/// we cannot use (docs/security.md S30): those are set aside in ``skipped`` with their reason, and a
/// token naming one fails with ``JOSEError/Code/invalidKey`` saying why.
package struct JWSKeySet: Sendable {
    /// The keys, in the order given.
    package let keys: [JWSVerificationKey]
    /// The JWK Set members that were set aside, and why; empty for keys given in code.
    package let skipped: [SkippedKey]
    private let byKeyID: [String: JWSVerificationKey]
    private let skippedByKeyID: [String: SkippedKey]

    /// Creates a key set.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` on a duplicate `kid` or mixed symmetric and
    ///   asymmetric keys.
    package init(_ keys: [JWSVerificationKey]) throws(JOSEError) {
        try self.init(keys, skipped: [])
    }

    private init(_ keys: [JWSVerificationKey], skipped: [SkippedKey]) throws(JOSEError) {
        var byKeyID = [String: JWSVerificationKey]()
        for key in keys {
            guard let keyID = key.keyID else { continue }
            guard byKeyID.updateValue(key, forKey: keyID) == nil else {
                throw JOSEError(.invalidKey, "two keys share the kid \(keyID.prefix(64))")
            }
        }
        let symmetric = keys.filter { $0.algorithm == .hs256 }.count
        guard symmetric == 0 || symmetric == keys.count else {
            throw JOSEError(.invalidKey, "a key set may not mix symmetric and asymmetric keys")
        }
        var skippedByKeyID = [String: SkippedKey]()
        for entry in skipped {
            guard let keyID = entry.keyID else { continue }
            // An ambiguous kid says so, whatever else is wrong with one of its keys.
            if skippedByKeyID[keyID] == nil || entry.reason == .duplicateKeyID { skippedByKeyID[keyID] = entry }
        }
        self.keys = keys
        self.skipped = skipped
        self.byKeyID = byKeyID
        self.skippedByKeyID = skippedByKeyID
    }

    /// Creates a key set from a JWK Set; see ``JWSVerificationKey/init(jwk:defaultAlgorithm:allowSymmetric:)``.
    ///
    /// A key that cannot be used is skipped with its reason, next to the members the JWK Set
    /// could not read (S30). A `kid` the document lists more than once is ambiguous: every key
    /// with it is skipped (`duplicate_kid`), since picking one could verify with the wrong key.
    ///
    /// - Throws: ``JOSEError/Code/invalidKey`` only when `allowSymmetric` lets symmetric and
    ///   asymmetric keys in together.
    package init(jwks: JWKSet, defaultAlgorithm: JWSAlgorithm? = nil, allowSymmetric: Bool = false) throws(JOSEError) {
        var loaded = [JWSVerificationKey]()
        var skipped = jwks.skipped
        for jwk in jwks.keys {
            do {
                loaded.append(try JWSVerificationKey.load(jwk, defaultAlgorithm: defaultAlgorithm, allowSymmetric: allowSymmetric))
            } catch {
                skipped.append(SkippedKey(keyID: jwk.keyID, reason: error.reason, detail: error.detail))
            }
        }
        var listed = [String: Int]()
        for keyID in jwks.keys.compactMap(\.keyID) + jwks.skipped.compactMap(\.keyID) { listed[keyID, default: 0] += 1 }
        let ambiguous = { (key: JWSVerificationKey) in key.keyID.map { listed[$0, default: 0] > 1 } ?? false }
        for key in loaded where ambiguous(key) {
            skipped.append(SkippedKey(keyID: key.keyID, reason: .duplicateKeyID, detail: "the kid is listed more than once, so its key is ambiguous"))
        }
        loaded.removeAll(where: ambiguous)
        try self.init(loaded, skipped: skipped)
    }

    /// The keys that may check a token with this header: the one whose `kid` matches, or, for a
    /// header without `kid`, every key of the token's algorithm.
    func candidates(keyID: String?, algorithm: JWSAlgorithm) throws(JOSEError) -> [JWSVerificationKey] {
        guard let keyID else {
            let matching = keys.filter { $0.algorithm == algorithm }
            guard !matching.isEmpty else { throw JOSEError(.unknownKey, "no \(algorithm) key for a token without kid") }
            return matching
        }
        guard let key = byKeyID[keyID] else {
            if let skipped = skippedByKeyID[keyID] {
                throw JOSEError(.invalidKey, "the key set lists this kid, but its key was skipped as unusable (\(skipped))")
            }
            throw JOSEError(.unknownKey, "no key has this token's kid")
        }
        guard key.algorithm == algorithm else {
            throw JOSEError(.algorithmNotAllowed, "the key for this kid is \(key.algorithm), the token says \(algorithm)")
        }
        return [key]
    }
}
