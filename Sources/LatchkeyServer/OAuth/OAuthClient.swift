package import FoundationEssentials

/// A registered OAuth client: a web app with a secret (confidential), or a native app or
/// single-page app without one (public).
package struct OAuthClient: Sendable, Hashable {
    /// A grant a client may use at the token endpoint.
    package enum GrantType: String, Sendable, Hashable, CaseIterable {
        case authorizationCode = "authorization_code", refreshToken = "refresh_token", clientCredentials = "client_credentials"
        /// RFC 8628: a device polls for the tokens a user allowed on another screen.
        case deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
    }

    /// The `client_id`.
    package var id: String
    /// The name users see on the consent page.
    package var name: String
    /// Whether it has a secret (its `secret_hash` is set) and must present it.
    package var isConfidential: Bool
    /// Whether it is one of ours and skips the consent page.
    package var isFirstParty: Bool
    /// Where authorization responses may go, matched by ``acceptsRedirectURI(_:)``.
    package var redirectURIs: [String]
    /// Where RP-initiated logout may send the browser, matched by ``acceptsPostLogoutRedirectURI(_:)``.
    package var postLogoutRedirectURIs: [String]
    /// The grants it may use.
    package var grantTypes: Set<GrantType>
    /// The scopes it may be granted.
    package var scopes: Set<String>
    /// What signs its ID tokens: `RS256` (the default) or `ES256`.
    package var idTokenAlgorithm: String
    /// When it was registered.
    package var createdAt: Date
    /// Whether it gets only DPoP-bound tokens (`clients add --require-dpop`): a token request
    /// without a proof is refused.
    package var requiresDPoP = false

    package init(
        id: String, name: String, isConfidential: Bool, isFirstParty: Bool, redirectURIs: [String], postLogoutRedirectURIs: [String],
        grantTypes: Set<GrantType>, scopes: Set<String>, idTokenAlgorithm: String, createdAt: Date
    ) {
        self.id = id
        self.name = name
        self.isConfidential = isConfidential
        self.isFirstParty = isFirstParty
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.grantTypes = grantTypes
        self.scopes = scopes
        self.idTokenAlgorithm = idTokenAlgorithm
        self.createdAt = createdAt
    }

    /// S20: whether `uri` is one of the registered redirect URIs, compared as exact strings
    /// (nothing decoded or normalised); a loopback `http` URI registered without a port matches
    /// it with any port (RFC 8252 §7.3).
    package func acceptsRedirectURI(_ uri: String) -> Bool {
        redirectURIs.contains { RedirectURI.matches(registered: $0, presented: uri) }
    }

    /// Whether `uri` is one of the registered post-logout redirect URIs, by the same rule as
    /// ``acceptsRedirectURI(_:)``.
    package func acceptsPostLogoutRedirectURI(_ uri: String) -> Bool {
        postLogoutRedirectURIs.contains { RedirectURI.matches(registered: $0, presented: uri) }
    }
}
