import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// Sign-in through upstream providers (docs/providers.md): this server is the app's OAuth
/// provider and the upstream's client. The browser goes to the upstream with a state bound to
/// it, a nonce and PKCE S256 (``ProviderState``); the callback checks each answer in order, each
/// failure audited with its own reason, and hands the sign-in pipeline the account the identity
/// belongs to, links to, or makes, so second factors, browser sessions and audit come as for
/// every other method.
final class FederationService: Sendable {
    let dependencies: Dependencies
    let signIns: SignInPipeline
    let masterKey: MasterKey
    /// The configured providers, in the configuration's order (the sign-in page's buttons).
    let providers: [UpstreamProvider]
    private let states: ProviderState
    private let identities = IdentityRepository()
    private let spentStates = ProviderStateRepository()

    /// The amr value of a sign-in at an upstream: federated (the upstream proved who it is).
    static let amr = "fed"

    init(dependencies: Dependencies, signIns: SignInPipeline, masterKey: MasterKey, providers: [UpstreamProvider]) {
        self.dependencies = dependencies
        self.signIns = signIns
        self.masterKey = masterKey
        self.providers = providers
        states = ProviderState(masterKey: masterKey)
    }

    func provider(_ id: String) -> UpstreamProvider? { providers.first { $0.id == id } }

    /// The path of a provider's callback on this server: `{public_url}` + it is the redirect URI
    /// registered at the upstream.
    static func callbackPath(_ id: String) -> String { "/oauth/providers/\(id)/callback" }

    /// Where the browser goes, and the binding for its cookie.
    struct Start: Sendable {
        var authorizeURL: String
        var query: [(String, String)]
        var binding: String
    }

    /// Starts a sign-in at `provider` for an authorization request.
    ///
    /// - Parameters:
    ///   - request: The authorization request's parameters, form-encoded; the callback gets it back.
    ///   - callbackURL: This server's callback for the provider.
    /// - Throws: ``ProviderSignInFailure`` `upstream_unavailable` when an OpenID provider's
    ///   discovery document cannot be had.
    func start(_ provider: UpstreamProvider, request: String, callbackURL: String) async throws(ProviderSignInFailure) -> Start {
        let endpoints = try await provider.endpoints()
        let (state, binding, challenge, nonce) = states.make(provider: provider.id, request: request, now: dependencies.clock())
        var query = [
            ("response_type", "code"), ("client_id", provider.settings.clientID), ("redirect_uri", callbackURL),
            ("scope", provider.settings.scopes.joined(separator: " ")), ("state", state), ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ]
        if provider.kind == .oidc { query.append(("nonce", nonce)) }
        return Start(authorizeURL: endpoints.authorize.absoluteString, query: query, binding: binding)
    }

    /// Checks a returned `state` against the browser's binding cookie (nothing is spent yet).
    func resume(_ state: String, provider: UpstreamProvider, binding: String?) throws(ProviderSignInFailure) -> ProviderState.Resumed {
        try states.resume(state, provider: provider.id, binding: binding, now: dependencies.clock())
    }

    /// Spends a state: each is answered once, on every instance.
    ///
    /// - Throws: ``ProviderSignInFailure`` `state_replayed` when it was spent before.
    func spend(_ resumed: ProviderState.Resumed) async throws {
        let now = dependencies.clock()
        let spentStates = spentStates
        let fresh = try await dependencies.database.write { connection in
            try spentStates.spend(id: resumed.id, provider: resumed.provider, expiresAt: resumed.expiresAt, at: now, on: connection)
        }
        guard fresh else { throw ProviderSignInFailure(.stateReplayed, "this sign-in's answer was already used") }
    }

    /// What the upstream's redirect to the callback carried, besides `state`.
    struct Callback: Sendable {
        var code: String
        /// RFC 9207's `iss` parameter, if any.
        var issuer: String?
    }

    /// An account exists with the upstream's email and may not be linked automatically: the user
    /// must sign in to it first (``PendingLink``).
    struct LinkRequired: Error, Sendable {
        var link: PendingLink
    }

    /// Checks the answer, verifies who signed in and signs them in to a browser session.
    ///
    /// - Parameters:
    ///   - browserSession: The browser's live session, if any: an unknown identity is linked to
    ///     its account (linking while signed in, `prompt=login`).
    ///   - replacing: The token of the browser session the request's cookie carried.
    /// - Throws: ``ProviderSignInFailure``; ``LinkRequired``; ``AuthError`` from the pipeline
    ///   (`mfa_required` for an account with a second factor).
    func signIn(
        _ provider: UpstreamProvider, resumed: ProviderState.Resumed, callback: Callback, callbackURL: String,
        browserSession: BrowserSession?, replacing: String?, context: RequestContext
    ) async throws -> SignedIn {
        let endpoints = try await provider.endpoints()
        if let expected = endpoints.issuer, endpoints.issParameter || callback.issuer != nil {
            guard callback.issuer == expected else {
                throw ProviderSignInFailure(.issMismatch, "the authorization response's iss parameter is \(callback.issuer == nil ? "missing" : "another issuer's")")
            }
        }
        let tokens = try await provider.client.exchange(
            code: callback.code, redirectURI: callbackURL, verifier: resumed.verifier, settings: provider.settings, endpoints: endpoints)
        let profile = try await self.profile(provider, endpoints: endpoints, tokens: tokens, nonce: resumed.nonce)
        let linkTo = browserSession?.userID
        return try await signIns.signIn(method: "provider:" + provider.id, context: context, target: .browser(replacing: replacing)) {
            connection, now in
            try self.land(profile, provider: provider, linkTo: linkTo, context: context, now: now, on: connection)
        }
    }

    /// Who signed in: an OpenID provider's checked ID token (with userinfo when the token has no
    /// email); GitHub's `/user` and the verified primary of `/user/emails`.
    private func profile(
        _ provider: UpstreamProvider, endpoints: UpstreamEndpoints, tokens: UpstreamClient.Tokens, nonce: String
    ) async throws(ProviderSignInFailure) -> UpstreamProfile {
        switch provider.kind {
        case .oidc:
            guard let idToken = tokens.idToken, let issuer = endpoints.issuer else {
                throw ProviderSignInFailure(.idTokenMissing, "the token endpoint returned no ID token")
            }
            var profile = try await UpstreamIDToken.verify(idToken, provider: provider, issuer: issuer, nonce: nonce)
            if profile.email == nil, let userinfo = endpoints.userinfo {
                let info = try await provider.client.get(userinfo, accessToken: tokens.accessToken, what: "userinfo")
                // OpenID Connect Core §5.3.2: userinfo about anyone else is ignored.
                if info["sub"]?.stringValue == profile.subject {
                    profile.email = UpstreamProfile.email(info["email"])
                    profile.emailVerified = profile.email != nil && UpstreamProfile.flag(info["email_verified"])
                    profile.takeNames(given: info["given_name"], family: info["family_name"], full: info["name"])
                }
            }
            return profile
        case .github:
            let api = provider.settings.apiURL.hasSuffix("/") ? String(provider.settings.apiURL.dropLast()) : provider.settings.apiURL
            let user = try await provider.client.get(URL(string: api + "/user")!, accessToken: tokens.accessToken, what: "GitHub user", github: true)
            guard let number = user["id"]?.numberValue, number >= 1, number < 9_007_199_254_740_992, number.rounded() == number else {
                throw ProviderSignInFailure(.userinfoFailed, "GitHub's /user has no numeric id")
            }
            var profile = UpstreamProfile(issuer: api, subject: String(Int64(number)), email: nil, emailVerified: false)
            // The emails need the user:email scope; without it, the public email, unverified.
            if let emails = try? await provider.client.get(URL(string: api + "/user/emails")!, accessToken: tokens.accessToken, what: "GitHub emails", github: true),
                let primary = emails.arrayValue?.first(where: { $0["primary"]?.boolValue == true })
            {
                profile.email = UpstreamProfile.email(primary["email"])
                profile.emailVerified = profile.email != nil && primary["verified"]?.boolValue == true
            } else {
                profile.email = UpstreamProfile.email(user["email"])
            }
            profile.takeNames(given: nil, family: nil, full: user["name"])
            return profile
        }
    }

    /// Finds, links or makes the account of `profile`, inside the sign-in transaction:
    /// 1. a known identity signs in to its account, whatever its email says now;
    /// 2. while a browser session is signed in, an unknown identity is linked to its account;
    /// 3. an account with the same email is linked only when the upstream and the account have
    ///    both verified it and `link_by_email` allows it; otherwise ``LinkRequired``;
    /// 4. else a new account, its email verified only if the upstream said so.
    private func land(
        _ profile: UpstreamProfile, provider: UpstreamProvider, linkTo: String?, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> Authentication {
        let users = dependencies.users
        var details = ["provider": provider.id, "created": "false"]
        let user: User
        var created = false
        if let identity = try identities.find(provider: provider.id, issuer: profile.issuer, subject: profile.subject, on: connection) {
            guard let found = try users.find(identity.userID, on: connection) else { throw AuthError.notFound("no such user") }
            if identity.email != profile.email || identity.emailVerified != profile.emailVerified {
                _ = try identities.recordSignIn(
                    id: identity.id, email: profile.email, emailVerified: profile.emailVerified, isPrivateEmail: false, realUserStatus: nil,
                    on: connection)
            }
            user = found
        } else if let linkTo {
            guard let found = try users.find(linkTo, on: connection) else { throw AuthError.notFound("no such user") }
            try link(profile, provider: provider.id, to: found, via: "session", context: context, now: now, on: connection)
            user = found
        } else if let email = profile.email, let existing = try sameEmail(email, on: connection) {
            guard provider.settings.linkByEmail, profile.emailVerified, existing.emailVerified else {
                throw LinkRequired(link: PendingLink(provider: provider.id, profile: profile, createdAt: now))
            }
            try link(profile, provider: provider.id, to: existing, via: "email", context: context, now: now, on: connection)
            user = existing
        } else {
            user = try users.create(
                email: profile.email, emailVerified: profile.email != nil && profile.emailVerified, givenName: profile.givenName,
                familyName: profile.familyName, now: now, on: connection)
            try insertIdentity(profile, provider: provider.id, userID: user.id, now: now, on: connection)
            created = true
            details["created"] = "true"
        }
        try dependencies.record(.signInProvider, .success, userID: user.id, context: context, now: now, details: details, on: connection)
        return Authentication(user: user, created: created, amr: [Self.amr])
    }

    /// The account an email belongs to, as given or lower-cased (the oldest of several).
    private func sameEmail(_ email: String, on connection: any SQLConnection) throws -> User? {
        if let user = try dependencies.users.oldest(email: email, on: connection) { return user }
        let lower = email.lowercased()
        return lower == email ? nil : try dependencies.users.oldest(email: lower, on: connection)
    }

    /// Links an identity to an account, audited `identity.linked`.
    private func link(
        _ profile: UpstreamProfile, provider: String, to user: User, via: String, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws {
        try insertIdentity(profile, provider: provider, userID: user.id, now: now, on: connection)
        try dependencies.record(.identityLinked, .success, userID: user.id, context: context, now: now, details: ["provider": provider, "via": via], on: connection)
    }

    private func insertIdentity(_ profile: UpstreamProfile, provider: String, userID: String, now: Date, on connection: any SQLConnection) throws {
        let inserted = try identities.insert(
            Identity(
                id: Identifiers.make("idn"), userID: userID, provider: provider, issuer: profile.issuer, subject: profile.subject, email: profile.email,
                emailVerified: profile.emailVerified, isPrivateEmail: false, realUserStatus: nil, createdAt: now),
            on: connection)
        guard inserted else {
            // A concurrent sign-in of the same upstream account stored it first; the retry finds it.
            throw AuthError(.unavailable, "another sign-in of this account is under way; try again", retryAfter: 1)
        }
    }

    /// Links the identity a ``PendingLink`` holds to the account the browser has just signed in
    /// to: only by a sign-in made after the link was offered, in the same browser.
    ///
    /// - Parameter sealed: The pending link's cookie.
    /// - Returns: Whether the cookie is spent: linked, expired, not genuine, or its identity
    ///   meanwhile linked elsewhere (audited); false while the browser has not signed in since.
    func completeLink(sealed: String, browserSession: BrowserSession?, context: RequestContext) async throws -> Bool {
        let now = dependencies.clock()
        guard let link = PendingLink(sealed: sealed, masterKey: masterKey, now: now) else { return true }
        guard let browserSession, browserSession.authTime >= link.createdAt.addingTimeInterval(-1) else { return false }
        return try await dependencies.database.write { connection in
            if let existing = try self.identities.find(provider: link.provider, issuer: link.profile.issuer, subject: link.profile.subject, on: connection) {
                if existing.userID != browserSession.userID {
                    try self.dependencies.record(
                        .identityLinked, .failure, userID: browserSession.userID, context: context, now: now,
                        details: ["provider": link.provider, "via": "sign_in", "reason": ProviderSignInFailure.Code.identityTaken.rawValue], on: connection)
                }
                return true
            }
            guard let user = try self.dependencies.users.find(browserSession.userID, on: connection) else { return true }
            try self.link(link.profile, provider: link.provider, to: user, via: "sign_in", context: context, now: now, on: connection)
            return true
        }
    }

    /// The audit entry of a refused upstream sign-in: which check failed, never a token or code.
    func recordFailure(_ failure: ProviderSignInFailure, provider: String, context: RequestContext) async {
        var details = ["provider": provider, "reason": failure.code.rawValue]
        if let upstreamError = failure.upstreamError { details["error"] = upstreamError }
        dependencies.metrics.increment(.signIns, ["method": "provider:" + provider, "outcome": "failure"])
        await dependencies.recordOutsideTransaction(.signInProvider, .failure, userID: nil, context: context, details: details)
    }

    /// The audit entry of an upstream sign-in that needs the existing account's sign-in first.
    func recordLinkRequired(provider: String, context: RequestContext) async {
        await dependencies.recordOutsideTransaction(
            .signInProvider, .pending, userID: nil, context: context, details: ["provider": provider, "reason": "link_required"])
    }
}
