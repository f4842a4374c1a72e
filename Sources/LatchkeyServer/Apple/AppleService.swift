import FoundationEssentials
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// Sign in with Apple on the server side: sign-in, notifications, daily token validation and
/// the revocation outbox share Apple's keys, the REST client and the identities table.
final class AppleService: Sendable {
    let dependencies: Dependencies
    let settings: AppleSettings
    /// Apple's signing keys (`keys_url`).
    let keys: RemoteKeySet
    let client: AppleClient
    let outbox: AppleRevocationOutbox
    let signIns: SignInPipeline
    /// Ends the sessions of a user whose Apple consent is revoked.
    let sessions: SessionService
    /// What Apple's account-delete notification does.
    let deletion: AccountDeletion
    let masterKey: MasterKey
    var database: any SQLDatabase { dependencies.database }
    var audit: AuditLog { dependencies.audit }
    var clock: @Sendable () -> Date { dependencies.clock }
    let identities = IdentityRepository()
    let replays = AppleReplayRepository()
    /// The `provider` of Apple identities.
    static let provider = "apple"

    /// - Parameters:
    ///   - client: Apple's REST endpoints, which `outbox` also sends through.
    ///   - httpClient: Fetches Apple's public keys.
    init(
        dependencies: Dependencies, settings: AppleSettings, client: AppleClient, outbox: AppleRevocationOutbox, httpClient: any HTTPClient,
        timeout: Duration, signIns: SignInPipeline, sessions: SessionService, deletion: AccountDeletion, masterKey: MasterKey
    ) {
        self.dependencies = dependencies
        self.settings = settings
        self.keys = RemoteKeySet(
            source: "apple", url: { settings.current.keys }, defaultAlgorithm: .rs256, client: httpClient, timeout: timeout,
            metrics: dependencies.metrics, clock: dependencies.clock)
        self.client = client
        self.outbox = outbox
        self.signIns = signIns
        self.sessions = sessions
        self.deletion = deletion
        self.masterKey = masterKey
    }

    /// What a sign-in with Apple presents (docs/reference.md `POST /v1/auth/apple`).
    struct SignInRequest: Sendable, Hashable {
        var identityToken: String
        var authorizationCode: String?
        var nonce: String?
        var givenName: String?
        var familyName: String?
    }

    /// Signs a user in with an Apple identity token (docs/reference.md `POST /v1/auth/apple`).
    ///
    /// Every check runs before anything is written; the code exchange runs before the one
    /// transaction that creates or updates the account, links its identity, remembers the token
    /// (each is accepted once) and starts the session. If Apple fails, nothing is created.
    ///
    /// - Throws: ``AuthError``: `invalid_identity_token` naming the failed check (`replay` for a
    ///   token used before), `invalid_grant` for a code Apple refuses, `apple_unavailable` with
    ///   a retry time, `mfa_required`.
    func signIn(_ request: SignInRequest, context: RequestContext) async throws -> TokenResponse {
        try await signIn(request, web: nil, context: context, target: .api).tokens
    }

    /// What a web sign-in adds to ``SignInRequest``: the token must be for the Services ID, and
    /// the code is exchanged with the callback it was sent to.
    struct WebFlow: Sendable, Hashable {
        /// The Services ID (`apple.web_client_id`), the one `aud` accepted.
        var clientID: String
        /// The `redirect_uri` Apple posted the code to.
        var redirectURI: String
    }

    /// Signs a user in with an Apple identity token, from an app (`web` `nil`: `/v1/auth/apple`)
    /// or from the hosted sign-in page, into the session `target` names.
    func signIn(_ request: SignInRequest, web: WebFlow?, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        let token: AppleIdentityToken
        var appleRefreshToken: String?
        do {
            token = try await AppleIdentityToken.verify(
                request.identityToken, rawNonce: request.nonce, audiences: web.map { [$0.clientID] }, keys: keys, settings: settings)
            if let code = request.authorizationCode {
                // A replay is refused for certain inside the sign-in transaction; checking first
                // keeps a replayed token from spending a code at Apple.
                let replays = replays
                let seen = try await database.read { try replays.isIdentityTokenRemembered(key: token.replayKey, on: $0) }
                if seen { throw Self.replayed }
                appleRefreshToken = try await exchange(code: code, for: token, redirectURI: web?.redirectURI)
            }
        } catch let error as AuthError {
            dependencies.metrics.increment(.signIns, ["method": "apple", "outcome": "failure"])
            await recordFailure(error, web: web != nil, context: context)
            throw error
        }
        do {
            // Counts its own failures in the metrics.
            return try await signIns.signIn(method: "apple", context: context, target: target) { [appleRefreshToken] connection, now in
                try self.link(token, request: request, appleRefreshToken: appleRefreshToken, web: web != nil, context: context, now: now, on: connection)
            }
        } catch let error as AuthError {
            await recordFailure(error, web: web != nil, context: context)
            throw error
        }
    }

    /// The audit entry of a refused sign-in: which check failed, never the token (S26, S27). A
    /// failure to write it is logged, without the token, rather than hidden.
    ///
    /// - Parameter web: Whether it came from the hosted page (details `flow: web`).
    func recordFailure(_ error: AuthError, web: Bool = false, context: RequestContext) async {
        var details = ["method": "apple", "error": error.code.rawValue, "check": String(error.message.prefix { $0 != ":" }.prefix(40))]
        if web { details["flow"] = "web" }
        await dependencies.recordOutsideTransaction(.signIn, .failure, userID: nil, context: context, details: details)
    }

    static let replayed = AppleIdentityToken.failure("replay", "this identity token was already used to sign in")

    /// How long a client waits before retrying a sign-in that needs a code exchange this server
    /// cannot do: an operator must configure the team first.
    static let unconfiguredRetryAfter = 30

    /// Exchanges the authorization code, checking that Apple's answer is about the same user.
    private func exchange(code: String, for token: AppleIdentityToken, redirectURI: String?) async throws(AuthError) -> String? {
        guard client.isConfigured else {
            throw AuthError(.appleUnavailable, "code exchange is not configured (apple.team_id)", retryAfter: Self.unconfiguredRetryAfter)
        }
        let tokens: AppleClient.Tokens
        do {
            tokens = try await client.exchange(code: code, clientID: token.clientID, redirectURI: redirectURI)
        } catch {
            throw error.authError
        }
        if let idToken = tokens.idToken {
            var policy = AppleIdentityToken.policy(settings)
            policy.audiences = [token.clientID]
            let subject = try? await keys.verify(idToken, policy: policy).claims.subject
            guard subject == token.subject else {
                throw .invalidGrant(.unknown, "the authorization code belongs to another sign-in")
            }
        }
        return tokens.refreshToken
    }

    /// Finds or creates the account for a verified token, inside the sign-in transaction.
    private func link(
        _ token: AppleIdentityToken, request: SignInRequest, appleRefreshToken: String?, web: Bool, context: RequestContext, now: Date,
        on connection: any SQLConnection
    ) throws -> Authentication {
        guard try replays.rememberIdentityToken(key: token.replayKey, until: max(token.expiresAt, now).addingTimeInterval(60), on: connection) else {
            throw Self.replayed
        }

        var identity = try appleIdentity(subject: token.subject, on: connection)
        var event = AuditEvent.signIn
        if identity == nil, let transferSubject = token.transferSubject,
            let transferred = try identities.find(provider: Self.provider, issuer: settings.issuer, transferSubject: transferSubject, on: connection)
        {
            // A user of an app that moved to our team: the operator imported the sending team's
            // transfer ids; the identity keeps its account and takes the new subject.
            if try identities.takeOver(id: transferred.id, transferSubject: transferSubject, newSubject: token.subject, on: connection) {
                var linked = transferred
                linked.subject = token.subject
                linked.transferSubject = nil
                identity = linked
                event = .signInTransferLinked
            } else {
                // A concurrent sign-in of the same user took it over first; it carries this subject now.
                identity = try appleIdentity(subject: token.subject, on: connection)
            }
        }

        let users = dependencies.users
        let user: User
        let created: Bool
        if let identity {
            guard let stored = try users.find(identity.userID, on: connection) else { throw AuthError.notFound("no such user") }
            var existing = stored
            // Apple sends the name only the first time; keep what we have.
            if existing.givenName == nil && existing.familyName == nil, request.givenName != nil || request.familyName != nil {
                existing.givenName = request.givenName
                existing.familyName = request.familyName
            }
            if let email = token.email {
                existing.email = email
                existing.emailVerified = token.emailVerified
                existing.isPrivateEmail = token.isPrivateEmail
            }
            if existing != stored { try users.update(existing, now: now, on: connection) }
            let unchanged = (token.email == nil || identity.email == token.email)
                && identity.emailVerified == token.emailVerified && identity.isPrivateEmail == token.isPrivateEmail
                && (token.realUserStatus == nil || identity.realUserStatus == token.realUserStatus)
                && identity.revokedAt == nil
            if !unchanged {
                guard try identities.recordSignIn(
                    id: identity.id, email: token.email, emailVerified: token.emailVerified, isPrivateEmail: token.isPrivateEmail,
                    realUserStatus: token.realUserStatus, on: connection)
                else { throw AuthError.notFound("no such user") }
            }
            if let appleRefreshToken { try storeRefreshToken(appleRefreshToken, clientID: token.clientID, identityID: identity.id, now: now, on: connection) }
            user = existing
            created = false
        } else {
            user = try users.create(
                email: token.email, emailVerified: token.emailVerified, isPrivateEmail: token.isPrivateEmail, givenName: request.givenName,
                familyName: request.familyName, now: now, on: connection)
            let identityID = Identifiers.make("idn")
            let inserted = try identities.insert(
                Identity(
                    id: identityID, userID: user.id, provider: Self.provider, issuer: settings.issuer, subject: token.subject, email: token.email,
                    emailVerified: token.emailVerified, isPrivateEmail: token.isPrivateEmail, realUserStatus: token.realUserStatus, createdAt: now),
                on: connection)
            guard inserted else {
                // Another process created this user's account since the read above; rolling back
                // (the user row and the token's use with it) lets the retry sign in to that account.
                throw AuthError(.unavailable, "another sign-in of this Apple account is under way; try again", retryAfter: 1)
            }
            if let appleRefreshToken { try storeRefreshToken(appleRefreshToken, clientID: token.clientID, identityID: identityID, now: now, on: connection) }
            created = true
        }
        var details = ["method": "apple", "created": created ? "true" : "false", "code_exchanged": appleRefreshToken == nil ? "false" : "true"]
        if web { details["flow"] = "web" }
        try audit.record(
            .init(time: now, userID: user.id, event: event, outcome: .success, ip: context.ip, requestID: context.requestID, details: details),
            on: connection)
        return Authentication(user: user, created: created, amr: ["apple"])
    }

    /// The Apple identity of our issuer with this `sub`, read inside the caller's transaction.
    func appleIdentity(subject: String, on connection: any SQLConnection) throws -> Identity? {
        try identities.find(provider: Self.provider, issuer: settings.issuer, subject: subject, on: connection)
    }

    /// Stores Apple's refresh token sealed under the master key, bound to its identity row.
    private func storeRefreshToken(_ token: String, clientID: String, identityID: String, now: Date, on connection: any SQLConnection) throws {
        let sealed = try masterKey.seal(Array(token.utf8), context: Self.refreshTokenContext(identityID))
        guard try identities.storeAppleRefreshToken(id: identityID, sealed: sealed, clientID: clientID, at: now, on: connection) else {
            throw AuthError.notFound("no such user")
        }
    }

    static func refreshTokenContext(_ identityID: String) -> String { "identities.apple_refresh_token:" + identityID }

    /// Ends an Apple identity's standing: marks it revoked, forgets its refresh token (Apple no
    /// longer honours it) and ends the user's sessions with reason `consent_revoked`.
    ///
    /// - Parameters:
    ///   - claimedUntil: For the daily validation, its claim on the identity: the revocation
    ///     happens only while the claim holds and the identity still stores the token that was
    ///     checked (a sign-in storing a new token meanwhile wins).
    /// - Returns: Whether the identity was revoked (false: it is gone, or the claim no longer holds).
    @discardableResult
    func revokeIdentity(
        _ identity: Identity, claimedUntil: Date? = nil, source: String, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> Bool {
        let revoked: Bool
        if let claimedUntil {
            guard let checked = identity.sealedAppleRefreshToken else { return false }
            revoked = try identities.revoke(id: identity.id, claimedUntil: claimedUntil, checkedToken: checked, at: now, on: connection)
        } else {
            revoked = try identities.revoke(id: identity.id, at: now, on: connection)
        }
        guard revoked else { return false }
        try sessions.revokeAll(userID: identity.userID, reason: "consent_revoked", context: context, now: now, on: connection)
        try audit.record(
            .init(time: now, userID: identity.userID, event: .appleConsentRevoked, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: ["source": source]),
            on: connection)
        return true
    }
}
