import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// Password accounts: sign-up, login, change and operator resets (docs/security.md S11–S15).
///
/// Every Argon2id computation runs on the ``Argon2Pool``; every request's writes go into one
/// transaction with their audit entry (S27, S28). Unknown usernames cost the same as wrong
/// passwords: the same reads, one Argon2id verification against a dummy hash made with the
/// current parameters, the same failure writes, the same 401 body (S13).
package final class PasswordService: Sendable {
    let dependencies: Dependencies
    let signIns: SignInPipeline
    /// Ends the user's other sessions when the password changes.
    let sessions: SessionService
    let pool: Argon2Pool
    let policy: PasswordPolicy
    let limiter: LoginRateLimiter
    let parameters: Argon2id.Parameters
    let credentials = PasswordCredentialRepository()
    /// A PHC string no password matches, verified when the username is unknown (S13).
    private let dummyHash: String

    /// The `method` label of sign-in metrics and the `amr` value of password sign-ins.
    static let method = "pwd"

    var database: any SQLDatabase { dependencies.database }
    var metrics: Metrics { dependencies.metrics }
    var audit: AuditLog { dependencies.audit }

    init(dependencies: Dependencies, signIns: SignInPipeline, sessions: SessionService, configuration: Configuration) throws {
        self.dependencies = dependencies
        self.signIns = signIns
        self.sessions = sessions
        let password = configuration.password
        self.pool = try Argon2Pool(threads: password.hashingThreads, queueLimit: password.hashingQueueLimit)
        self.policy = PasswordPolicy(minimumLength: password.minLength)
        self.limiter = LoginRateLimiter(
            perAccount: configuration.rateLimits.loginPerAccount15m, perIP: configuration.rateLimits.loginPerIP15m)
        let parameters = password.argon2
        self.parameters = parameters
        self.dummyHash = Argon2id.unmatchablePHCString(parameters: parameters)
        let pool = pool
        dependencies.metrics.gauge(.queueDepth, ["queue": "argon2"]) { Double(pool.depth) }
    }

    /// Stops the hashing threads; after the HTTP server has stopped.
    func shutdown() async {
        await pool.shutdown()
    }

    // MARK: Sign-up

    /// Creates a user with a password credential and signs them in (the token response, 201).
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` for a bad username or a refused password,
    ///   ``AuthError/Code/conflict`` when the username is taken (the UNIQUE constraint decides),
    ///   ``AuthError/Code/overloaded`` when the hashing queue is full.
    func signUp(username raw: String, password: String, givenName: String?, familyName: String?, context: RequestContext) async throws -> TokenResponse {
        try await signUp(username: raw, password: password, givenName: givenName, familyName: familyName, context: context, target: .api).tokens
    }

    /// ``signUp(username:password:givenName:familyName:context:)`` into an API session or a
    /// hosted page's browser session.
    func signUp(
        username raw: String, password: String, givenName: String?, familyName: String?, context: RequestContext, target: SignInTarget
    ) async throws -> SignedIn {
        let username = try Username(raw)
        let normalized = try PasswordPolicy.normalize(password, field: "password")
        try policy.check(newPassword: normalized, field: "password")
        try pool.refuseIfFull()
        let credentials = credentials
        // A cheap look first, so a taken name costs no hash; the UNIQUE constraint decides.
        let taken = try await database.read { try credentials.usernameExists(username.value, on: $0) }
        guard !taken else { throw AuthError.conflict(Self.usernameTaken) }
        let parameters = parameters
        let hash = try await pool.run { try Argon2id.hash(password: Array(normalized.utf8), parameters: parameters) }
        return try await Self.refusingTakenUsernames {
            try await self.signIns.signIn(method: Self.method, context: context, target: target) { connection, now in
                let user = try self.dependencies.users.create(
                    email: username.isEmail ? username.value : nil, givenName: givenName, familyName: familyName, now: now, on: connection)
                try credentials.insert(userID: user.id, username: username.value, hash: hash, now: now, on: connection)
                try self.audit.record(
                    .init(time: now, userID: user.id, event: .passwordSignUp, outcome: .success, ip: context.ip, requestID: context.requestID),
                    on: connection)
                return Authentication(user: user, created: true, amr: [Self.method])
            }
        }
    }

    // MARK: Login

    /// Checks a username and password and signs the user in.
    ///
    /// - Throws: ``AuthError/Code/invalidCredentials`` (the same for an unknown user and a wrong
    ///   password), ``AuthError/Code/rateLimited``, ``AuthError/Code/overloaded``.
    func logIn(username raw: String, password: String, context: RequestContext) async throws -> TokenResponse {
        try await logIn(username: raw, password: password, context: context, target: .api).tokens
    }

    /// ``logIn(username:password:context:)`` into an API session or a hosted page's browser session.
    func logIn(username raw: String, password: String, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        // A name that breaks the rule cannot exist; it still costs a hash, as an unknown name does.
        let username = (try? Username(raw))?.value ?? raw
        let normalized = try PasswordPolicy.normalize(password, field: "password")
        try pool.refuseIfFull()
        let keys = limiter.keys(username: username, ip: context.ip)
        let credential = try await checkLimits(keys, username: username, event: .passwordLogin, context: context)
        let (matches, upgrade) = try await verify(normalized, against: credential?.hash)
        guard let credential, matches else {
            try await recordFailure(keys, userID: credential?.userID, event: .passwordLogin, reason: credential == nil ? "unknown_user" : "wrong_password", context: context)
            metrics.increment(.signIns, ["method": Self.method, "outcome": "failure"])
            throw Self.invalidCredentials
        }
        let (limiter, credentials) = (limiter, credentials)
        return try await signIns.signIn(method: Self.method, context: context, target: target) { connection, now in
            // The password may have changed since it was read; then this check no longer counts.
            // Both the rehash and the plain check compare against the verified hash and hold the
            // row, so a concurrent change either waits for this sign-in or wins before it.
            let current: Bool
            if let upgrade {
                current = try credentials.replaceHash(userID: credential.userID, expected: credential.hash, with: upgrade, now: now, on: connection)
            } else {
                current = try credentials.holds(userID: credential.userID, hash: credential.hash, on: connection)
            }
            guard current, let user = try self.dependencies.users.find(credential.userID, on: connection) else { throw Self.invalidCredentials }
            try limiter.reset(keys[0], on: connection)
            try self.audit.record(
                .init(time: now, userID: user.id, event: .passwordLogin, outcome: .success, ip: context.ip, requestID: context.requestID,
                      details: upgrade == nil ? [:] : ["rehashed": "true"]),
                on: connection)
            return Authentication(user: user, amr: [Self.method])
        }
    }

    // MARK: Change

    /// Replaces the password of a signed-in user after checking the current one, and ends the
    /// user's other sessions (S9).
    ///
    /// Only the hash that was verified is replaced: when another change landed in between, this
    /// one is answered as a failed check and changes nothing.
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` when the account has no password or the new
    ///   one is refused, ``AuthError/Code/invalidCredentials`` for a wrong current password (or a
    ///   concurrent change that won), ``AuthError/Code/rateLimited``, ``AuthError/Code/overloaded``.
    func change(principal: Principal, currentPassword: String, newPassword: String, context: RequestContext) async throws {
        let current = try PasswordPolicy.normalize(currentPassword, field: "current_password")
        let new = try PasswordPolicy.normalize(newPassword, field: "new_password")
        try policy.check(newPassword: new, field: "new_password")
        try pool.refuseIfFull()
        let credentials = credentials
        let username = try await database.read { try credentials.find(userID: principal.userID, on: $0)?.username }
        guard let username else { throw Self.noPassword }
        let keys = limiter.keys(username: username, ip: context.ip)
        guard let credential = try await checkLimits(keys, username: username, event: .passwordChange, context: context) else {
            throw Self.noPassword
        }
        let parameters = parameters
        let replacement = try await pool.run { () throws -> String? in
            guard try Argon2id.verify(password: Array(current.utf8), phcString: credential.hash) else { return nil }
            return try Argon2id.hash(password: Array(new.utf8), parameters: parameters)
        }
        guard let replacement else {
            try await recordFailure(keys, userID: principal.userID, event: .passwordChange, reason: "wrong_password", context: context)
            throw Self.invalidCredentials
        }
        let now = dependencies.clock()
        let limiter = limiter
        try await database.write { connection in
            guard try credentials.replaceHash(userID: principal.userID, expected: credential.hash, with: replacement, now: now, on: connection) else {
                throw Self.invalidCredentials
            }
            try limiter.reset(keys[0], on: connection)
            let ended = try self.sessions.revokeAll(
                userID: principal.userID, except: principal.sessionID, reason: "password_changed", context: context, now: now, on: connection)
            try self.audit.record(
                .init(time: now, userID: principal.userID, event: .passwordChanged, outcome: .success, ip: context.ip,
                      requestID: context.requestID, details: ["sessions_ended": String(ended.count)]),
                on: connection)
        }
    }

    // MARK: Operator

    /// Sets a user's password from the command line (`latchkey users set-password ID`), ends
    /// all of the user's sessions and lifts a lockout on the account, in one transaction.
    ///
    /// - Parameters:
    ///   - userID: The user.
    ///   - password: The new password; the policy applies as for users.
    ///   - username: A new username; needed when the user has no password yet and no email.
    /// - Returns: Whether the account had failed sign-ins that were cleared.
    /// - Throws: ``AuthError`` whose message says what is wrong (``AuthError/Code/notFound``,
    ///   ``AuthError/Code/invalidRequest``, ``AuthError/Code/conflict`` for a taken username).
    package func setPassword(userID: String, password: String, username raw: String?, context: RequestContext) async throws -> Bool {
        let normalized = try PasswordPolicy.normalize(password, field: "password")
        try policy.check(newPassword: normalized, field: "password")
        let requested = try raw.map(Username.init)
        let parameters = parameters
        let hash = try await pool.run { try Argon2id.hash(password: Array(normalized.utf8), parameters: parameters) }
        let now = dependencies.clock()
        let credentials = credentials
        return try await Self.refusingTakenUsernames {
            try await self.database.write { connection in
                guard let user = try self.dependencies.users.find(userID, on: connection) else { throw AuthError.notFound("no such user") }
                let username: String
                if let existing = try credentials.find(userID: userID, on: connection),
                    try credentials.replace(userID: userID, username: requested?.value ?? existing.username, hash: hash, now: now, on: connection)
                {
                    username = requested?.value ?? existing.username
                } else {
                    guard let new = try requested ?? user.email.map(Username.init) else {
                        throw AuthError.invalidRequest("the user has no username yet; give one with --username")
                    }
                    username = new.value
                    try credentials.insert(userID: userID, username: username, hash: hash, now: now, on: connection)
                }
                let ended = try self.sessions.revokeAll(userID: userID, reason: "password_reset", context: context, now: now, on: connection)
                try self.audit.record(
                    .init(time: now, userID: userID, event: .passwordSetByOperator, outcome: .success, ip: context.ip,
                          requestID: context.requestID, details: ["sessions_ended": String(ended.count)]),
                    on: connection)
                // The operator has just given the user a password they know, so it must work at
                // once: the account's failures go. The per-address counters stay, since they
                // limit the guesser, not the user.
                guard try self.limiter.reset(self.limiter.keys(username: username, ip: nil)[0], on: connection) else { return false }
                try self.audit.record(
                    .init(time: now, userID: userID, event: .passwordLockoutLifted, outcome: .success, ip: context.ip,
                          requestID: context.requestID),
                    on: connection)
                return true
            }
        }
    }

    // MARK: Email flows

    /// The account a password reset mailed to `email` is for: the password account whose
    /// username is that (normalised) address.
    func accountForReset(email: String, on connection: any SQLConnection) throws -> String? {
        try credentials.find(username: email, on: connection)?.userID
    }

    /// Checks a new password against the policy (400 with `reason`, before anything else
    /// happens) and hashes it on the pool.
    func hashNewPassword(_ password: String) async throws -> String {
        let normalized = try PasswordPolicy.normalize(password, field: "password")
        try policy.check(newPassword: normalized, field: "password")
        try pool.refuseIfFull()
        let parameters = parameters
        return try await pool.run { try Argon2id.hash(password: Array(normalized.utf8), parameters: parameters) }
    }

    /// Sets the password a reset chose, inside the reset's transaction, and lifts the account's
    /// lockout: the user has just proved the address and chosen a password they know.
    ///
    /// - Returns: Whether the user still has a password to replace.
    func applyReset(userID: String, hash: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        guard let credential = try credentials.find(userID: userID, on: connection),
            try credentials.replace(userID: userID, username: credential.username, hash: hash, now: now, on: connection)
        else { return false }
        _ = try limiter.reset(limiter.keys(username: credential.username, ip: nil)[0], on: connection)
        return true
    }

    /// After a confirmed change of email, an email-like username that was the old address
    /// becomes the new one.
    ///
    /// - Throws: ``AuthError/Code/conflict`` when the new address is another account's username.
    func followEmailChange(userID: String, from old: String?, to new: String, now: Date, on connection: any SQLConnection) throws {
        guard let old, let credential = try credentials.find(userID: userID, on: connection), credential.username == old else { return }
        guard try !credentials.usernameExists(new, on: connection) else { throw AuthError.conflict("another account uses this address") }
        _ = try credentials.replace(userID: userID, username: new, hash: credential.hash, now: now, on: connection)
    }

    // MARK: Steps

    /// Reads the limits and the credential in one snapshot; a block is audited, counted and
    /// refused (``AuthError/Code/rateLimited``) before any hashing.
    private func checkLimits(_ keys: [LoginRateLimiter.Key], username: String, event: AuditEvent, context: RequestContext) async throws -> PasswordCredential? {
        let now = dependencies.clock()
        let (limiter, credentials) = (limiter, credentials)
        let (block, credential) = try await database.read { connection in
            (try limiter.block(keys, now: now, on: connection), try credentials.find(username: username, on: connection))
        }
        guard let block else { return credential }
        metrics.increment(.rateLimitHits, ["scope": "login_" + block.scope])
        try await audit.record(
            .init(time: now, userID: credential?.userID, event: event, outcome: .rateLimited, ip: context.ip, requestID: context.requestID,
                  details: ["scope": block.scope, "retry_after": String(block.retryAfter)]))
        throw AuthError.rateLimited(retryAfter: block.retryAfter)
    }

    /// Verifies on the pool, against the dummy hash when there is no credential; says whether the
    /// password matched and, when the stored parameters are not the configured ones, the new hash.
    private func verify(_ password: String, against stored: String?) async throws -> (Bool, String?) {
        let parameters = parameters
        let hash = stored ?? dummyHash
        let result = try await pool.run { () throws -> (Bool, String?) in
            let bytes = Array(password.utf8)
            guard try Argon2id.verify(password: bytes, phcString: hash) else { return (false, nil) }
            guard try Argon2id.parameters(ofPHCString: hash) != parameters else { return (true, nil) }
            return (true, try Argon2id.hash(password: bytes, parameters: parameters))
        }
        return stored == nil ? (false, nil) : result
    }

    /// Counts a failure on every key and audits it, in one transaction.
    private func recordFailure(_ keys: [LoginRateLimiter.Key], userID: String?, event: AuditEvent, reason: String, context: RequestContext) async throws {
        let now = dependencies.clock()
        let limiter = limiter
        try await database.write { connection in
            try limiter.recordFailure(keys, now: now, on: connection)
            try self.audit.record(
                .init(time: now, userID: userID, event: event, outcome: .failure, ip: context.ip, requestID: context.requestID,
                      details: ["reason": reason]),
                on: connection)
        }
    }

    /// Runs `body` and answers the UNIQUE constraint on usernames as a taken username.
    private static func refusingTakenUsernames<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError where error.code == .constraint {
            throw AuthError.conflict(usernameTaken)
        }
    }

    static let invalidCredentials = AuthError(.invalidCredentials, "the username or password is wrong")
    static let noPassword = AuthError.invalidRequest("this account has no password; it signs in another way")
    static let usernameTaken = "the username is taken"
}
