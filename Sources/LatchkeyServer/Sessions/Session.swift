package import FoundationEssentials

/// A signed-in session: one refresh-token family (docs/security.md S8, S9).
package struct Session: Sendable, Hashable {
    package var id: String
    package var userID: String
    /// Authentication methods (RFC 8176): `apple`, `pwd`, `hwk`, `otp`, `rc`, `mfa`.
    package var amr: [String]
    package var createdAt: Date
    package var lastUsedAt: Date
    package var idleExpiresAt: Date
    package var absoluteExpiresAt: Date
    package var secondFactorAt: Date?
    package var revokedAt: Date?
    package var revokedReason: String?
    package var userAgent: String?
    package var ip: String?
    /// The OAuth client whose grant this session is (`nil`: a `/v1` sign-in), its granted
    /// scopes, space-separated, and the hosted pages' browser session it came from.
    package var grant: OAuthGrant?
    /// The RFC 7638 thumbprint of the DPoP key the refresh-token family is bound to (RFC 9449
    /// §5): its refreshes need a proof by that key, and its access tokens carry it as `cnf.jkt`.
    package var dpopKeyThumbprint: String? = nil

    /// When it ends if unused: the earlier of the idle and absolute limits.
    package var expiresAt: Date { min(idleExpiresAt, absoluteExpiresAt) }

    /// Whether it can still be used at `now`.
    package func isLive(at now: Date) -> Bool {
        revokedAt == nil && now < expiresAt
    }
}

/// What makes a session an OAuth grant: the client it was issued to, the scopes granted, and
/// the browser session the user signed in with (an ID token's `sid`).
package struct OAuthGrant: Sendable, Hashable {
    package var clientID: String
    /// Space-separated, sorted.
    package var scope: String
    package var browserSessionID: String?

    package init(clientID: String, scope: String, browserSessionID: String?) {
        self.clientID = clientID
        self.scope = scope
        self.browserSessionID = browserSessionID
    }

    /// The granted scopes as a set.
    package var scopes: Set<String> { Set(scope.split(separator: " ").map(String.init)) }
}
