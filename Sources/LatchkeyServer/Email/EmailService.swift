import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// The email flows (docs/reference.md, "Email"): verification of the account's address,
/// password reset, sign-in by code, and change of address. Every flow mails one message with a
/// link and a 6-digit code (``EmailSecrets``), queued in the outbox in the transaction that
/// starts the flow; confirming it, by the link's token or by the flow id and the code, ends it
/// in the transaction that applies it.
///
/// No enumeration: starting a reset or a sign-in answers the same for any address, with a flow
/// of its own, and costs the same writes; only an address with an account gets mail. Requests
/// are limited per address and per client address, counted whether or not the address has an
/// account (docs/security.md S32).
package final class EmailService: Sendable {
    let dependencies: Dependencies
    let signIns: SignInPipeline
    let sessions: SessionService
    let passwords: PasswordService
    let outbox: MailOutbox
    /// The messages, per purpose and locale (`email.templates_dir` over the compiled-in ones).
    let templates: MailTemplateSet
    /// The server's public URL, which the links start with; known once the server listens.
    let publicURL: @Sendable () -> String
    /// The HMAC key of stored codes, derived from the master key.
    let codeKey: [UInt8]
    let codeTTL: Int
    let perAddress: Int
    let perIP: Int
    let flows = EmailFlowRepository()
    let rateLimits = RateLimitRepository()

    /// The `method` label of sign-in metrics and the `amr` of a sign-in by email.
    static let method = "email"
    /// The window of the request limits.
    static let window: TimeInterval = 3600

    /// - Throws: ``ConfigurationError`` naming `email.templates_dir` and the file, for a template
    ///   of that directory that cannot be used (``MailTemplateSet``).
    init(
        dependencies: Dependencies, signIns: SignInPipeline, sessions: SessionService, passwords: PasswordService, outbox: MailOutbox,
        configuration: Configuration, masterKey: MasterKey, publicURL: @escaping @Sendable () -> String
    ) throws(ConfigurationError) {
        self.dependencies = dependencies
        self.signIns = signIns
        self.sessions = sessions
        self.passwords = passwords
        self.outbox = outbox
        self.templates = try MailTemplateSet(productName: configuration.email.productName, directory: configuration.email.templatesDir)
        self.publicURL = publicURL
        self.codeKey = masterKey.derivedKey(label: "email-flow-codes")
        self.codeTTL = configuration.email.codeTTL
        self.perAddress = configuration.rateLimits.emailPerAddressHour
        self.perIP = configuration.rateLimits.emailPerIPHour
    }

    /// The locale a request's messages are written in, from its `Accept-Language` (all of the
    /// header's fields, joined with commas): one of the templates' locales, else English.
    func locale(accepting acceptLanguage: String?) -> MailLocale {
        templates.locale(accepting: acceptLanguage)
    }

    /// What a started flow answers: its id, for the code, and how long it lasts.
    package struct Started: Sendable {
        package var flowID: String
        package var expiresIn: Int
    }

    // MARK: Starting

    /// Mails a verification of the signed-in account's address, in `locale` (as every request
    /// below: the locale of the request, ``locale(accepting:)``).
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` when the account has no email,
    ///   ``AuthError/Code/conflict`` when it is verified already.
    func requestVerification(principal: Principal, locale: MailLocale, context: RequestContext) async throws -> Started {
        try await start(locale: locale, context: context) { connection, now in
            guard let user = try self.dependencies.users.find(principal.userID, on: connection) else { throw AuthError.invalidToken("the account no longer exists") }
            guard let email = user.email else { throw AuthError.invalidRequest("the account has no email address to verify") }
            guard !user.emailVerified else { throw AuthError.conflict("the email address is verified already") }
            return Request(purpose: .verify, email: email, userID: user.id)
        }
    }

    /// Mails a password reset to the password account with this address, if there is one; the
    /// answer is the same either way.
    func requestPasswordReset(email raw: String, locale: MailLocale, context: RequestContext) async throws -> Started {
        let email = try Self.address(raw)
        return try await start(locale: locale, context: context) { connection, _ in
            Request(purpose: .reset, email: email, userID: try self.passwords.accountForReset(email: email, on: connection))
        }
    }

    /// Mails the same reset to an account's address at an admin's request
    /// (`POST /v1/admin/users/{id}/password-reset`); the admin sees neither the link nor the code.
    ///
    /// - Throws: ``AuthError/Code/notFound`` for no such account; ``AuthError/Code/invalidRequest``
    ///   when it has no email address.
    func requestPasswordReset(userID: String, locale: MailLocale, context: RequestContext) async throws {
        _ = try await start(locale: locale, context: context) { connection, _ in
            guard let user = try self.dependencies.users.find(userID, on: connection) else { throw AuthError.notFound("no such user") }
            guard let email = user.email else { throw AuthError.invalidRequest("the account has no email address to send a reset to") }
            return Request(purpose: .reset, email: email, userID: user.id)
        }
    }

    /// Mails a sign-in code to the account with this address; with `create`, to any address,
    /// and confirming it creates the account. The answer is the same either way.
    func requestSignIn(email raw: String, create: Bool, locale: MailLocale, context: RequestContext) async throws -> Started {
        let email = try Self.address(raw)
        return try await start(locale: locale, context: context) { connection, _ in
            Request(purpose: .signIn, email: email, userID: try self.account(email: email, on: connection), mayCreate: create)
        }
    }

    /// Mails a confirmation to the new address, for a session that signed in or proved a second
    /// factor in the last five minutes. The old address hears of it once the change is confirmed.
    ///
    /// - Throws: ``AuthError/Code/insufficientAuthentication``; ``AuthError/Code/conflict`` when
    ///   another account uses the address; ``AuthError/Code/invalidRequest`` when it is the
    ///   account's address already.
    func requestChange(principal: Principal, email raw: String, locale: MailLocale, context: RequestContext) async throws -> Started {
        let email = try Self.address(raw)
        return try await start(locale: locale, context: context) { connection, now in
            try self.sessions.requireFreshSignIn(principal, now: now, on: connection)
            guard let user = try self.dependencies.users.find(principal.userID, on: connection) else { throw AuthError.invalidToken("the account no longer exists") }
            guard user.email != email else { throw AuthError.invalidRequest("that is the account's address already") }
            guard try self.account(email: email, on: connection) == nil else { throw AuthError.conflict("another account uses this address") }
            return Request(purpose: .change, email: email, userID: user.id, newEmail: email)
        }
    }

    /// What a request starts: a flow of `purpose` for `email`, whose account (if any) is
    /// `userID`; a change carries the address it moves to, a sign-in whether it may create the
    /// account.
    private struct Request {
        var purpose: EmailPurpose
        var email: String
        var userID: String?
        var newEmail: String? = nil
        var mayCreate = false
    }

    /// Counts the request against the limits, ends older flows of the same purpose for the
    /// address, stores the new flow and, when it has an account (or may create one), queues its
    /// message, all in one transaction.
    private func start(
        locale: MailLocale, context: RequestContext,
        _ decide: @escaping @Sendable (any SQLConnection, Date) throws -> Request
    ) async throws -> Started {
        let now = dependencies.clock()
        let secrets = EmailSecrets.make()
        let id = Identifiers.make("efl")
        let base = publicURL()
        return try await dependencies.database.write { connection in
            let request = try decide(connection, now)
            let (purpose, email, userID) = (request.purpose, request.email, request.userID)
            try self.countRequest(email: email, context: context, now: now, on: connection)
            try self.flows.supersede(email: email, purpose: purpose, now: now, on: connection)
            try self.flows.insert(
                EmailFlow(
                    id: id, purpose: purpose, email: email, userID: userID, newEmail: request.newEmail, mayCreate: request.mayCreate,
                    tokenHash: secrets.token.sha256, codeHash: EmailSecrets.codeHash(secrets.code, flowID: id, key: self.codeKey), attempts: 0,
                    createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(self.codeTTL)), endedAt: nil, endedReason: nil),
                on: connection)
            if userID != nil || request.mayCreate {
                let link = base + "/email/" + purpose.rawValue + "?token=" + secrets.token
                try self.outbox.enqueue(
                    self.templates.message(for: purpose, locale: locale, to: email, link: link, code: secrets.code, minutes: self.codeTTL / 60), now: now,
                    on: connection)
            }
            try self.dependencies.record(
                .emailRequested, .pending, userID: userID, context: context, now: now, details: ["purpose": purpose.rawValue], on: connection)
            return Started(flowID: id, expiresIn: self.codeTTL)
        }
    }

    /// One more request for `email` and from the client's address; 429 past either limit.
    private func countRequest(email: String, context: RequestContext, now: Date, on connection: any SQLConnection) throws {
        var keys = [("email_address", "email:address:" + HashFunction.sha256.hexDigest(Array(email.utf8)), perAddress)]
        if let ip = context.ip { keys.append(("email_ip", "email:ip:" + ip, perIP)) }
        for (scope, key, limit) in keys {
            let (count, windowStart) = try rateLimits.count(key: key, now: now, windowStartedBefore: now.addingTimeInterval(-Self.window), on: connection)
            if count > limit {
                dependencies.metrics.increment(.rateLimitHits, ["scope": scope])
                throw AuthError.rateLimited(retryAfter: max(1, Int(windowStart.addingTimeInterval(Self.window).timeIntervalSince(now).rounded(.up))))
            }
        }
    }

    // MARK: Confirming

    /// Marks the account's address verified.
    func confirmVerification(_ proof: EmailProof, context: RequestContext) async throws -> User {
        try await confirm(proof, .verify, context: context) { flow, connection, now in
            guard var user = try self.user(of: flow, on: connection) else { return .failure(Self.unknown) }
            if user.email == flow.email, !user.emailVerified {
                user.emailVerified = true
                try self.dependencies.users.update(user, now: now, on: connection)
            }
            try self.dependencies.record(.emailVerified, .success, userID: user.id, context: context, now: now, on: connection)
            return .success(user)
        }
    }

    /// Sets a new password, ends every session of the account, lifts its lockout, marks its
    /// address verified, then signs in: the token response, or 403 `mfa_required` for an
    /// account with a second factor (a reset never skips it). A refused password (400 with
    /// `reason`) leaves the flow as it was.
    func confirmPasswordReset(_ proof: EmailProof, password: String, context: RequestContext) async throws -> TokenResponse {
        try await confirmPasswordReset(proof, password: password, context: context, target: .api).tokens
    }

    /// ``confirmPasswordReset(_:password:context:)`` into an API session or a hosted page's
    /// browser session.
    func confirmPasswordReset(_ proof: EmailProof, password: String, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        let hash = try await passwords.hashNewPassword(password)
        return try await signIn(proof, .reset, context: context, target: target, reset(hash: hash, context: context))
    }

    /// The reset of the mailed link's page: the same, without signing in (the browser has no
    /// use for the app's tokens).
    func resetPassword(_ proof: EmailProof, password: String, context: RequestContext) async throws {
        let hash = try await passwords.hashNewPassword(password)
        _ = try await confirm(proof, .reset, context: context, reset(hash: hash, context: context))
    }

    private func reset(hash: String, context: RequestContext) -> @Sendable (EmailFlow, any SQLConnection, Date) throws -> Result<Authentication, AuthError> {
        { flow, connection, now in
            guard var user = try self.user(of: flow, on: connection),
                try self.passwords.applyReset(userID: user.id, hash: hash, now: now, on: connection)
            else { return .failure(Self.unknown) }
            let ended = try self.sessions.revokeAll(userID: user.id, reason: "password_reset", context: context, now: now, on: connection)
            if user.email == flow.email, !user.emailVerified {
                user.emailVerified = true
                try self.dependencies.users.update(user, now: now, on: connection)
            }
            try self.dependencies.record(
                .passwordReset, .success, userID: user.id, context: context, now: now, details: ["sessions_ended": String(ended.count)], on: connection)
            return .success(Authentication(user: user, amr: [Self.method]))
        }
    }

    /// Signs in the account with the flow's address, creating it when the flow allows; the
    /// address is verified by the proof.
    func confirmSignIn(_ proof: EmailProof, context: RequestContext) async throws -> TokenResponse {
        try await confirmSignIn(proof, context: context, target: .api).tokens
    }

    /// ``confirmSignIn(_:context:)`` into an API session or a hosted page's browser session.
    func confirmSignIn(_ proof: EmailProof, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        try await signIn(proof, .signIn, context: context, target: target) { flow, connection, now in
            if let userID = try flow.userID ?? self.account(email: flow.email, on: connection),
                var user = try self.dependencies.users.find(userID, on: connection)
            {
                if user.email == flow.email, !user.emailVerified {
                    user.emailVerified = true
                    try self.dependencies.users.update(user, now: now, on: connection)
                }
                return .success(Authentication(user: user, amr: [Self.method]))
            }
            guard flow.mayCreate else { return .failure(Self.unknown) }
            let user = try self.dependencies.users.create(email: flow.email, emailVerified: true, now: now, on: connection)
            return .success(Authentication(user: user, created: true, amr: [Self.method]))
        }
    }

    /// Moves the account to the flow's new address (verified); an email-like username follows.
    /// The old address is told, by a message with no link, in `locale`: the locale of this
    /// request, the one that confirmed the change (the flow keeps no locale of its own).
    ///
    /// - Throws: ``AuthError/Code/conflict`` when another account took the address meanwhile
    ///   (nothing changes and the flow stays open).
    func confirmChange(_ proof: EmailProof, locale: MailLocale, context: RequestContext) async throws -> User {
        try await confirm(proof, .change, context: context) { flow, connection, now in
            guard var user = try self.user(of: flow, on: connection), let new = flow.newEmail else { return .failure(Self.unknown) }
            guard try self.account(email: new, on: connection).map({ $0 == user.id }) ?? true else {
                throw AuthError.conflict("another account uses this address")
            }
            let old = user.email
            try self.passwords.followEmailChange(userID: user.id, from: old, to: new, now: now, on: connection)
            user.email = new
            user.emailVerified = true
            user.isPrivateEmail = false
            try self.dependencies.users.update(user, now: now, on: connection)
            var details = ["new": HashFunction.sha256.hexDigest(Array(new.utf8))]
            if let old {
                details["old"] = HashFunction.sha256.hexDigest(Array(old.utf8))
                try self.outbox.enqueue(self.templates.changeNotice(locale: locale, to: old), now: now, on: connection)
            }
            try self.dependencies.record(.emailChanged, .success, userID: user.id, context: context, now: now, details: details, on: connection)
            return .success(user)
        }
    }

    /// Spends the proof and applies `effect` in one transaction. A refusal commits (a wrong
    /// code counts) and is thrown after; an error thrown by `effect` rolls everything back.
    private func confirm<T: Sendable>(
        _ proof: EmailProof, _ purpose: EmailPurpose, context: RequestContext,
        _ effect: @escaping @Sendable (EmailFlow, any SQLConnection, Date) throws -> Result<T, AuthError>
    ) async throws -> T {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection -> Result<T, AuthError> in
            switch try self.spend(proof, purpose, context: context, now: now, on: connection) {
            case .failure(let refusal): .failure(refusal)
            case .success(let flow): try effect(flow, connection, now)
            }
        }.get()
    }

    /// ``confirm(_:_:context:_:)`` for a flow that ends in a sign-in: the pipeline decides the
    /// second factor and makes the session (or browser session) `target` names in the same
    /// transaction.
    private func signIn(
        _ proof: EmailProof, _ purpose: EmailPurpose, context: RequestContext, target: SignInTarget,
        _ authenticate: @escaping @Sendable (EmailFlow, any SQLConnection, Date) throws -> Result<Authentication, AuthError>
    ) async throws -> SignedIn {
        let now = dependencies.clock()
        let admitted: (Authentication, SignInPipeline.Admission)
        do {
            admitted = try await confirm(proof, purpose, context: context) { flow, connection, now in
                switch try authenticate(flow, connection, now) {
                case .failure(let refusal): .failure(refusal)
                case .success(let authentication):
                    .success((authentication, try self.signIns.admit(authentication, target: target, context: context, now: now, on: connection)))
                }
            }
        } catch {
            signIns.countFailure(method: Self.method)
            throw error
        }
        return try await signIns.conclude(admitted, method: Self.method, now: now)
    }

    /// Checks a proof against an open flow of `purpose` and ends the flow when it holds; a
    /// wrong code is counted (five end the flow) and audited.
    private func spend(
        _ proof: EmailProof, _ purpose: EmailPurpose, context: RequestContext, now: Date, on connection: any SQLConnection
    ) throws -> Result<EmailFlow, AuthError> {
        let found: EmailFlow? =
            switch proof {
            case .token(let token): try flows.find(tokenHash: token.sha256, on: connection)
            case .code(let flowID, _): try flows.find(id: flowID, on: connection)
            }
        let refuse = { (reason: AuthError.Reason, message: String, userID: String?) throws -> Result<EmailFlow, AuthError> in
            try self.dependencies.record(
                .emailFailed, .failure, userID: userID, context: context, now: now,
                details: ["purpose": purpose.rawValue, "reason": reason.rawValue], on: connection)
            return .failure(.invalidGrant(reason, message))
        }
        guard let flow = found, flow.purpose == purpose else { return try refuse(.unknown, "no such link or code", nil) }
        switch flow.endedReason {
        case "used"?: return try refuse(.used, "this link or code was used already", flow.userID)
        case "superseded"?: return try refuse(.superseded, "a newer message replaced this one", flow.userID)
        case "too_many_attempts"?: return try refuse(.tooManyAttempts, "too many wrong codes; ask for a new message", flow.userID)
        default: break
        }
        guard now < flow.expiresAt else { return try refuse(.expired, "this link or code has expired; ask for a new message", flow.userID) }
        if case .code(_, let code) = proof,
            !ConstantTime.equals(EmailSecrets.codeHash(code, flowID: flow.id, key: codeKey), flow.codeHash)
        {
            guard try flows.recordWrongCode(id: flow.id, now: now, on: connection) else { return try refuse(.used, "this code was used already", flow.userID) }
            return try refuse(.invalidCode, "the code is wrong", flow.userID)
        }
        guard try flows.end(id: flow.id, reason: "used", now: now, on: connection) else {
            return try refuse(.used, "this link or code was used already", flow.userID)
        }
        return .success(flow)
    }

    // MARK: Lookups

    /// The account an address names: the password account whose username it is, else the
    /// oldest account with that email.
    private func account(email: String, on connection: any SQLConnection) throws -> String? {
        if let userID = try passwords.accountForReset(email: email, on: connection) { return userID }
        return try dependencies.users.oldest(email: email, on: connection)?.id
    }

    private func user(of flow: EmailFlow, on connection: any SQLConnection) throws -> User? {
        guard let userID = flow.userID else { return nil }
        return try dependencies.users.find(userID, on: connection)
    }

    /// A proof that names no live flow of this kind.
    static let unknown = AuthError.invalidGrant(.unknown, "no such link or code")

    /// An address as typed, normalised as an email-like username is.
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` when it is not an email address.
    static func address(_ raw: String) throws -> String {
        let username = try Username(raw)
        guard username.isEmail else { throw AuthError.invalidRequest("email must be an email address") }
        return username.value
    }
}
