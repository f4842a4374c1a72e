import LatchkeyJOSE

extension FuzzTarget {
    /// JWK and JWK Set documents, and public-key import from them.
    ///
    /// Properties: a refusal is `malformed`; an accepted JWK writes JSON that reads back to an
    /// equal JWK; its thumbprint and its import as a verification key either work or fail with
    /// `invalidKey`; an accepted JWK Set round-trips its usable keys, and importing it accounts
    /// for every key: imported, or skipped with a reason (S30), never silently dropped.
    public static let jwk = FuzzTarget(name: "jwk") { (input) throws(PropertyFailure) in
        let key = try expectMalformedOrValue { () throws(JOSEError) in try JWK(parsing: input) }
        if let key { try checkJWK(key) }
        let set = try expectMalformedOrValue { () throws(JOSEError) in try JWKSet(parsing: input) }
        if let set {
            let reread: JWKSet
            do throws(JOSEError) {
                reread = try JWKSet(json: set.json)
            } catch {
                throw PropertyFailure("a JWK Set does not read back from its JSON: \(error.code)")
            }
            try require(reread.keys == set.keys && reread.skipped.isEmpty, "a JWK Set differs after a JSON round trip")
            for key in set.keys { try checkJWK(key) }
            do throws(JOSEError) {
                let keys = try JWSKeySet(jwks: set, defaultAlgorithm: .rs256)
                guard keys.keys.count + keys.skipped.count - set.skipped.count == set.keys.count else {
                    throw JOSEError(.unknownKey, "a key set dropped keys without a reason")
                }
                let keyIDs = keys.keys.compactMap(\.keyID)
                guard Set(keyIDs).count == keyIDs.count else { throw JOSEError(.unknownKey, "a kid serves two keys") }
            } catch {
                try require(error.code == .invalidKey, "a key set refused with \(error.code): \(error)")
            }
        }
        return key != nil || set != nil ? .accepted : .refused
    }

    static func checkJWK(_ key: JWK) throws(PropertyFailure) {
        let reread: JWK
        do throws(JOSEError) {
            reread = try JWK(json: key.json)
        } catch {
            throw PropertyFailure("a JWK does not read back from its JSON: \(error.code)")
        }
        try require(reread == key, "a JWK differs after a JSON round trip")
        do throws(JOSEError) {
            _ = try key.thumbprint()
        } catch {
            try require(error.code == .invalidKey, "thumbprint failed with \(error.code)")
        }
        do throws(JOSEError) {
            let imported = try JWSVerificationKey(jwk: key, defaultAlgorithm: .rs256, allowSymmetric: true)
            guard imported.keyID == key.keyID else { throw JOSEError(.unknownKey, "the imported key has another kid") }
        } catch {
            try require(error.code == .invalidKey, "import failed with \(error.code): \(error)")
        }
    }

    /// The value, nil for a `malformed` refusal, a failure for any other code.
    static func expectMalformedOrValue<T>(_ body: () throws(JOSEError) -> T) throws(PropertyFailure) -> T? {
        do {
            return try body()
        } catch {
            try require(error.code == .malformed, "refused with \(error.code), not malformed")
            return nil
        }
    }
}
