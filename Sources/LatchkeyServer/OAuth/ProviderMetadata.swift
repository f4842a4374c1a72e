package import LatchkeyJSON

/// What the discovery documents say about this provider (RFC 8414 and OpenID Connect Discovery
/// 1.0 §3): the issuer, the URL of each mounted endpoint, and what the provider supports.
///
/// An endpoint that is not mounted is `nil` and left out of the document, so a client never
/// learns of a URL that answers 404.
package struct ProviderMetadata: Sendable, Hashable {
    /// The endpoints an application may mount, with their paths.
    package struct Endpoints: OptionSet, Sendable, Hashable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        /// `/oauth/authorize`.
        package static let authorization = Endpoints(rawValue: 1 << 0)
        /// `/oauth/token`.
        package static let token = Endpoints(rawValue: 1 << 1)
        /// `/oauth/userinfo`.
        package static let userinfo = Endpoints(rawValue: 1 << 2)
        /// `/oauth/revoke`.
        package static let revocation = Endpoints(rawValue: 1 << 3)
        /// `/oauth/introspect`.
        package static let introspection = Endpoints(rawValue: 1 << 4)
        /// `/oauth/logout` (RP-initiated logout).
        package static let endSession = Endpoints(rawValue: 1 << 5)
        /// `/.well-known/jwks.json`.
        package static let jwks = Endpoints(rawValue: 1 << 6)
        /// `/oauth/device_authorization` (RFC 8628).
        package static let deviceAuthorization = Endpoints(rawValue: 1 << 7)
        /// Every endpoint above.
        package static let all: Endpoints = [
            .authorization, .token, .userinfo, .revocation, .introspection, .endSession, .jwks, .deviceAuthorization,
        ]
    }

    /// `issuer`: the `iss` of every token this server signs.
    package var issuer: String
    /// `authorization_endpoint`.
    package var authorizationEndpoint: String?
    /// `token_endpoint`.
    package var tokenEndpoint: String?
    /// `userinfo_endpoint`.
    package var userinfoEndpoint: String?
    /// `revocation_endpoint` (RFC 7009).
    package var revocationEndpoint: String?
    /// `introspection_endpoint` (RFC 7662).
    package var introspectionEndpoint: String?
    /// `end_session_endpoint` (RP-Initiated Logout 1.0).
    package var endSessionEndpoint: String?
    /// `jwks_uri`.
    package var jwksURI: String?
    /// `device_authorization_endpoint` (RFC 8628 §4).
    package var deviceAuthorizationEndpoint: String?

    /// The URLs of the `mounted` endpoints under `issuer`, which has no trailing slash.
    package init(issuer: String, mounted: Endpoints) {
        self.issuer = issuer
        func url(_ endpoint: Endpoints, _ path: String) -> String? { mounted.contains(endpoint) ? issuer + path : nil }
        authorizationEndpoint = url(.authorization, "/oauth/authorize")
        tokenEndpoint = url(.token, "/oauth/token")
        userinfoEndpoint = url(.userinfo, "/oauth/userinfo")
        revocationEndpoint = url(.revocation, "/oauth/revoke")
        introspectionEndpoint = url(.introspection, "/oauth/introspect")
        endSessionEndpoint = url(.endSession, "/oauth/logout")
        jwksURI = url(.jwks, "/.well-known/jwks.json")
        deviceAuthorizationEndpoint = url(.deviceAuthorization, "/oauth/device_authorization")
    }

    /// How clients authenticate at the token and revocation endpoints.
    static let clientAuthenticationMethods = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]
    /// How clients authenticate at the introspection endpoint: not `none`, as introspection is
    /// for confidential clients and refuses public ones.
    static let introspectionAuthenticationMethods = clientAuthenticationMethods.filter { $0 != "none" }
    /// The `alg` values of ID tokens, and of `private_key_jwt` client assertions.
    static let signingAlgorithms = ["RS256", "ES256"]
    /// The claims the provider can put in ID tokens and userinfo answers.
    static let claims = [
        "iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr", "sid", "azp", "at_hash",
        "name", "given_name", "family_name", "email", "email_verified", "is_private_email",
    ]

    /// The document, served alike at `/.well-known/openid-configuration` and
    /// `/.well-known/oauth-authorization-server`: RFC 8414 takes its members from OpenID
    /// Discovery, so one document is right for both.
    package var json: JSONValue {
        func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
        var members: [String: JSONValue] = [
            "issuer": .string(issuer),
            "response_types_supported": strings(["code"]),
            "response_modes_supported": strings(["query", "form_post"]),
            "grant_types_supported": strings(
                ["authorization_code", "refresh_token", "client_credentials"] + (deviceAuthorizationEndpoint == nil ? [] : [OAuthClient.GrantType.deviceCode.rawValue])),
            "subject_types_supported": strings(["public"]),
            "id_token_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "token_endpoint_auth_methods_supported": strings(Self.clientAuthenticationMethods),
            "token_endpoint_auth_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "code_challenge_methods_supported": strings(["S256"]),
            "scopes_supported": strings(["openid", "profile", "email", "offline_access"]),
            "claims_supported": strings(Self.claims),
            "prompt_values_supported": strings(["none", "login", "consent", "create"]),
            "authorization_response_iss_parameter_supported": .bool(true),
            "request_parameter_supported": .bool(false),
            "request_uri_parameter_supported": .bool(false),
            "claims_parameter_supported": .bool(false),
            // RFC 9449 §5.1: the token endpoint takes DPoP proofs signed with these.
            "dpop_signing_alg_values_supported": strings(DPoPProof.algorithmNames),
        ]
        let endpoints: [(String, String?)] = [
            ("authorization_endpoint", authorizationEndpoint), ("token_endpoint", tokenEndpoint),
            ("userinfo_endpoint", userinfoEndpoint), ("revocation_endpoint", revocationEndpoint),
            ("introspection_endpoint", introspectionEndpoint), ("end_session_endpoint", endSessionEndpoint),
            ("jwks_uri", jwksURI), ("device_authorization_endpoint", deviceAuthorizationEndpoint),
        ]
        for (name, url) in endpoints {
            if let url { members[name] = .string(url) }
        }
        // RFC 8414 §2: an endpoint that takes private_key_jwt lists the algorithms of its
        // assertions, the same as the token endpoint's.
        if revocationEndpoint != nil {
            members["revocation_endpoint_auth_methods_supported"] = strings(Self.clientAuthenticationMethods)
            members["revocation_endpoint_auth_signing_alg_values_supported"] = strings(Self.signingAlgorithms)
        }
        if introspectionEndpoint != nil {
            members["introspection_endpoint_auth_methods_supported"] = strings(Self.introspectionAuthenticationMethods)
            members["introspection_endpoint_auth_signing_alg_values_supported"] = strings(Self.signingAlgorithms)
        }
        return .object(members)
    }
}
