import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// The admin console's sign-in (`/admin`, docs/admin.md "The console"). The console is an OAuth
/// client of this server (``ClientService/consoleID``): it sends the browser through
/// `/oauth/authorize` with PKCE S256, a `state` bound to the browser (``BrowserBoundState``) and
/// a nonce, all three derived from the state so nothing is stored before the browser comes back,
/// and exchanges the code in process. It lets in only an account that holds a role and whose
/// sign-in carries `mfa`: a second factor, or a passkey with user verification (S60). Its
/// sessions last ``lifetime`` at most (S59) and destructive actions need a sign-in younger than
/// ``freshness`` (S62).
struct ConsoleService: Sendable {
    let dependencies: Dependencies
    let tokens: TokenService
    let accessTokens: AccessTokens
    let sessions: SessionService
    let clients: ClientService
    let admin: AdminService
    let state: BrowserBoundState
    let repository = ConsoleRepository()

    /// The longest a console session lasts.
    static let lifetime: TimeInterval = 12 * 3600
    /// How old a sign-in may be for a destructive action.
    static let freshness: TimeInterval = 300
    static let callbackPath = "/admin/callback"
    /// The audit events the overview's chart counts as sign-ins, succeeded or failed.
    static let signInEvents: [AuditEvent] = [.passwordLogin, .signIn, .signInProvider, .passkeySignUp, .passkeyUsed]

    init(
        dependencies: Dependencies, tokens: TokenService, accessTokens: AccessTokens, sessions: SessionService, clients: ClientService,
        admin: AdminService, masterKey: MasterKey
    ) {
        self.dependencies = dependencies
        self.tokens = tokens
        self.accessTokens = accessTokens
        self.sessions = sessions
        self.clients = clients
        self.admin = admin
        state = BrowserBoundState(name: "console", keyLabel: "latchkey console state key v1", lifetime: 600, masterKey: masterKey)
    }

    /// Why the console turned a sign-in away, after the authorization server let it through.
    enum Refusal: Error, Sendable {
        /// The account holds no role.
        case noRole
        /// Signed in with neither a second factor nor a user-verified passkey (no `mfa`).
        case secondFactorNeeded
    }

    // MARK: Signing in

    /// The parameters of the authorization request that signs in to the console and comes back
    /// to `returnTo` (a path under `/admin`), and the binding for the browser's state cookie.
    ///
    /// - Parameter fresh: Ask for a sign-in within ``freshness`` (`max_age`), for a destructive action.
    func authorizationRequest(returnTo: String, fresh: Bool) async throws -> (parameters: [String: String], binding: String) {
        let client = try await clients.consoleClient(redirectURI: redirectURI)
        let (state, binding) = self.state.make(returnTo, now: dependencies.clock())
        let verifier = self.state.derived("verifier", from: state)
        var parameters = [
            "response_type": "code", "client_id": client.id, "redirect_uri": redirectURI, "scope": "openid admin", "state": state,
            "nonce": self.state.derived("nonce", from: state), "code_challenge": Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8))),
            "code_challenge_method": "S256",
        ]
        if fresh { parameters["max_age"] = String(Int(Self.freshness)) }
        return (parameters, binding)
    }

    var redirectURI: String { accessTokens.issuer + Self.callbackPath }

    /// The callback: checks the state against the browser's binding, exchanges the code, checks
    /// the ID token's nonce, and opens a console session for an account with a role that signed
    /// in with a second factor or a user-verified passkey. A refused sign-in's API session is ended at once.
    ///
    /// - Returns: The new session's cookie token and the path to go back to.
    /// - Throws: ``Refusal``; ``BrowserBoundState/Refusal`` for a state from elsewhere;
    ///   `invalid_grant` for a code that does not exchange.
    func finish(code: String, state: String, binding: String?, context: RequestContext) async throws -> (token: String, returnTo: String) {
        let now = dependencies.clock()
        let returnTo = try self.state.open(state, binding: binding, now: now).payload
        guard let client = try await clients.client(id: ClientService.consoleID) else { throw AuthError.invalidGrant(.unknown, "the console's client is gone") }
        let issued = try await tokens.exchange(
            code: code, redirectURI: redirectURI, verifier: self.state.derived("verifier", from: state), client: client, context: context)
        // Both tokens were signed in this process a moment ago: their payloads are read as they are.
        guard let idToken = issued.idToken, let id = try? JSONValue(parsing: JWS(compact: idToken).payload),
            let access = try? JSONValue(parsing: JWS(compact: issued.accessToken).payload), let userID = id["sub"]?.stringValue,
            let sessionID = access["sid"]?.stringValue, let authTime = id["auth_time"]?.numberValue
        else { throw AuthError.invalidGrant(.unknown, "the exchange gave no ID token") }
        let amr = id["amr"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard id["nonce"]?.stringValue == self.state.derived("nonce", from: state) else {
            _ = try await sessions.revokeSessions(userID: userID, sessionIDs: [sessionID], reason: "console_refused", context: context)
            throw AuthError.invalidGrant(.unknown, "the ID token's nonce is not the console's")
        }
        var refusal: Refusal?
        if try await admin.role(of: userID) == nil {
            refusal = .noRole
        } else if !amr.contains("mfa") {
            refusal = .secondFactorNeeded
        }
        if let refusal {
            _ = try await sessions.revokeSessions(userID: userID, sessionIDs: [sessionID], reason: "console_refused", context: context)
            throw refusal
        }
        let token = Identifiers.secret()
        let session = ConsoleSession(
            id: Identifiers.make("acs"), userID: userID, sessionID: sessionID, amr: amr, authTime: Date(timeIntervalSince1970: authTime), createdAt: now,
            expiresAt: now.addingTimeInterval(Self.lifetime))
        try await dependencies.database.write { try self.repository.insert(session, tokenHash: token.sha256, on: $0) }
        return (token, returnTo)
    }

    /// The live console session of a cookie's token and the role its account holds now: `nil`
    /// when the session ended or expired, its API session ended (signed out everywhere, the
    /// account disabled), or the role was taken away.
    func current(token: String) async throws -> (session: ConsoleSession, role: AdminRole)? {
        let now = dependencies.clock()
        guard token.utf8.count <= 256,
            let session = try await dependencies.database.read({ try self.repository.live(tokenHash: token.sha256, at: now, on: $0) }),
            try await accessTokens.isLive(session.sessionID, of: session.userID, now: now), let role = try await admin.role(of: session.userID)
        else { return nil }
        return (session, role)
    }

    /// Ends the console session and its API session.
    func signOut(_ session: ConsoleSession, context: RequestContext) async throws {
        let now = dependencies.clock()
        guard try await dependencies.database.write({ try self.repository.end(id: session.id, at: now, on: $0) }) else { return }
        _ = try await sessions.revokeSessions(userID: session.userID, sessionIDs: [session.sessionID], reason: "signed_out", context: context)
    }

    // MARK: The overview

    /// Sign-ins per hour over the last 24 hours, oldest hour first.
    func signInChart() async throws -> SignInChart {
        let now = dependencies.clock()
        let current = Int64((now.timeIntervalSince1970 / 3600).rounded(.down))
        let first = current - 23
        let rows = try await dependencies.database.read {
            try self.repository.signInHours(since: Date(timeIntervalSince1970: TimeInterval(first * 3600)), on: $0)
        }
        var hours = (first...current).map { SignInChart.Hour(start: Date(timeIntervalSince1970: TimeInterval($0 * 3600)), succeeded: 0, failed: 0) }
        for row in rows where row.hour >= first && row.hour <= current {
            let index = Int(row.hour - first)
            if row.succeeded { hours[index].succeeded += Int(row.count) } else { hours[index].failed += Int(row.count) }
        }
        return SignInChart(hours: hours)
    }
}
