package import FoundationEssentials
import LatchkeyBasics
import LatchkeyStore

/// One way a user signs in: an identity at a provider (`apple`), or the `password` credential.
struct AccountIdentity: Sendable, Hashable {
    var provider: String
    var email: String?
    /// The normalised username; only for the `password` identity.
    var username: String?
    var createdAt: Date
}

/// What `GET /v1/me` shows: the user, the password username if any, their sign-in identities
/// (a password account lists a `password` identity first) and second factors.
struct AccountProfile: Sendable, Hashable {
    var user: User
    var username: String?
    var identities: [AccountIdentity]
    var factors: [SecondFactorOption]
}

/// A change of names (`PATCH /v1/me`): for each name `nil` leaves it, `.some(nil)` clears it,
/// `.some(name)` sets it.
struct NameChange: Sendable, Hashable {
    var givenName: String??
    var familyName: String??

    /// A name as given, in the form it is stored: surrounding whitespace trimmed, `nil` when
    /// nothing is left.
    ///
    /// - Parameter field: The member it came in, for the refusal.
    /// - Throws: ``AuthError/Code/invalidRequest`` when it is over ``User/maxNameLength`` bytes.
    static func name(_ raw: String, field: String) throws -> String? {
        let name = String(raw.trimmingWhitespace())
        guard name.utf8.count <= User.maxNameLength else {
            throw AuthError.invalidRequest("\(field) must be at most \(User.maxNameLength) bytes")
        }
        return name.isEmpty ? nil : name
    }
}

/// A user's own account: reading it, changing its names, and deleting it; disabling and
/// enabling it (an operator's or an admin's).
package struct AccountService: Sendable {
    let dependencies: Dependencies
    let sessions: SessionService
    let deletion: AccountDeletion
    /// Sends the revocations a deletion queued.
    let outbox: AppleRevocationOutbox
    let credentials = PasswordCredentialRepository()
    let identities = IdentityRepository()
    let passkeys = PasskeyRepository()

    /// The user's profile, read in one snapshot.
    ///
    /// - Throws: ``AuthError/Code/invalidToken`` when the account no longer exists.
    func profile(userID: String) async throws -> AccountProfile {
        let (users, credentials, identities, database) = (dependencies.users, credentials, identities, dependencies.database)
        let profile = try await database.read { connection -> AccountProfile? in
            guard let user = try users.find(userID, on: connection) else { return nil }
            var listed = try identities.list(userID: userID, on: connection).map { identity in
                AccountIdentity(provider: identity.provider, email: identity.email, createdAt: identity.createdAt)
            }
            let credential = try credentials.find(userID: userID, on: connection)
            if let credential {
                listed.insert(
                    AccountIdentity(provider: "password", email: user.email, username: credential.username, createdAt: credential.createdAt),
                    at: 0)
            }
            let factors = try SecondFactors.list(userID: userID, on: connection)
            return AccountProfile(user: user, username: credential?.username, identities: listed, factors: factors)
        }
        guard let profile else { throw Self.gone }
        return profile
    }

    /// Writes a change of names and its audit entry in one transaction; the entry names the
    /// fields that changed, never their values. A change that changes nothing writes nothing.
    ///
    /// - Returns: The user as it is now.
    /// - Throws: ``AuthError/Code/invalidToken`` when the account no longer exists.
    func updateName(userID: String, change: NameChange, context: RequestContext) async throws -> User {
        let now = dependencies.clock()
        let (users, audit) = (dependencies.users, dependencies.audit)
        return try await dependencies.database.write { connection in
            guard var user = try users.find(userID, on: connection) else { throw Self.gone }
            var changed: [String] = []
            if let givenName = change.givenName, givenName != user.givenName {
                user.givenName = givenName
                changed.append("given_name")
            }
            if let familyName = change.familyName, familyName != user.familyName {
                user.familyName = familyName
                changed.append("family_name")
            }
            guard !changed.isEmpty else { return user }
            try users.update(user, now: now, on: connection)
            try audit.record(
                .init(
                    time: now, userID: userID, event: .accountUpdated, outcome: .success, ip: context.ip, requestID: context.requestID,
                    details: ["fields": changed.joined(separator: ",")]),
                on: connection)
            return user
        }
    }

    /// Deletes an account (`DELETE /v1/me`, `latchkey users delete`) and queues its Apple tokens
    /// for revocation, then sends the queue (``AccountDeletion``).
    ///
    /// - Parameters:
    ///   - principal: The signed-in user deleting their own account; a user with a second
    ///     factor must have proved it in the last five minutes. `nil` for an operator.
    ///   - reason: Why, for the audit entry: `user`, `operator`.
    /// - Throws: ``AuthError/Code/notFound`` when there is no such user;
    ///   ``AuthError/Code/insufficientAuthentication``.
    package func delete(userID: String, principal: Principal?, reason: String, context: RequestContext) async throws {
        let now = dependencies.clock()
        let existed = try await dependencies.database.write { connection in
            if let principal { try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection) }
            return try self.deletion.delete(userID: userID, reason: reason, revokeAtApple: true, context: context, now: now, on: connection)
        }
        guard existed else { throw AuthError.notFound("no such user") }
        // The revocation is durable now; sending it does not hold up the answer.
        Task { [outbox, jobs = BackgroundJobs(metrics: dependencies.metrics)] in
            await jobs.run(.appleRevocationOutbox) { _ = try await outbox.runDue() }
        }
    }

    /// Removes the account's identities at an upstream provider (`DELETE /v1/me/identities/{provider}`),
    /// audited `identity.unlinked` in the same transaction.
    ///
    /// - Throws: `insufficient_authentication` unless the session signed in or proved a second
    ///   factor in the last five minutes; `not_found` when the account has no identity there;
    ///   `conflict` when it would leave the account no way to sign in (no password, passkey or
    ///   other identity), or for `apple`, whose identity ends with the account or at Apple.
    func unlink(provider: String, principal: Principal, context: RequestContext) async throws {
        let now = dependencies.clock()
        try await dependencies.database.write { connection in
            let userID = principal.userID
            let all = try self.identities.list(userID: userID, on: connection)
            let removed = all.filter { $0.provider == provider }
            guard !removed.isEmpty else { throw AuthError.notFound("the account has no identity at \(provider)") }
            guard provider != AppleService.provider else {
                throw AuthError.conflict("Sign in with Apple stays linked; it ends when the account is deleted or when the user revokes it at Apple")
            }
            try self.sessions.requireFreshSignIn(principal, now: now, on: connection)
            let others = all.count - removed.count + (try self.passkeys.count(userID: userID, on: connection))
                + (try self.credentials.find(userID: userID, on: connection) == nil ? 0 : 1)
            guard others > 0 else {
                throw AuthError.conflict("this is the account's last way to sign in; add a password, a passkey or another provider first")
            }
            for identity in removed {
                guard try self.identities.delete(id: identity.id, userID: userID, on: connection) else {
                    throw AuthError.notFound("the account has no identity at \(provider)")
                }
            }
            try self.dependencies.record(.identityUnlinked, .success, userID: userID, context: context, now: now, details: ["provider": provider], on: connection)
        }
    }

    /// The account an operator names (`latchkey users disable USER`, `passkeys list --user`): by
    /// user id, else by password username (normalised as at sign-in), else by email when exactly
    /// one account has it.
    ///
    /// - Returns: The user id, or nil when no account has this id, username or email.
    /// - Throws: ``AuthError/Code/conflict`` when several accounts share the email.
    package func account(named name: String) async throws -> String? {
        let username = try? Username(name).value
        return try await dependencies.database.read { connection in
            if let user = try self.dependencies.users.find(name, on: connection) { return user.id }
            guard let username else { return nil }
            if let credential = try self.credentials.find(username: username, on: connection) { return credential.userID }
            let owners = try self.dependencies.users.ids(email: username, on: connection)
            guard owners.count <= 1 else {
                throw AuthError.conflict("\(owners.count) accounts have the email \(username); name one by its id: \(owners.joined(separator: ", "))")
            }
            return owners.first
        }
    }

    /// Disables an account (`POST /v1/admin/users/{id}/disable`, `latchkey users disable`) in one
    /// write transaction: a compare-and-set on `users.disabled_at`, then every session of the
    /// account ends (API sessions with their refresh tokens, OAuth grants' sessions, the hosted
    /// pages' browser sessions) with reason `account_disabled`, and `account.disabled` is
    /// audited with the context's `actor` (S51). From then on every sign-in is refused (S50).
    ///
    /// - Returns: Whether this call disabled the account; false when it was disabled already,
    ///   and then nothing is written.
    /// - Throws: ``AuthError/Code/notFound`` when there is no such user.
    @discardableResult
    package func disable(userID: String, context: RequestContext) async throws -> Bool {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            guard try self.dependencies.users.disable(userID, now: now, on: connection) else {
                guard try self.dependencies.users.find(userID, on: connection) != nil else { throw AuthError.notFound("no such user") }
                return false
            }
            let ended = try self.sessions.revokeAll(userID: userID, reason: Self.disabledReason, context: context, now: now, on: connection)
            try self.dependencies.record(
                .accountDisabled, .success, userID: userID, context: context, now: now,
                details: ["sessions_ended": String(ended.count)], on: connection)
            return true
        }
    }

    /// Enables a disabled account (`POST /v1/admin/users/{id}/enable`, `latchkey users enable`)
    /// in one write transaction: a compare-and-set on `users.disabled_at`, audited
    /// `account.enabled` with the context's `actor`. The sessions that ended stay ended; the user signs in
    /// again.
    ///
    /// - Returns: Whether this call enabled the account; false when it was not disabled, and
    ///   then nothing is written.
    /// - Throws: ``AuthError/Code/notFound`` when there is no such user.
    @discardableResult
    package func enable(userID: String, context: RequestContext) async throws -> Bool {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            guard try self.dependencies.users.enable(userID, now: now, on: connection) else {
                guard try self.dependencies.users.find(userID, on: connection) != nil else { throw AuthError.notFound("no such user") }
                return false
            }
            try self.dependencies.record(.accountEnabled, .success, userID: userID, context: context, now: now, on: connection)
            return true
        }
    }

    /// When the account was disabled; nil when it is not (`latchkey users show`).
    package func disabledAt(userID: String) async throws -> Date? {
        try await dependencies.database.read { try self.dependencies.users.disabledAt(userID, on: $0) }
    }

    /// The `revoked_reason` of the sessions a disabling ends, and the `reason` a refresh of
    /// one of them is refused with.
    static let disabledReason = "account_disabled"

    static let gone = AuthError.invalidToken("the account no longer exists")
}
