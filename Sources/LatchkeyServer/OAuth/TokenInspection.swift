package import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// What introspection (RFC 7662) says of a token.
package struct TokenIntrospection: Sendable, Hashable {
    package var active: Bool
    package var scope: String?
    package var clientID: String?
    package var subject: String?
    package var issuedAt: Date?
    package var expiresAt: Date?
    /// `Bearer` or `DPoP` for an access token, `nil` for a refresh token.
    package var tokenType: String?
    package var sessionID: String?
    /// The thumbprint of the DPoP key the token is bound to: `cnf.jkt` (RFC 9449 §6.2).
    package var keyThumbprint: String?

    static let inactive = TokenIntrospection(active: false)

    init(
        active: Bool, scope: String? = nil, clientID: String? = nil, subject: String? = nil, issuedAt: Date? = nil, expiresAt: Date? = nil,
        tokenType: String? = nil, sessionID: String? = nil, keyThumbprint: String? = nil
    ) {
        self.keyThumbprint = keyThumbprint
        self.active = active
        self.scope = scope
        self.clientID = clientID
        self.subject = subject
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.tokenType = tokenType
        self.sessionID = sessionID
    }
}

/// What the userinfo endpoint tells a client about the user, by scope (OpenID Connect Core §5.4).
package struct UserInfo: Sendable, Hashable {
    package struct Profile: Sendable, Hashable {
        package var givenName: String?
        package var familyName: String?
    }

    package struct Email: Sendable, Hashable {
        package var address: String?
        package var verified: Bool
        /// An Apple private relay address.
        package var isPrivate: Bool
    }

    package var subject: String
    /// With `profile`.
    package var profile: Profile?
    /// With `email`.
    package var email: Email?
}

extension TokenService {
    // MARK: Revocation (RFC 7009)

    /// Ends the grant a token belongs to, when the token was issued to `client`; any other
    /// token (unknown, expired, another client's) is ignored, as RFC 7009 §2.2 asks.
    package func revoke(_ token: String, client: OAuthClient, context: RequestContext) async throws {
        guard let session = try await grantSession(of: token), session.grant?.clientID == client.id else { return }
        try await sessions.revokeSessions(userID: nil, sessionIDs: [session.id], reason: "revoked", context: context)
    }

    // MARK: Introspection (RFC 7662)

    /// Whether a token is active, and what it carries. A refresh token is described only to
    /// the client it was issued to; an access token to the client it was issued to (its
    /// `client_id`) or one its `aud` names. Any other token is `active: false`, as if unknown:
    /// a client learns nothing of other clients' tokens, of `/v1` tokens or of the users behind
    /// them (RFC 7662 §2.2, §4).
    package func introspect(_ token: String, client: OAuthClient) async throws -> TokenIntrospection {
        let now = clock()
        if Self.looksLikeJWT(token) {
            guard let claims = try? await accessTokens.verify(token, audiences: [.api, .userinfo], requiringSession: false, now: now),
                let subject = claims.subject,
                claims["client_id"]?.stringValue == client.id || claims.audience.contains(client.id)
            else { return .inactive }
            let sessionID = claims["sid"]?.stringValue
            if let sessionID, try await !accessTokens.isLive(sessionID, of: subject, now: now) { return .inactive }
            let keyThumbprint = claims["cnf"]?.objectValue?["jkt"]?.stringValue
            return TokenIntrospection(
                active: true, scope: claims["scope"]?.stringValue, clientID: claims["client_id"]?.stringValue, subject: subject,
                issuedAt: claims.issuedAt, expiresAt: claims.expiresAt, tokenType: keyThumbprint == nil ? "Bearer" : "DPoP",
                sessionID: sessionID, keyThumbprint: keyThumbprint)
        }
        let presented = try await database.read { connection in
            try self.sessionRows.presentedToken(hash: token.sha256, on: connection)
        }
        guard let presented, !presented.retired, presented.session.isLive(at: now), let grant = presented.session.grant,
            grant.clientID == client.id
        else { return .inactive }
        return TokenIntrospection(
            active: true, scope: grant.scope, clientID: grant.clientID, subject: presented.session.userID,
            issuedAt: presented.session.createdAt, expiresAt: presented.session.expiresAt, sessionID: presented.session.id,
            keyThumbprint: presented.session.dpopKeyThumbprint)
    }

    // MARK: Userinfo

    /// The claims the grant's scopes allow: `sub` always (it needs `openid`), names with
    /// `profile`, the e-mail address with `email`.
    ///
    /// - Throws: `insufficient_scope` when the token's grant lacks `openid` (a `/v1` token has
    ///   no scopes at all).
    package func userInfo(userID: String, scopes: Set<String>?) async throws -> UserInfo {
        guard let scopes, scopes.contains("openid") else {
            throw AuthError(.insufficientScope, "the access token's grant does not include the openid scope")
        }
        guard let user = try await dependencies.users.find(userID) else { throw AuthError.invalidToken("the user no longer exists") }
        return UserInfo(
            subject: user.id,
            profile: scopes.contains("profile") ? .init(givenName: user.givenName, familyName: user.familyName) : nil,
            email: scopes.contains("email") ? .init(address: user.email, verified: user.emailVerified, isPrivate: user.isPrivateEmail) : nil)
    }

    // MARK: Helpers

    /// The session of a refresh token or of an access token, whatever its client.
    private func grantSession(of token: String) async throws -> Session? {
        let now = clock()
        if Self.looksLikeJWT(token) {
            guard let claims = try? await accessTokens.verify(token, audiences: [.api, .userinfo], now: now),
                let sessionID = claims["sid"]?.stringValue
            else { return nil }
            return try await sessions.session(sessionID)
        }
        guard token.utf8.count <= 512 else { return nil }
        return try await database.read { connection in
            try self.sessionRows.presentedToken(hash: token.sha256, on: connection)?.session
        }
    }

    /// Access tokens are JWTs (three dot-separated parts); refresh tokens are opaque base64url.
    static func looksLikeJWT(_ token: String) -> Bool {
        token.utf8.count <= 8192 && token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2
    }
}
