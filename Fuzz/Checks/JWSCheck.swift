import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

extension FuzzTarget {
    /// Compact JWS parsing, header and claims decoding, verification, and base64url.
    ///
    /// Properties: base64url accepts only canonical text (decode then encode gives the input
    /// back) and the lenient decoder agrees with the encoder; a refused token gets one of the
    /// parse codes; an accepted token's parts are the canonical encodings of what it decoded, its
    /// header is what ``Insecure/unverifiedContents(of:)`` reads, its `kid` and `typ` come from
    /// the header, and verification with the fixed keys either succeeds or fails with a
    /// verification code; accepted claims serialize and parse back to equal claims.
    public static let jws = FuzzTarget(name: "jws") { (input) throws(PropertyFailure) in
        let text = String(decoding: input, as: UTF8.self)
        try checkBase64URL(text)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        for part in parts.prefix(5) { try checkBase64URL(part) }

        let jws: JWS
        do throws(JOSEError) {
            jws = try JWS(compact: text)
        } catch {
            try require(
                [.malformed, .unsupportedAlgorithm, .unsupportedHeader].contains(error.code),
                "refused with \(error.code)")
            return .refused
        }
        try require(parts.count == 3, "accepted \(parts.count) parts")
        try require(Base64URL.encode(jws.payload) == parts[1], "the payload part is not canonical")
        try require(Base64URL.encode(jws.signature) == parts[2], "the signature part is not canonical")
        try require(JWSAlgorithm.supported.contains(jws.algorithm), "accepted alg \(jws.algorithm)")
        try require(jws.keyID == jws.header["kid"]?.stringValue, "kid differs from the header")
        try require(jws.type == jws.header["typ"]?.stringValue, "typ differs from the header")
        do {
            let contents = try Insecure.unverifiedContents(of: text)
            try require(contents.header == jws.header, "Insecure.unverifiedContents reads another header")
        } catch let error as JOSEError {
            // A payload that is not JSON is a JWS but not a JWT.
            try require(error.code == .malformed, "unverifiedContents refused with \(error.code)")
        } catch let error as PropertyFailure {
            throw error
        } catch {
            throw PropertyFailure("unverifiedContents threw \(type(of: error))")
        }

        for keys in [FuzzKeys.asymmetric, FuzzKeys.symmetric] {
            do throws(JOSEError) {
                try jws.verify(with: keys, algorithms: JWSAlgorithm.supported)
            } catch {
                try require(
                    [.unknownKey, .algorithmNotAllowed, .invalidSignature].contains(error.code),
                    "verification failed with \(error.code)")
            }
        }

        if let payload = try? JSONValue(parsing: jws.payload), let claims = try? JWTClaims(json: payload) {
            let reread: JWTClaims
            do {
                reread = try JWTClaims(json: JSONValue(parsing: claims.serialized))
            } catch {
                throw PropertyFailure("serialized claims do not read back: \(error)")
            }
            try require(reread == claims, "claims differ after serialize and parse")
            _ = (claims.issuer, claims.subject, claims.audience, claims.expiresAt, claims.notBefore, claims.issuedAt)
        }
        return .accepted
    }

    /// Strict base64url is canonical; lenient decoding agrees with the encoder.
    static func checkBase64URL(_ text: some StringProtocol) throws(PropertyFailure) {
        if let bytes = Base64URL.decode(text) {
            try require(Base64URL.encode(bytes) == String(text), "base64url accepted a non-canonical encoding")
            try require(Base64URL.decodeLenient(text) == bytes, "lenient base64 decodes canonical text differently")
        }
        if let bytes = Base64URL.decodeLenient(text) {
            try require(Base64URL.decode(Base64URL.encode(bytes)) == bytes, "base64url does not round-trip")
        }
    }
}

/// The keys the fuzz targets verify with: fixed, so a seed token signed with them verifies.
enum FuzzKeys {
    /// The P-256 scalar 1…32, the same in the seed tokens under Fuzz/Corpus/jws.
    static let p256 = try! P256.Signing.PrivateKey(rawRepresentation: Array(1...32) as [UInt8])
    /// The HS256 secret of the seed tokens.
    static let secret = Array("latchkey fuzz corpus: HS256 secret".utf8)

    static let asymmetric = try! JWSKeySet([.es256(p256.publicKey, keyID: "fuzz-es256")])
    static let symmetric = try! JWSKeySet([.hs256(secret: secret, keyID: "fuzz-hs256")])
}
