import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON

/// The checks of a `private_key_jwt` client assertion (RFC 7523 §3, OpenID Connect Core §9).
enum ClientAssertion {
    /// The `client_assertion_type` that names a JWT assertion.
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The longest an assertion may live, from `iat` (or now) to `exp`.
    static let maximumLifetime: TimeInterval = 300
    /// The clock slack allowed on `exp`, `nbf` and `iat`: an assertion is accepted until `exp`
    /// plus this.
    static let leeway: TimeInterval = 60

    /// What a verified assertion leaves to remember.
    struct Checked: Sendable {
        var jti: String
        /// Until when its `jti` must be remembered: as long as the assertion could still be
        /// accepted, `exp` plus the ``leeway`` (RFC 7523 §3 item 7); forgotten sooner, it
        /// could be replayed in the leeway.
        var rememberUntil: Date
    }

    /// The `sub` of an assertion, read before its signature is checked, to find the client.
    static func subject(of assertion: String) throws -> String {
        guard assertion.utf8.count <= 8192, let contents = try? Insecure.unverifiedContents(of: assertion),
            let subject = contents.claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 256
        else { throw AuthError(.invalidClient, "client authentication failed: client_assertion is not a JWT with a sub") }
        return subject
    }

    /// Verifies the assertion against the client's keys.
    static func verify(_ assertion: String, clientID: String, jwks: String, audiences: Set<String>, now: Date) throws -> Checked {
        func refused(_ why: String) -> AuthError { AuthError(.invalidClient, "client authentication failed: \(why)") }
        let keys: JWSKeySet
        do {
            keys = try JWSKeySet(jwks: try JWKSet(parsing: Array(jwks.utf8)))
        } catch {
            throw refused("the client's registered keys cannot be read")
        }
        let policy = JWTValidationPolicy(
            issuer: clientID, audiences: audiences, algorithms: [.rs256, .es256], leeway: leeway, requiredClaims: ["exp", "sub", "jti"])
        let claims: JWTClaims
        do {
            claims = try JWTVerifier(keys: keys, policy: policy).verify(assertion, now: now).claims
        } catch {
            throw refused("the client_assertion does not verify (\(error.code))")
        }
        guard claims.subject == clientID else { throw refused("the assertion's iss and sub must both be the client_id") }
        guard let jti = claims.tokenID, !jti.isEmpty, jti.utf8.count <= 256 else { throw refused("the assertion needs a jti") }
        guard let expiresAt = claims.expiresAt, expiresAt.timeIntervalSince(claims.issuedAt ?? now) <= maximumLifetime else {
            throw refused("the assertion may live at most \(Int(maximumLifetime)) seconds")
        }
        return Checked(jti: jti, rememberUntil: expiresAt.addingTimeInterval(leeway))
    }

    /// Checks a JWK Set to register: it parses, holds at least one RS256 or ES256 public key,
    /// and no private key material.
    static func checkRegistered(_ jwks: String) throws(AuthError) {
        guard jwks.utf8.count <= 16_384, let set = try? JWKSet(parsing: Array(jwks.utf8)) else {
            throw .invalidRequest("the JWK Set does not parse")
        }
        guard (try? JWSKeySet(jwks: set)) != nil, !set.keys.isEmpty else { throw .invalidRequest("the JWK Set holds no usable RS256 or ES256 key") }
        let json = try? JSONValue(parsing: Array(jwks.utf8))
        let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "k"]
        for key in json?["keys"]?.arrayValue ?? [] where privateMembers.contains(where: { key[$0] != nil }) {
            throw .invalidRequest("the JWK Set holds private key material; register the public keys only")
        }
    }
}
