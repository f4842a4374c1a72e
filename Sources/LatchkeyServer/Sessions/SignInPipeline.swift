import FoundationEssentials
import LatchkeyStore

/// Where a sign-in lands: a `/v1` session with tokens, an OAuth client's grant (an authorization
/// code exchanged at `/oauth/token`), or a browser session of the hosted pages.
package enum SignInTarget: Sendable {
    case api
    case grant(OAuthGrant)
    /// A browser session; `replacing` is the token of the browser session the request's cookie
    /// carried, which the sign-in ends in its own transaction (ASVS 5.0 V7.2.4, V7.4.1).
    case browser(replacing: String?)
}

/// A completed sign-in.
package enum SignedIn: Sendable {
    case api(TokenResponse)
    /// The browser session and the token for its cookie.
    case browser(BrowserSession, token: String)

    /// The tokens of a sign-in whose target was ``SignInTarget/api``.
    var tokens: TokenResponse {
        guard case .api(let tokens) = self else { preconditionFailure("an API sign-in lands in an API session") }
        return tokens
    }
}

/// What each way of signing in hands the pipeline, from inside the sign-in transaction: who
/// proved what, and how far the second factor has got. Where from is the ``RequestContext``.
struct Authentication: Sendable {
    /// How far a sign-in has got with its second factor.
    enum SecondFactor: Sendable {
        /// Only a first factor is proved: the pipeline asks for a second when the user has one.
        case notAsked
        /// Proved at this time, by this sign-in (MFA completion).
        case proved(at: Date)
        /// Decided by an earlier step of the same sign-in: an authorization code carries its
        /// browser sign-in's decision, and its second factor's time when it had one.
        case decided(provedAt: Date?)
    }

    /// The user who proved it (perhaps created just now).
    var user: User
    /// Whether this sign-in created the account.
    var created: Bool = false
    /// The methods proved (RFC 8176): the first factor's (`apple`, `pwd`), and after a second
    /// factor also that factor's and `mfa`.
    var amr: [String]
    var secondFactor: SecondFactor = .notAsked
}

/// The one way into a session. Every sign-in method (Apple, password, MFA completion, web Sign
/// in with Apple, an authorization code's exchange) proves who signs in inside one write
/// transaction and hands the pipeline an ``Authentication``; the pipeline alone decides whether
/// a second factor is needed, creates the session or browser session the ``SignInTarget`` names,
/// writes their audit entries in that transaction (S27, S28), counts the outcome in `/metrics`
/// and issues the tokens. A failure anywhere leaves neither a half-made user nor a session.
///
/// A new method is one call of ``signIn(method:context:target:authenticate:)`` (or of
/// ``admit(_:target:context:now:on:)`` from a transaction it must run itself) and cannot
/// skip the second-factor decision.
package struct SignInPipeline: Sendable {
    let dependencies: Dependencies
    let sessions: SessionService
    let browserSessions: BrowserSessionService
    let accessTokens: AccessTokens
    let mfaTokens = MFATokenRepository()

    /// What a sign-in created inside its transaction, before the access token is signed.
    enum Landing: Sendable {
        case api(Session, refreshToken: String)
        case browser(BrowserSession, token: String)
    }

    /// The pipeline's answer inside the transaction.
    enum Admission: Sendable {
        case landed(Landing)
        /// The user has a second factor: the `mfa_required` refusal to answer, whose
        /// `mfa_token` the transaction stored.
        case secondFactorRequired(AuthError)
    }

    /// Signs a user in: `authenticate` proves the first factor inside one write transaction with
    /// what the sign-in leads to. Sign-ins are counted in `/metrics` by method and outcome.
    ///
    /// A user with a second factor gets `403 mfa_required` with an `mfa_token` instead of a
    /// session, whether the sign-in was to land in an API session or a browser session.
    ///
    /// - Parameter method: The metrics label of the method: `apple`, `password`.
    func signIn(
        method: String, context: RequestContext, target: SignInTarget,
        authenticate: @escaping @Sendable (any SQLConnection, Date) throws -> Authentication
    ) async throws -> SignedIn {
        let now = dependencies.clock()
        let outcome: (Authentication, Admission)
        do {
            outcome = try await dependencies.database.write { connection in
                let authentication = try authenticate(connection, now)
                return (authentication, try self.admit(authentication, target: target, context: context, now: now, on: connection))
            }
        } catch {
            countFailure(method: method)
            throw error
        }
        return try await conclude(outcome, method: method, now: now)
    }

    /// What an admitted sign-in comes to once its transaction committed: the session it landed
    /// in, or the `mfa_required` refusal; counted in `/metrics` under `method`.
    func conclude(_ outcome: (Authentication, Admission), method: String, now: Date) async throws -> SignedIn {
        switch outcome {
        case (_, .secondFactorRequired(let mfaRequired)):
            dependencies.metrics.increment(.signIns, ["method": method, "outcome": "mfa_required"])
            throw mfaRequired
        case (let authentication, .landed(let landing)):
            dependencies.metrics.increment(.signIns, ["method": method, "outcome": "success"])
            return try await finish(landing, user: authentication.user, created: authentication.created, now: now)
        }
    }

    /// Counts a sign-in by `method` that failed before it was admitted.
    func countFailure(method: String) {
        dependencies.metrics.increment(.signIns, ["method": method, "outcome": "failure"])
    }

    /// ``signIn(method:context:target:authenticate:)`` into an API session.
    func signIn(
        method: String, context: RequestContext, authenticate: @escaping @Sendable (any SQLConnection, Date) throws -> Authentication
    ) async throws -> TokenResponse {
        try await signIn(method: method, context: context, target: .api, authenticate: authenticate).tokens
    }

    /// The pipeline inside the caller's transaction, for a method that must run the
    /// transaction itself (MFA completion commits a refused proof; a code exchange spends its
    /// code): the second-factor decision, then the session `target` names with its audit entry.
    /// The caller answers with ``finish(_:user:created:now:)`` once the transaction has committed.
    ///
    /// - Throws: ``AuthError/Code/accountDisabled`` when the account is disabled (S50), or at a
    ///   token endpoint (target ``SignInTarget/grant(_:)``) `invalid_grant` with reason
    ///   `account_disabled`; the caller's transaction rolls back.
    func admit(
        _ authentication: Authentication, target: SignInTarget, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> Admission {
        // Read in the sign-in's transaction, so a concurrent disabling either sees the session
        // this sign-in makes and ends it, or this sign-in sees the account disabled (S51).
        if try dependencies.users.disabledAt(authentication.user.id, on: connection) != nil {
            if case .grant = target { throw AuthError.invalidGrant(.accountDisabled, "the account is disabled") }
            throw AuthError.accountDisabled()
        }
        let secondFactorAt: Date?
        switch authentication.secondFactor {
        case .notAsked:
            if let mfaRequired = try beginSecondFactor(for: authentication, context: context, now: now, on: connection) {
                return .secondFactorRequired(mfaRequired)
            }
            secondFactorAt = nil
        case .proved(let at):
            secondFactorAt = at
        case .decided(let provedAt):
            secondFactorAt = provedAt
        }
        let userID = authentication.user.id
        switch target {
        case .api, .grant:
            let grant: OAuthGrant? = if case .grant(let grant) = target { grant } else { nil }
            let (session, refreshToken) = try sessions.createSession(
                userID: userID, amr: authentication.amr, secondFactorAt: secondFactorAt, grant: grant, context: context, now: now,
                on: connection)
            return .landed(.api(session, refreshToken: refreshToken))
        case .browser(let replacing):
            let (session, token) = try browserSessions.start(
                userID: userID, amr: authentication.amr, replacing: replacing, context: context, now: now, on: connection)
            return .landed(.browser(session, token: token))
        }
    }

    /// When the user has a second factor, stores an `mfa_token` (S7: 256 random bits, kept as a
    /// SHA-256 hash) in the sign-in transaction and returns the `mfa_required` refusal to answer
    /// instead of a session.
    ///
    /// - Returns: nil when the user has no second factor and the sign-in goes on.
    private func beginSecondFactor(
        for authentication: Authentication, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> AuthError? {
        let userID = authentication.user.id
        let factors = try SecondFactors.list(userID: userID, on: connection)
        guard !factors.isEmpty else { return nil }
        let token = Identifiers.secret()
        let method = authentication.amr.first ?? ""
        try mfaTokens.insert(
            MFAToken(hash: token.sha256, userID: userID, firstFactor: method, createdAt: now, expiresAt: now.addingTimeInterval(MFAToken.lifetime)),
            on: connection)
        try dependencies.record(.mfaRequired, .pending, userID: userID, context: context, now: now, details: ["method": method], on: connection)
        return .secondFactorRequired(token: token, factors: factors)
    }

    /// The answer to a sign-in, once its transaction has committed: an API session's access token
    /// is signed now.
    func finish(_ landing: Landing, user: User, created: Bool, now: Date) async throws -> SignedIn {
        switch landing {
        case .api(let session, let refreshToken):
            .api(try await accessTokens.response(session: session, refreshToken: refreshToken, user: user, created: created, now: now))
        case .browser(let session, let token):
            .browser(session, token: token)
        }
    }

    /// A session for an existing user without a sign-in method, in a transaction of its own: for
    /// tests and the benchmark's seeders, which need tokens, not a sign-in. No second factor is
    /// asked for.
    package func startSession(userID: String, amr: [String], context: RequestContext) async throws -> TokenResponse {
        let now = dependencies.clock()
        let (user, landing) = try await dependencies.database.write { connection in
            guard let user = try self.dependencies.users.find(userID, on: connection) else { throw AuthError.notFound("no such user") }
            let authentication = Authentication(user: user, amr: amr, secondFactor: .decided(provedAt: nil))
            guard case .landed(let landing) = try self.admit(authentication, target: .api, context: context, now: now, on: connection) else {
                preconditionFailure("a decided second factor is never asked for again")
            }
            return (user, landing)
        }
        return try await finish(landing, user: user, created: false, now: now).tokens
    }
}
