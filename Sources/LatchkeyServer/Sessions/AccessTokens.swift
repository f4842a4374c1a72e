import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// What every sign-in, refresh and step-up returns (docs/reference.md "Token response").
package struct TokenResponse: Sendable {
    package var accessToken: String
    package var expiresIn: Int
    package var refreshToken: String
    package var session: Session
    package var user: User
    package var created: Bool
}

/// The key table has no active key: a broken deployment, answered as a plain 500.
struct NoActiveSigningKey: Error {}

/// Access tokens: signing them (ES256 `at+jwt`, this issuer, one audience), verifying them, and
/// whether the session a token names is still live, answered from a cache at most
/// ``livenessTTL`` old so bearer checks rarely touch the database.
package final class AccessTokens: Sendable {
    let database: any SQLDatabase
    let keys: SigningKeyRing
    /// `access_token_ttl`, in seconds.
    let ttl: Int
    let sessionRows = SessionRepository()
    /// The issuer and audience; known only once the server has bound its port.
    private let identity: Mutex<(issuer: String, audience: String)>
    /// Recent answers to "whose live session is this?" (`nil`: nobody's, it has ended or never
    /// existed).
    private let liveness = Mutex<[String: (owner: String?, checkedAt: Date)]>([:])

    /// How long another process's revocation may take to reach this one's bearer checks.
    static let livenessTTL: TimeInterval = 1

    init(database: any SQLDatabase, keys: SigningKeyRing, configuration: Configuration) {
        self.database = database
        self.keys = keys
        self.ttl = configuration.accessTokenTTL
        self.identity = Mutex((configuration.publicURL ?? "", configuration.audience ?? configuration.publicURL ?? ""))
    }

    /// Sets the issuer (and the default audience) once the public URL is known.
    func setPublicURL(_ publicURL: String, audience: String?) {
        identity.withLock { $0 = (publicURL, audience ?? publicURL) }
    }

    package var issuer: String { identity.withLock { $0.issuer } }
    package var audience: String { identity.withLock { $0.audience } }

    /// Whom an access token is for, its `aud`.
    package enum Audience: Sendable {
        /// Latchkey's own API (`/v1`, and userinfo): sign-ins and first-party OAuth clients.
        case api
        /// Only the userinfo endpoint: what a third-party OAuth client gets, so that its tokens
        /// can never call `/v1` (delete the account, list sessions) on the user's behalf.
        case userinfo
    }

    /// The `aud` value of each ``Audience``.
    func audienceValue(_ audience: Audience) -> String {
        switch audience {
        case .api: self.audience
        case .userinfo: issuer + "/oauth/userinfo"
        }
    }

    // MARK: Signing

    /// Signs an access token for the session and assembles the token response.
    func response(
        session: Session, refreshToken: String, user: User, created: Bool, audience: Audience = .api, now: Date
    ) async throws -> TokenResponse {
        TokenResponse(
            accessToken: try await token(for: session, audience: audience, now: now), expiresIn: ttl,
            refreshToken: refreshToken, session: session, user: user, created: created)
    }

    /// An access token exactly as docs/reference.md describes: `typ: at+jwt` (RFC 9068), ES256,
    /// `kid`; an OAuth grant's also carries `client_id` and `scope`, and one for a session bound
    /// to a DPoP key `cnf.jkt` (RFC 9449 §6.1).
    func token(for session: Session, audience: Audience = .api, now: Date) async throws -> String {
        var claims = JWTClaims()
        claims.subject = session.userID
        claims["sid"] = .string(session.id)
        claims["amr"] = .array(session.amr.map(JSONValue.string))
        if let grant = session.grant {
            claims["client_id"] = .string(grant.clientID)
            claims["scope"] = .string(grant.scope)
        }
        if let key = session.dpopKeyThumbprint { claims["cnf"] = Self.confirmation(key) }
        return try await sign(claims, audience: audience, now: now)
    }

    /// The `cnf` claim of a token bound to a DPoP key (RFC 9449 §6.1).
    static func confirmation(_ keyThumbprint: String) -> JSONValue {
        ["jkt": .string(keyThumbprint)]
    }

    /// Completes and signs access-token claims: `iss`, `aud`, `iat`, `exp`, `jti`.
    func sign(_ claims: JWTClaims, audience: Audience, now: Date) async throws -> String {
        guard let signer = try await keys.current(now: now).signer else {
            throw NoActiveSigningKey()
        }
        var claims = claims
        claims.issuer = issuer
        claims.audience = [audienceValue(audience)]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(TimeInterval(ttl))
        claims.tokenID = Identifiers.secret()
        return try signer.sign(claims, type: "at+jwt")
    }

    // MARK: Verifying

    /// The claims of an access token this server signed: ES256, `typ: at+jwt`, this issuer,
    /// one of `audiences`, not expired, with `sub` (and `sid` when `requiringSession`). A token
    /// the current keys already verified skips the parse and the signature check; the rest is
    /// checked every time (see ``VerifiedJWTCache``).
    ///
    /// - Throws: ``AuthError`` 401 `invalid_token` for anything else. Whether the session is
    ///   still live is the caller's question (``isLive(_:of:now:)``).
    func verify(_ token: String, audiences: [Audience], requiringSession: Bool = true, now: Date) async throws -> JWTClaims {
        let snapshot = try await keys.current(now: now)
        let policy = JWTValidationPolicy(
            issuer: issuer, audiences: Set(audiences.map(audienceValue)), algorithms: [.es256],
            requiredClaims: requiringSession ? ["exp", "iat", "sub", "sid"] : ["exp", "iat", "sub"], type: .exactly("at+jwt"))
        do {
            return try JWTVerifier(keys: snapshot.verificationKeys, policy: policy, cache: snapshot.verifiedAccessTokens)
                .verify(token, now: now).claims
        } catch {
            throw AuthError.invalidToken("the access token is not valid (\(error.code))")
        }
    }

    /// Whether a session is live and belongs to `userID`, answered from a cache at most
    /// ``livenessTTL`` old.
    ///
    /// The owner is part of the answer because an access token's `sid` and `sub` are two claims:
    /// a token pairing one user's subject with another user's session must not pass (S9).
    func isLive(_ sessionID: String, of userID: String, now: Date) async throws -> Bool {
        if let cached = liveness.withLock({ $0[sessionID] }), now.timeIntervalSince(cached.checkedAt) < Self.livenessTTL {
            return cached.owner == userID
        }
        let sessionRows = sessionRows
        let session = try await database.read { try sessionRows.find(id: sessionID, on: $0) }
        let owner = session.flatMap { $0.isLive(at: now) ? $0.userID : nil }
        liveness.withLock { cache in
            if cache.count > 100_000 { cache.removeAll(keepingCapacity: true) }
            cache[sessionID] = (owner, now)
        }
        return owner == userID
    }

    /// Notes that a session has ended, so this process's bearer checks refuse its tokens at once.
    func sessionEnded(_ sessionID: String, at now: Date) {
        liveness.withLock { $0[sessionID] = (nil, now) }
    }
}
