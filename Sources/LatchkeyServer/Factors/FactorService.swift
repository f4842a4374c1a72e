import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyStore

/// Second factors: device keys (Secure Enclave / `LAPersistedRight`), TOTP with recovery codes,
/// step-up and MFA at sign-in (docs/security.md S16–S19).
///
/// Every request's writes go into one transaction with their audit entries (S27, S28). A proof
/// that fails is committed too (its challenge spent, its failure counted and audited) and then
/// answered with the refusal.
public final class FactorService: Sendable {
    let sessions: SessionService
    let masterKey: MasterKey
    let audit: AuditLog
    /// Wrong second factors per account, across `mfa_token`s: without it, someone holding the
    /// password could sign in again and again for five fresh tries each time.
    let failureLimiter: LoginRateLimiter

    var database: any SQLDatabase { sessions.database }
    var dialect: SQLDialect { sessions.database.dialect }
    var metrics: Metrics { sessions.metrics }
    var clock: @Sendable () -> Date { sessions.clock }

    /// Creates the service over the session service's database.
    ///
    /// - Parameters:
    ///   - sessions: The sessions the factors sign into and step up.
    ///   - masterKey: The key that seals TOTP secrets.
    ///   - failuresPerAccount: Wrong second factors allowed per account in 15 minutes before
    ///     back-off (`rate_limits.login_per_account_15m`).
    public init(sessions: SessionService, masterKey: MasterKey, failuresPerAccount: Int = 10) {
        self.sessions = sessions
        self.masterKey = masterKey
        self.audit = AuditLog(database: sessions.database)
        self.failureLimiter = LoginRateLimiter(database: sessions.database, perAccount: failuresPerAccount, perIP: .max)
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
    /// then thrown.
    func commit<T: Sendable>(
        conflict: String = "this already exists", _ body: @escaping @Sendable (any SQLConnection) throws -> Result<T, HTTPError>
    ) async throws -> T {
        try await mappingStoreErrors(conflict: conflict) { try await database.write(body) }.get()
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
    /// `[{"type": "device_key", "id", "label"}, ..., {"type": "totp"}, {"type": "recovery_code"}]`.
    static func list(userID: String, dialect: SQLDialect, on connection: any SQLConnection) throws -> [JSONValue] {
        var factors = try connection.query(
            dialect.sql("SELECT id, label FROM device_keys WHERE user_id = ? ORDER BY created_at, id"), [.text(userID)]
        ).map { row -> JSONValue in ["type": "device_key", "id": .string(try row.string("id")), "label": .string(try row.string("label"))] }
        if try connection.queryOne(dialect.sql("SELECT 1 AS one FROM totp_factors WHERE user_id = ? AND confirmed_at IS NOT NULL"), [.text(userID)]) != nil {
            factors.append(["type": "totp"])
            if try connection.queryOne(dialect.sql("SELECT 1 AS one FROM recovery_codes WHERE user_id = ? AND used_at IS NULL"), [.text(userID)]) != nil {
                factors.append(["type": "recovery_code"])
            }
        }
        return factors
    }

    /// Whether the user has a device key or a confirmed TOTP.
    static func exist(userID: String, dialect: SQLDialect, on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne(
            dialect.sql(
                """
                SELECT 1 AS one FROM device_keys WHERE user_id = ?
                UNION ALL SELECT 1 AS one FROM totp_factors WHERE user_id = ? AND confirmed_at IS NOT NULL
                """),
            [.text(userID), .text(userID)]) != nil
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
    /// - Throws: `HTTPError` 403 `insufficient_authentication`; store errors.
    public func requireRecentSecondFactor(_ principal: Principal) async throws {
        let now = clock()
        try await database.read { connection in
            try self.requireRecentSecondFactor(principal, now: now, on: connection)
        }
    }

    /// The check of ``requireRecentSecondFactor(_:)`` inside the caller's transaction.
    func requireRecentSecondFactor(_ principal: Principal, now: Date, on connection: any SQLConnection) throws {
        let dialect = database.dialect
        guard try SecondFactors.exist(userID: principal.userID, dialect: dialect, on: connection) else { return }
        let provedAt = try connection.queryOne(
            dialect.sql("SELECT second_factor_at FROM sessions WHERE id = ? AND user_id = ?"), [.text(principal.sessionID), .text(principal.userID)]
        )?.optionalDate("second_factor_at")
        guard let provedAt, now.timeIntervalSince(provedAt) <= Self.recentSecondFactor else {
            throw HTTPError.insufficientAuthentication()
        }
    }

    /// Notes in the session that a second factor was proved now.
    func markSecondFactor(sessionID: String, now: Date, on connection: any SQLConnection) throws {
        try connection.execute(database.dialect.sql("UPDATE sessions SET second_factor_at = ? WHERE id = ?"), [.time(now), .text(sessionID)])
    }
}
