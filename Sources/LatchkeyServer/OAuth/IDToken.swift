package import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// The `alg` of an ID token: RS256 by default (OpenID Connect Discovery requires it), ES256 for a
/// client that asks for it.
package enum IDTokenAlgorithm: String, Sendable {
    case rs256 = "RS256"
    case es256 = "ES256"

    /// The JWS algorithm of the same name.
    var jws: JWSAlgorithm { JWSAlgorithm(rawValue: rawValue) }
}

/// What an ID token says (OpenID Connect Core 1.0 §2 and §3.1.3.6). Scope claims (names, email)
/// are userinfo's, not the ID token's.
package struct IDTokenClaims: Sendable, Hashable {
    /// `iss`: the issuer, the same as the access tokens'.
    package var issuer: String
    /// `sub`: the user id, the same as `/v1`'s.
    package var subject: String
    /// `aud`: the client id.
    package var audience: String
    /// `azp`: the client the token was issued to (the client id again).
    package var authorizedParty: String
    /// `iat`.
    package var issuedAt: Date
    /// `exp`; no later than ``SigningKeyRing/longestTokenLifetime`` after ``issuedAt``.
    package var expiresAt: Date
    /// `auth_time`: when the user last authenticated.
    package var authTime: Date
    /// `nonce`, echoed from the authorization request when it had one.
    package var nonce: String?
    /// `amr`: how the user authenticated (`pwd`, `otp`, …).
    package var amr: [String]
    /// `sid`: the browser session, for logout.
    package var sessionID: String?
    /// The access token issued with this ID token; when set, the token carries its `at_hash`.
    package var accessToken: String?

    /// Claims with every member given; `nonce`, `sid` and the access token may be `nil`.
    package init(
        issuer: String, subject: String, audience: String, authorizedParty: String, issuedAt: Date, expiresAt: Date,
        authTime: Date, nonce: String? = nil, amr: [String], sessionID: String? = nil, accessToken: String? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.authorizedParty = authorizedParty
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.nonce = nonce
        self.amr = amr
        self.sessionID = sessionID
        self.accessToken = accessToken
    }

    /// `at_hash` of an access token (OpenID Connect Core §3.1.3.6): the left half of the SHA-256
    /// of its ASCII text, base64url without padding. SHA-256 is the hash of both RS256 and ES256.
    package static func accessTokenHash(_ accessToken: String) -> String {
        Base64URL.encode(HashFunction.sha256.hash(Array(accessToken.utf8)).prefix(16))
    }

    /// The JWT claims: whole-second times, `aud` as one string, absent members left out.
    var jwtClaims: JWTClaims {
        var claims = JWTClaims()
        claims.issuer = issuer
        claims.subject = subject
        claims.audience = [audience]
        claims.issuedAt = issuedAt
        claims.expiresAt = expiresAt
        claims["azp"] = .string(authorizedParty)
        claims["auth_time"] = .number(authTime.timeIntervalSince1970.rounded(.down))
        claims["amr"] = .array(amr.map(JSONValue.string))
        if let nonce { claims["nonce"] = .string(nonce) }
        if let sessionID { claims["sid"] = .string(sessionID) }
        if let accessToken { claims["at_hash"] = .string(Self.accessTokenHash(accessToken)) }
        return claims
    }
}

/// The ring has no active key of the algorithm an ID token asked for: a broken deployment,
/// answered as a plain 500.
struct NoActiveIDTokenKey: Error, CustomStringConvertible {
    var algorithm: String
    var description: String { "no \(algorithm) signing key is active" }
}

/// An ID token would outlive the publication of the key that signs it.
struct IDTokenLifetimeTooLong: Error, CustomStringConvertible {
    var seconds: TimeInterval
    var longest: TimeInterval
    var description: String { "an ID token may live at most \(Int(longest)) s, not \(Int(seconds)) s" }
}

extension SigningKeyRing {
    /// Signs with the active key of that algorithm; header `typ: JWT`, `kid`, `alg`.
    ///
    /// The key is the one of that algorithm active at `claims.issuedAt` among the keys loaded
    /// (the ring reloads on every key change and every ``reloadInterval``).
    ///
    /// - Throws: ``NoActiveIDTokenKey`` when no key of the algorithm signs then;
    ///   ``IDTokenLifetimeTooLong`` when `exp` is more than ``longestTokenLifetime`` after `iat`,
    ///   since a retired key leaves the JWKS that long after its retirement;
    ///   ``LatchkeyCrypto/CryptoError`` if the crypto library fails.
    package func signIDToken(_ claims: IDTokenClaims, algorithm: IDTokenAlgorithm) throws -> String {
        let lifetime = claims.expiresAt.timeIntervalSince(claims.issuedAt)
        guard lifetime <= longestTokenLifetime else { throw IDTokenLifetimeTooLong(seconds: lifetime, longest: longestTokenLifetime) }
        guard let signer = cached.signer(algorithm.jws, at: claims.issuedAt) else {
            throw NoActiveIDTokenKey(algorithm: algorithm.rawValue)
        }
        return try signer.sign(claims.jwtClaims, type: "JWT")
    }
}
