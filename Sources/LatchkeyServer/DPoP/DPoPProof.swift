import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// A DPoP proof (RFC 9449 §4) whose signature and claims held for one request: which key proved
/// possession, and what the replay cache and the nonce check still need.
///
/// ``verify(_:for:now:keys:)`` checks everything a single proof can show by itself (§4.3): `typ`
/// `dpop+jwt`, an allowed asymmetric `alg`, a public `jwk` in the header that the signature
/// verifies with, `jti`, `htm` and `htu` of this request, `iat` within ``leeway``, and `ath` when
/// the request carries an access token. Whether the `jti` was seen before and whether the
/// `nonce` is current are ``DPoPService``'s, which has the database and the nonce key.
struct DPoPProof: Sendable {
    /// The RFC 7638 thumbprint of the proof's key: what a bound token's `cnf.jkt` holds.
    var keyThumbprint: String
    /// `jti`.
    var tokenID: String
    /// `iat`.
    var issuedAt: Date
    /// `nonce`, when the proof carries one.
    var nonce: String?

    /// The request a proof must be for.
    struct Target: Sendable {
        /// The HTTP method, compared exactly with `htm`.
        var method: String
        /// The request's URL at its public name: compared with `htu` after ``normalizedURL(_:)``.
        var url: String
        /// The access token the request carries (a resource request): the proof's `ath` must be
        /// its hash. `nil` at a token endpoint.
        var accessToken: String?
    }

    /// The algorithms a proof may be signed with (`dpop_signing_alg_values_supported`): never
    /// `none` or an HMAC, which a key in the header could not make sender-constrained.
    static let algorithms: [JWSAlgorithm] = [.es256, .edDSA, .rs256]
    /// The names of ``algorithms``, as discovery and the `DPoP` challenge list them.
    static let algorithmNames = algorithms.map(\.rawValue)
    /// How far `iat` may be from the server's clock, either way (RFC 9449 §11.1).
    static let leeway: TimeInterval = 60
    /// The longest proof read: an RS256 proof with a 4096-bit key fits several times over.
    static let maxLength = 8 * 1024
    /// The longest `jti` kept (RFC 9449 asks for 96 bits of randomness; a UUID is 36 characters).
    static let maxTokenIDLength = 256
    /// JWK members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4;
    /// RFC 8037 §2): a proof carrying one is refused, whatever the key type.
    static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Verifies a proof for `target` at `now`.
    ///
    /// - Parameter keys: Keys of earlier proofs, so a client's key is read once.
    /// - Throws: ``AuthError`` `invalid_dpop_proof`, with a message that says which check failed.
    static func verify(_ compact: String, for target: Target, now: Date, keys: DPoPKeyCache) throws(AuthError) -> DPoPProof {
        guard compact.utf8.count <= maxLength else { throw .invalidDPoPProof("the DPoP proof is longer than \(maxLength) bytes") }
        let jws: JWS
        do {
            jws = try JWS(compact: compact, allowingEmbeddedJWK: true)
        } catch {
            throw .invalidDPoPProof("the DPoP proof is not a valid JWS (\(error.code))")
        }
        guard jws.type == "dpop+jwt" else { throw .invalidDPoPProof("the DPoP proof's typ must be dpop+jwt") }
        guard algorithms.contains(jws.algorithm) else {
            throw .invalidDPoPProof("the DPoP proof's alg must be one of \(algorithmNames.joined(separator: ", "))")
        }
        guard case .object(let members)? = jws.header["jwk"] else { throw .invalidDPoPProof("the DPoP proof's header needs a jwk object") }
        if privateMembers.contains(where: { members[$0] != nil }) {
            throw .invalidDPoPProof("the DPoP proof's jwk holds private key material")
        }
        let key = try keys.entry(for: JSONValue.object(members).serialized) { () throws(AuthError) in
            try load(members, algorithm: jws.algorithm)
        }
        do {
            // The key's algorithm is the first proof's: another alg with the same jwk fails here.
            try jws.verify(with: key.key)
        } catch {
            throw .invalidDPoPProof("the DPoP proof's signature does not verify with its jwk")
        }
        let claims: JWTClaims
        do {
            claims = try JWTClaims(json: try JSONValue(parsing: jws.payload))
        } catch {
            throw .invalidDPoPProof("the DPoP proof's claims are not a JSON object")
        }
        guard let tokenID = claims.tokenID, !tokenID.isEmpty, tokenID.utf8.count <= maxTokenIDLength else {
            throw .invalidDPoPProof("the DPoP proof needs a jti of 1 to \(maxTokenIDLength) bytes")
        }
        guard claims["htm"]?.stringValue == target.method else { throw .invalidDPoPProof("the DPoP proof's htm is not this request's method") }
        guard let htu = claims["htu"]?.stringValue, let presented = normalizedURL(htu), presented == normalizedURL(target.url) else {
            throw .invalidDPoPProof("the DPoP proof's htu is not this request's URL")
        }
        guard let issuedAt = claims.issuedAt else { throw .invalidDPoPProof("the DPoP proof needs an iat") }
        guard abs(issuedAt.timeIntervalSince(now)) <= leeway else {
            throw .invalidDPoPProof("the DPoP proof's iat is more than \(Int(leeway)) seconds from the server's time")
        }
        if let accessToken = target.accessToken {
            guard let ath = claims["ath"]?.stringValue else { throw .invalidDPoPProof("the DPoP proof needs ath with an access token") }
            guard ath == Base64URL.encode(HashFunction.sha256.hash(Array(accessToken.utf8))) else {
                throw .invalidDPoPProof("the DPoP proof's ath is not the hash of this access token")
            }
        }
        let nonce: String?
        switch claims["nonce"] {
        case nil: nonce = nil
        case .string(let value)?: nonce = value
        default: throw .invalidDPoPProof("the DPoP proof's nonce must be a string")
        }
        return DPoPProof(keyThumbprint: key.thumbprint, tokenID: tokenID, issuedAt: issuedAt, nonce: nonce)
    }

    /// The header's public `jwk` as a verification key for `algorithm`, and its thumbprint.
    private static func load(_ members: [String: JSONValue], algorithm: JWSAlgorithm) throws(AuthError) -> DPoPKeyCache.Entry {
        let jwk: JWK
        do {
            jwk = try JWK(json: .object(members))
        } catch {
            throw .invalidDPoPProof("the DPoP proof's jwk is malformed")
        }
        if let declared = jwk.algorithm, declared != algorithm { throw .invalidDPoPProof("the DPoP proof's jwk is for another alg") }
        do {
            return DPoPKeyCache.Entry(key: try verificationKey(jwk, algorithm: algorithm), thumbprint: try jwk.thumbprint())
        } catch {
            throw .invalidDPoPProof("the DPoP proof's jwk is not a usable \(algorithm) key")
        }
    }

    /// The key that checks the signature, loaded as a published key would be, but for Ed25519,
    /// which only a proof may use.
    private static func verificationKey(_ jwk: JWK, algorithm: JWSAlgorithm) throws -> JWSVerificationKey {
        guard algorithm == .edDSA else { return try JWSVerificationKey(jwk: jwk, defaultAlgorithm: algorithm) }
        guard jwk.keyType == "OKP", jwk.curve == "Ed25519", let x = jwk.x else { throw AuthError.invalidDPoPProof("not an Ed25519 key") }
        return .edDSA(try Ed25519.Signing.PublicKey(rawRepresentation: x))
    }

    /// A URL in the form `htu` is compared in (RFC 9449 §4.3, RFC 3986 §6.2.2–6.2.3): scheme and
    /// host lower-cased, the scheme's default port left out, no query and no fragment, an empty
    /// path as `/`. `nil` for anything but an absolute `http` or `https` URL without user info.
    static func normalizedURL(_ text: String) -> String? {
        guard text.utf8.count <= 4096 else { return nil }
        var rest = Substring(text)
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        guard let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") else { return nil }
        let scheme = rest[..<colon].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let afterScheme = rest[rest.index(colon, offsetBy: 3)...]
        let pathStart = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        let authority = afterScheme[..<pathStart]
        let path = afterScheme[pathStart...]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var port: Int?
        // A colon after any closing bracket of an IPv6 literal starts the port.
        if let portColon = authority.lastIndex(of: ":"), !authority[portColon...].contains("]") {
            host = authority[..<portColon]
            let digits = authority[authority.index(after: portColon)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy(\.isASCIIDigit), let number = Int(digits), number <= 65_535 else {
                return nil
            }
            port = number
        }
        guard !host.isEmpty else { return nil }
        if port == (scheme == "https" ? 443 : 80) { port = nil }
        return scheme + "://" + host.lowercased() + (port.map { ":\($0)" } ?? "") + (path.isEmpty ? "/" : String(path))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
