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
    let dependencies: Dependencies
    /// The sessions a step-up or a new factor marks, and whose recent second factor removing one needs.
    let sessions: SessionService
    /// Where MFA completion lands.
    let signIns: SignInPipeline
    /// Rotates a stepped-up session's refresh token.
    let refreshTokens: RefreshTokens
    let accessTokens: AccessTokens
    /// Verifies a passkey offered as the second factor.
    let passkeys: PasskeyService
    let masterKey: MasterKey
    /// Wrong second factors per account, across `mfa_token`s: without it, someone holding the
    /// password could sign in again and again for five fresh tries each time.
    let failureLimiter: LoginRateLimiter

    let challenges = ChallengeRepository()
    let deviceKeys = DeviceKeyRepository()
    let totpFactors = TOTPRepository()
    let recoveryCodes = RecoveryCodeRepository()
    let mfaTokens = MFATokenRepository()
    let sessionRows = SessionRepository()

    var database: any SQLDatabase { dependencies.database }
    var metrics: Metrics { dependencies.metrics }
    var clock: @Sendable () -> Date { dependencies.clock }

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - masterKey: The key that seals TOTP secrets.
    ///   - failuresPerAccount: Wrong second factors allowed per account in 15 minutes before
    ///     back-off (`rate_limits.login_per_account_15m`).
    init(
        dependencies: Dependencies, sessions: SessionService, signIns: SignInPipeline, refreshTokens: RefreshTokens, accessTokens: AccessTokens,
        passkeys: PasskeyService, masterKey: MasterKey, failuresPerAccount: Int
    ) {
        self.passkeys = passkeys
        self.dependencies = dependencies
        self.sessions = sessions
        self.signIns = signIns
        self.refreshTokens = refreshTokens
        self.accessTokens = accessTokens
        self.masterKey = masterKey
        self.failureLimiter = LoginRateLimiter(perAccount: failuresPerAccount, perIP: .max)
    }

    /// Records an audit entry inside the caller's transaction.
    func record(
        _ event: AuditEvent, _ outcome: AuditOutcome, userID: String, context: RequestContext, now: Date, details: [String: String] = [:],
        on connection: any SQLConnection
    ) throws {
        try dependencies.record(event, outcome, userID: userID, context: context, now: now, details: details, on: connection)
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
    /// unused ones remain, then passkeys when the user has one. A passkey is offered beside a
    /// second factor the user set up, and never turns one on by itself: an account with a
    /// password and a passkey signs in with either alone.
    static func list(userID: String, on connection: any SQLConnection) throws -> [SecondFactorOption] {
        var factors = try DeviceKeyRepository().list(userID: userID, on: connection).map { SecondFactorOption.deviceKey(id: $0.id, label: $0.label) }
        if try TOTPRepository().isConfirmed(userID: userID, on: connection) {
            factors.append(.totp)
            if try RecoveryCodeRepository().unusedCount(userID: userID, on: connection) > 0 { factors.append(.recoveryCode) }
        }
        if !factors.isEmpty, try PasskeyRepository().count(userID: userID, on: connection) > 0 { factors.append(.passkey) }
        return factors
    }

    /// Whether the user has a device key or a confirmed TOTP.
    static func exist(userID: String, on connection: any SQLConnection) throws -> Bool {
        try DeviceKeyRepository().exists(userID: userID, on: connection) || TOTPRepository().isConfirmed(userID: userID, on: connection)
    }
}
