import FoundationEssentials
import LatchkeyBasics
import LatchkeyStore

/// A user as the admin API's search lists them.
struct AdminUserSummary: Sendable, Hashable {
    var user: User
    /// The normalised username of a password account.
    var username: String?
    var lastSignInAt: Date?
    /// When an operator or admin disabled the account; nil when it is not disabled.
    var disabledAt: Date?
    /// How the account signs in: `password`, `passkey`, and each provider (`apple`, …).
    var methods: [String]
    /// Its second factors: `device_key`, `totp`, `recovery_code`, `passkey`.
    var factors: [String]
}

/// One account as the admin API shows it whole.
struct AdminUserDetail: Sendable {
    var summary: AdminUserSummary
    var profile: AccountProfile
    var role: AdminRole?
    var passkeys: [Passkey]
    var deviceKeys: [DeviceKey]
    var totp: TOTPFactor?
    var sessions: [Session]
    var grants: [Grant]
    /// The newest ``AdminService/userAuditEvents`` entries about the account.
    var audit: [(id: Int64, entry: AuditLog.Entry)]
}

/// The admin API's domain: who holds a role, and what admin and support accounts read and do.
///
/// Roles are granted and taken away only by the CLI (``grant(userID:role:context:)``,
/// ``revoke(userID:context:)``), audited in the same transaction. Everything an admin does to an
/// account goes through the service that does it for the user or the CLI (sessions, deletion,
/// factors), with the admin named as `actor` in the request context, so its audit entry
/// commits with the change.
package struct AdminService: Sendable {
    let dependencies: Dependencies
    let sessions: SessionService
    let accounts: AccountService
    let grants: GrantService
    let factors: FactorService
    let passkeys: PasskeyService
    let repository = AdminRepository()
    let passkeyRows = PasskeyRepository()
    let deviceKeys = DeviceKeyRepository()
    let totp = TOTPRepository()

    /// How many audit entries the account page shows.
    static let userAuditEvents = 50

    // MARK: Roles (the CLI)

    /// Gives an account a role, or changes the one it has, audited `admin.granted`.
    ///
    /// - Throws: ``AuthError/Code/notFound`` when there is no such user.
    package func grant(userID: String, role: AdminRole, context: RequestContext) async throws {
        let now = dependencies.clock()
        try await dependencies.database.write { connection in
            guard try self.dependencies.users.find(userID, on: connection) != nil else { throw AuthError.notFound("no user \(userID)") }
            try self.repository.grant(userID: userID, role: role, at: now, on: connection)
            try self.dependencies.record(.adminGranted, .success, userID: userID, context: context, now: now, details: ["role": role.rawValue], on: connection)
        }
    }

    /// Takes an account's role away, audited `admin.revoked`; it takes effect on the account's
    /// next admin request.
    ///
    /// - Returns: Whether the account held a role.
    package func revoke(userID: String, context: RequestContext) async throws -> Bool {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            guard let role = try self.repository.revoke(userID: userID, on: connection) else { return false }
            try self.dependencies.record(.adminRevoked, .success, userID: userID, context: context, now: now, details: ["role": role.rawValue], on: connection)
            return true
        }
    }

    /// Every account holding a role.
    package func grantedRoles() async throws -> [AdminGrant] {
        try await dependencies.database.read { try self.repository.grants(on: $0) }
    }

    /// The role an account holds now, read on every admin request so a revocation counts at once.
    func role(of userID: String) async throws -> AdminRole? {
        try await dependencies.database.read { try self.repository.role(userID: userID, on: $0) }
    }

    // MARK: Reading

    /// A page of users, newest first: all of them, or those `query` finds (a prefix of the
    /// email, username, given or family name, whatever the case, or an exact id), read in one
    /// statement with what the listing shows of each.
    func users(query: String?, cursor: AdminCursor?, limit: Int) async throws -> AdminPage<AdminUserSummary> {
        let typed = query.map { String($0.trimmingWhitespace()) } ?? ""
        let search = typed.isEmpty ? nil : (prefix: typed.lowercased(), id: typed)
        return try await dependencies.database.read { connection in
            let rows = try self.repository.users(matching: search, after: cursor, limit: limit, on: connection)
            let next = rows.count == limit ? rows.last.map { AdminCursor(time: $0.user.createdAt, id: $0.user.id).encoded } : nil
            return AdminPage(rows: rows, next: next)
        }
    }

    /// One account whole: identities, passkeys, device keys, TOTP, live sessions, grants, and
    /// its newest audit entries.
    ///
    /// - Throws: ``AuthError/Code/notFound``.
    func user(id: String) async throws -> AdminUserDetail {
        let profile: AccountProfile
        do {
            profile = try await accounts.profile(userID: id)
        } catch let error as AuthError where error.code == AccountService.gone.code {
            throw AuthError.notFound("no such user")
        }
        let live = try await sessions.sessions(userID: id)
        let consents = try await grants.grants(userID: id)
        return try await dependencies.database.read { connection in
            guard let summary = try self.repository.user(id: id, on: connection) else { throw AuthError.notFound("no such user") }
            return AdminUserDetail(
                summary: summary, profile: profile, role: try self.repository.role(userID: id, on: connection),
                passkeys: try self.passkeyRows.list(userID: id, on: connection), deviceKeys: try self.deviceKeys.list(userID: id, on: connection),
                totp: try self.totp.find(userID: id, on: connection), sessions: live, grants: consents,
                audit: try self.repository.audit(.init(userID: id), after: nil, limit: Self.userAuditEvents, on: connection))
        }
    }

    /// The overview's counts.
    func stats() async throws -> AdminStats {
        let now = dependencies.clock()
        return try await dependencies.database.read { try self.repository.stats(now: now, on: $0) }
    }

    /// The name of the database engine: `sqlite` or `postgresql`.
    var databaseEngine: String { dependencies.database.dialect.name }

    /// A page of the audit log, newest first.
    func audit(_ filter: AdminRepository.AuditFilter, cursor: AdminCursor?, limit: Int) async throws -> AdminPage<(id: Int64, entry: AuditLog.Entry)> {
        try await dependencies.database.read { connection in
            let rows = try self.repository.audit(filter, after: cursor, limit: limit, on: connection)
            let next = rows.count == limit ? rows.last.map { AdminCursor(time: $0.entry.time, id: String($0.id)).encoded } : nil
            return AdminPage(rows: rows, next: next)
        }
    }

    // MARK: Acting

    /// Ends one session of the user, or all of them, as `DELETE /v1/sessions/{id}` and
    /// `POST /v1/logout {"all": true}` do; each `session.revoked` entry names the admin.
    ///
    /// - Returns: The sessions ended.
    /// - Throws: ``AuthError/Code/notFound`` for an unknown user, or a session that is not a live
    ///   one of theirs.
    func revokeSessions(userID: String, sessionID: String?, context: RequestContext) async throws -> [String] {
        guard try await dependencies.users.find(userID) != nil else { throw AuthError.notFound("no such user") }
        let revoked = try await sessions.revokeSessions(
            userID: userID, sessionIDs: sessionID.map { [$0] }, reason: "admin", context: context)
        if sessionID != nil, revoked.isEmpty { throw AuthError.notFound("no live session \(sessionID ?? "") of this user") }
        return revoked
    }

    /// Deletes an account as `DELETE /v1/me` and `latchkey users delete` do (its Apple tokens
    /// revoked at Apple included); `account.deleted` has `reason: admin` and the actor.
    ///
    /// - Throws: ``AuthError/Code/notFound``.
    func deleteUser(id: String, context: RequestContext) async throws {
        try await accounts.delete(userID: id, principal: nil, reason: "admin", context: context)
    }

    /// Removes a device key, passkey or TOTP of the account as the CLI's operator removals do:
    /// no fresh sign-in, even the account's last way to sign in (a stolen passkey must stop
    /// working); audited `device_key.removed`, `passkey.removed` or `totp.removed` with the actor.
    ///
    /// - Parameter kind: `device_key`, `passkey` or `totp`.
    /// - Throws: ``AuthError/Code/notFound`` for another kind, or no such factor of the account.
    func removeFactor(userID: String, kind: String, id: String, context: RequestContext) async throws {
        switch kind {
        case "device_key": try await factors.removeDevice(id, userID: userID, principal: nil, context: context)
        case "passkey": _ = try await passkeys.removeAsOperator(id, userID: userID, context: context)
        case "totp": try await factors.removeTOTP(userID: userID, id: id, principal: nil, context: context)
        default: throw AuthError.notFound("no factor kind \(kind): device_key, passkey or totp")
        }
    }
}

extension SecondFactorOption {
    /// The factor's kind as the admin API names it.
    var kind: String {
        switch self {
        case .deviceKey: "device_key"
        case .totp: "totp"
        case .recoveryCode: "recovery_code"
        case .passkey: "passkey"
        }
    }
}
