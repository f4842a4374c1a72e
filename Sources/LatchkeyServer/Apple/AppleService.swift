import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJSON
import LatchkeyStore

/// Sign in with Apple on the server side: sign-in, notifications, daily token validation and
/// the revocation outbox share Apple's keys, the REST client and the identities table.
final class AppleService: Sendable {
    let settings: AppleSettings
    let keys: AppleKeyCache
    let client: AppleClient
    let outbox: AppleRevocationOutbox
    let sessions: SessionService
    let masterKey: MasterKey
    let clock: @Sendable () -> Date
    var database: any SQLDatabase { sessions.database }
    var audit: AuditLog { sessions.audit }

    init(
        settings: AppleSettings, httpClient: any HTTPClient, timeout: Duration, sessions: SessionService, masterKey: MasterKey,
        clock: @escaping @Sendable () -> Date
    ) {
        self.settings = settings
        self.keys = AppleKeyCache(settings: settings, client: httpClient, timeout: timeout, metrics: sessions.metrics, clock: clock)
        self.client = AppleClient(settings: settings, client: httpClient, timeout: timeout, clock: clock)
        self.outbox = AppleRevocationOutbox(client: client, database: sessions.database, masterKey: masterKey, clock: clock)
        self.sessions = sessions
        self.masterKey = masterKey
        self.clock = clock
    }

    /// What `POST /v1/auth/apple` carries besides the token.
    struct SignInRequest: Sendable {
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
    func signIn(_ request: SignInRequest, context: RequestContext) async throws -> TokenResponse {
        let token: AppleIdentityToken
        var appleRefreshToken: String?
        do {
            token = try await AppleIdentityToken.verify(request.identityToken, rawNonce: request.nonce, keys: keys, settings: settings)
            if let code = request.authorizationCode {
                // A replay is refused for certain inside the sign-in transaction; checking first
                // keeps a replayed token from spending a code at Apple.
                let dialect = database.dialect
                let seen = try await database.read { connection in
                    try connection.queryOne(dialect.sql("SELECT 1 AS one FROM apple_identity_tokens WHERE token_key = ?"), [.blob(token.replayKey)]) != nil
                }
                if seen { throw Self.replayed }
                appleRefreshToken = try await exchange(code: code, for: token)
            }
        } catch let error as HTTPError {
            sessions.metrics.increment(.signIns, ["method": "apple", "outcome": "failure"])
            await recordFailure(error, context: context)
            throw error
        }
        do {
            // Counts its own failures in the metrics.
            return try await sessions.signIn(method: "apple", context: context) { [appleRefreshToken] connection, now in
                try self.link(token, request: request, appleRefreshToken: appleRefreshToken, context: context, now: now, on: connection)
            }
        } catch let error as HTTPError {
            await recordFailure(error, context: context)
            throw error
        }
    }

    /// The audit entry of a refused sign-in: which check failed, never the token (S26, S27).
    private func recordFailure(_ error: HTTPError, context: RequestContext) async {
        try? await audit.record(
            .init(time: clock(), userID: nil, event: .signIn, outcome: .failure, ip: context.ip, requestID: context.requestID,
                  details: ["method": "apple", "error": error.errorCode, "check": String(error.errorDescription.prefix { $0 != ":" }.prefix(40))]))
    }

    static let replayed = AppleIdentityToken.failure("replay", "this identity token was already used to sign in")

    /// Exchanges the authorization code, checking that Apple's answer is about the same user.
    private func exchange(code: String, for token: AppleIdentityToken) async throws -> String? {
        guard client.isConfigured else {
            throw HTTPError(status: 503, code: "apple_unavailable", description: "code exchange is not configured (apple.team_id)")
        }
        let tokens: AppleClient.Tokens
        do {
            tokens = try await client.exchange(code: code, clientID: token.clientID)
        } catch {
            throw error.httpError
        }
        if let idToken = tokens.idToken {
            var policy = AppleIdentityToken.policy(settings)
            policy.audiences = [token.clientID]
            let subject = try? await keys.verify(idToken, policy: policy).claims.subject
            guard subject == token.subject else {
                throw HTTPError.invalidGrant(.unknown, "the authorization code belongs to another sign-in")
            }
        }
        return tokens.refreshToken
    }

    /// Finds or creates the account for a verified token, inside the sign-in transaction.
    private func link(
        _ token: AppleIdentityToken, request: SignInRequest, appleRefreshToken: String?, context: RequestContext, now: Date,
        on connection: any SQLConnection
    ) throws -> SessionService.FirstFactor {
        let dialect = database.dialect
        let remembered = try connection.execute(
            dialect.sql("INSERT INTO apple_identity_tokens (token_key, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING"),
            [.blob(token.replayKey), .time(max(token.expiresAt, now).addingTimeInterval(60))])
        guard remembered == 1 else { throw Self.replayed }

        var identity = try appleIdentity(subject: token.subject, on: connection)
        var event = AuditEvent.signIn
        if identity == nil, let transferSubject = token.transferSubject {
            // A user of an app that moved to our team: the operator imported the sending team's
            // transfer ids; the identity keeps its account and takes the new subject.
            identity = try appleIdentity(transferSubject: transferSubject, on: connection)
            if let identity {
                try connection.execute(
                    dialect.sql("UPDATE identities SET subject = ?, transfer_sub = NULL WHERE id = ?"),
                    [.text(token.subject), .text(try identity.string("id"))])
                event = .signInTransferLinked
            }
        }

        let users = sessions.users
        let user: User
        let created: Bool
        if let identity {
            let identityID = try identity.string("id")
            guard let stored = try users.find(try identity.string("user_id"), on: connection) else { throw HTTPError.notFound("no such user") }
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
            let unchanged = (token.email == nil || identity.optionalString("email") == token.email)
                && identity.optionalBool("email_verified") == token.emailVerified && identity.optionalBool("is_private_email") == token.isPrivateEmail
                && (token.realUserStatus == nil || identity.optionalInt("real_user_status") == token.realUserStatus.map(Int64.init))
                && identity.optionalInt("revoked_at") == nil
            if !unchanged {
                try connection.execute(
                    dialect.sql(
                        """
                        UPDATE identities SET email = COALESCE(?, email), email_verified = ?, is_private_email = ?,
                            real_user_status = COALESCE(?, real_user_status), revoked_at = NULL
                        WHERE id = ?
                        """),
                    [SQLValue(token.email), .bool(token.emailVerified), .bool(token.isPrivateEmail), SQLValue(token.realUserStatus), .text(identityID)])
            }
            if let appleRefreshToken { try storeRefreshToken(appleRefreshToken, clientID: token.clientID, identityID: identityID, now: now, on: connection) }
            user = existing
            created = false
        } else {
            user = try users.create(
                email: token.email, emailVerified: token.emailVerified, isPrivateEmail: token.isPrivateEmail, givenName: request.givenName,
                familyName: request.familyName, now: now, on: connection)
            let identityID = Identifiers.make("idn")
            try connection.execute(
                dialect.sql(
                    """
                    INSERT INTO identities (id, user_id, provider, issuer, subject, email, email_verified, is_private_email, real_user_status, created_at)
                    VALUES (?, ?, 'apple', ?, ?, ?, ?, ?, ?, ?)
                    """),
                [
                    .text(identityID), .text(user.id), .text(settings.issuer), .text(token.subject), SQLValue(token.email), .bool(token.emailVerified),
                    .bool(token.isPrivateEmail), SQLValue(token.realUserStatus), .time(now),
                ])
            if let appleRefreshToken { try storeRefreshToken(appleRefreshToken, clientID: token.clientID, identityID: identityID, now: now, on: connection) }
            created = true
        }
        try audit.record(
            .init(time: now, userID: user.id, event: event, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: ["method": "apple", "created": created ? "true" : "false", "code_exchanged": appleRefreshToken == nil ? "false" : "true"]),
            on: connection)
        return .init(user: user, created: created, method: "apple")
    }

    /// The Apple identity of our issuer with this `sub`, read inside the caller's transaction.
    func appleIdentity(subject: String, on connection: any SQLConnection) throws -> SQLRow? {
        try connection.queryOne(
            database.dialect.sql("SELECT * FROM identities WHERE provider = 'apple' AND issuer = ? AND subject = ?"),
            [.text(settings.issuer), .text(subject)])
    }

    /// The Apple identity an operator imported this team-transfer id for.
    private func appleIdentity(transferSubject: String, on connection: any SQLConnection) throws -> SQLRow? {
        try connection.queryOne(
            database.dialect.sql("SELECT * FROM identities WHERE provider = 'apple' AND issuer = ? AND transfer_sub = ?"),
            [.text(settings.issuer), .text(transferSubject)])
    }

    /// Stores Apple's refresh token sealed under the master key, bound to its identity row.
    private func storeRefreshToken(_ token: String, clientID: String, identityID: String, now: Date, on connection: any SQLConnection) throws {
        let sealed = try masterKey.seal(Array(token.utf8), context: Self.refreshTokenContext(identityID))
        try connection.execute(
            database.dialect.sql("UPDATE identities SET apple_refresh_token = ?, apple_client_id = ?, last_validated_at = ? WHERE id = ?"),
            [.blob(sealed), .text(clientID), .time(now), .text(identityID)])
    }

    static func refreshTokenContext(_ identityID: String) -> String { "identities.apple_refresh_token:" + identityID }

    /// Ends an Apple identity's standing: marks it revoked, forgets its refresh token (Apple no
    /// longer honours it) and ends the user's sessions with reason `consent_revoked`.
    func revokeIdentity(id identityID: String, userID: String, source: String, context: RequestContext, now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            database.dialect.sql("UPDATE identities SET revoked_at = ?, apple_refresh_token = NULL WHERE id = ?"), [.time(now), .text(identityID)])
        try sessions.revokeAll(userID: userID, reason: "consent_revoked", context: context, now: now, on: connection)
        try audit.record(
            .init(time: now, userID: userID, event: .appleConsentRevoked, outcome: .success, ip: context.ip, requestID: context.requestID,
                  details: ["source": source]),
            on: connection)
    }
}
