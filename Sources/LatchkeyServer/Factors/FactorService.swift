import FoundationEssentials
import LatchkeyStore

/// Second factors: device keys (Secure Enclave / `LAPersistedRight`), TOTP with recovery codes,
/// step-up and MFA at sign-in (docs/security.md S16–S19).
///
/// Every request's writes go into one transaction with their audit entries (S27, S28). A proof
/// that fails is committed too (its challenge spent, its failure counted and audited) and then
/// answered with the refusal. A request that loses a compare-and-set to a concurrent one throws
/// instead, so nothing it wrote is kept.
package final class FactorService: Sendable {
    let sessions: SessionService
    let masterKey: MasterKey
    let audit: AuditLog
    /// Wrong second factors per account, across `mfa_token`s: without it, someone holding the
    /// password could sign in again and again for five fresh tries each time.
    let failureLimiter: LoginRateLimiter

    let challenges = ChallengeRepository()
    let deviceKeys = DeviceKeyRepository()
    let totpFactors = TOTPRepository()
    let recoveryCodes = RecoveryCodeRepository()
    let mfaTokens = MFATokenRepository()
    let sessionRows = SessionRepository()

    var database: any SQLDatabase { sessions.database }
    var metrics: Metrics { sessions.metrics }
    var clock: @Sendable () -> Date { sessions.clock }

    /// Creates the service over the session service's database.
    ///
    /// - Parameters:
    ///   - sessions: The sessions the factors sign into and step up.
    ///   - masterKey: The key that seals TOTP secrets.
    ///   - failuresPerAccount: Wrong second factors allowed per account in 15 minutes before
    ///     back-off (`rate_limits.login_per_account_15m`).
    package init(sessions: SessionService, masterKey: MasterKey, failuresPerAccount: Int = 10) {
        self.sessions = sessions
        self.masterKey = masterKey
        self.audit = AuditLog(database: sessions.database)
        self.failureLimiter = LoginRateLimiter(perAccount: failuresPerAccount, perIP: .max)
    }

    /// Records an audit entry inside the caller's transaction.
    func record(
        _ event: AuditEvent, _ outcome: AuditOutcome, userID: String, context: RequestContext, now: Date, details: [String: String] = [:],
        on connection: any SQLConnection
    ) throws {
        try audit.record(
            .init(time: now, userID: userID, event: event, outcome: outcome, ip: context.ip, requestID: context.requestID, details: details),
            on: connection)
    }

    /// Counts a checked proof in `/metrics`.
    func count(_ factor: String, use: String, _ success: Bool) {
        metrics.increment(.secondFactors, ["factor": factor, "use": use, "outcome": success ? "success" : "failure"])
    }

    /// Runs `body` in one write transaction; a refusal it returns is committed with everything
    /// else the transaction wrote (a spent challenge, a counted failure, its audit entry) and
    /// then thrown. What `body` throws rolls the transaction back.
    ///
    /// - Parameter conflict: The message of the `conflict` refusal a unique constraint becomes.
    func commit<T: Sendable>(
        conflict: String = "this already exists", _ body: @escaping @Sendable (any SQLConnection) throws -> Result<T, AuthError>
    ) async throws -> T {
        do {
            return try await database.write(body).get()
        } catch let error as StoreError where error.code == .constraint {
            throw AuthError.conflict(conflict)
        }
    }

    /// `amr` after a second factor: the method is added once, and `mfa` once two different
    /// methods were used (RFC 8176).
    static func amr(_ amr: [String], adding method: String) -> [String] {
        var result = amr.filter { $0 != "mfa" }
        if !result.contains(method) { result.append(method) }
        if result.count >= 2 { result.append("mfa") }
        return result
    }
}

/// The second factors of a user, as docs/reference.md lists them in `mfa_required` and `GET /v1/me`.
enum SecondFactors {
    /// The user's device keys (oldest first), then TOTP when confirmed, then recovery codes while
    /// unused ones remain.
    static func list(userID: String, on connection: any SQLConnection) throws -> [SecondFactorOption] {
        var factors = try DeviceKeyRepository().list(userID: userID, on: connection).map { SecondFactorOption.deviceKey(id: $0.id, label: $0.label) }
        if try TOTPRepository().isConfirmed(userID: userID, on: connection) {
            factors.append(.totp)
            if try RecoveryCodeRepository().unusedCount(userID: userID, on: connection) > 0 { factors.append(.recoveryCode) }
        }
        return factors
    }

    /// Whether the user has a device key or a confirmed TOTP.
    static func exist(userID: String, on connection: any SQLConnection) throws -> Bool {
        try DeviceKeyRepository().exists(userID: userID, on: connection) || TOTPRepository().isConfirmed(userID: userID, on: connection)
    }
}

extension SessionService {
    /// How recent a second factor must be for removing a factor or deleting the account.
    static let recentSecondFactor: TimeInterval = 300

    /// Throws 403 `insufficient_authentication` unless the principal's session proved a second
    /// factor in the last five minutes, when the user has a second factor at all (docs/reference.md
    /// `DELETE /v1/me`, removing a factor).
    ///
    /// A session gets there by signing in with MFA, by a step-up (`POST /v1/challenges/{id}/verify`),
    /// or by adding a factor.
    ///
    /// - Parameter principal: The bearer token's user and session.
    /// - Throws: ``AuthError/insufficientAuthentication()``; store errors.
    package func requireRecentSecondFactor(_ principal: Principal) async throws {
        let now = clock()
        try await database.read { connection in
            try self.requireRecentSecondFactor(principal, now: now, on: connection)
        }
    }

    /// The check of ``requireRecentSecondFactor(_:)`` inside the caller's transaction.
    func requireRecentSecondFactor(_ principal: Principal, now: Date, on connection: any SQLConnection) throws {
        guard try SecondFactors.exist(userID: principal.userID, on: connection) else { return }
        let provedAt = try SessionRepository().secondFactorTime(sessionID: principal.sessionID, userID: principal.userID, on: connection)
        guard let provedAt, now.timeIntervalSince(provedAt) <= Self.recentSecondFactor else {
            throw AuthError.insufficientAuthentication()
        }
    }

    /// Notes in the session that a second factor was proved now.
    func markSecondFactor(sessionID: String, now: Date, on connection: any SQLConnection) throws {
        try SessionRepository().markSecondFactor(sessionID: sessionID, at: now, on: connection)
    }
}
