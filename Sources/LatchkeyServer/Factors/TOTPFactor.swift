import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyStore

extension FactorService {
    /// The issuer shown in authenticator apps.
    static let totpIssuer = "Latchkey"

    /// `POST /v1/totp`: a new, unconfirmed TOTP secret, sealed under the master key; it replaces
    /// an earlier unconfirmed one. A user whose TOTP is confirmed must remove it first (409).
    func beginTOTP(for principal: Principal, context: RequestContext) async throws -> JSONValue {
        let now = clock()
        let dialect = dialect
        let secret = SecureRandom.bytes(count: TOTP.secretByteCount)
        let id = Identifiers.make("otp")
        let sealed = try masterKey.seal(secret, context: "totp_factors/\(id)")
        return try await commit { connection -> Result<JSONValue, HTTPError> in
            try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection)
            guard let user = try self.sessions.users.find(principal.userID, on: connection) else { return .failure(.invalidToken("the account no longer exists")) }
            if try connection.queryOne(
                dialect.sql("SELECT 1 AS one FROM totp_factors WHERE user_id = ? AND confirmed_at IS NOT NULL"), [.text(principal.userID)]) != nil
            {
                return .failure(HTTPError(status: 409, code: "conflict", description: "TOTP is already set up; remove it first"))
            }
            try connection.execute(dialect.sql("DELETE FROM totp_factors WHERE user_id = ?"), [.text(principal.userID)])
            try connection.execute(
                dialect.sql("INSERT INTO totp_factors (id, user_id, secret, created_at) VALUES (?, ?, ?, ?)"),
                [.text(id), .text(principal.userID), .blob(sealed), .time(now)])
            try self.record(.totpStarted, .success, userID: principal.userID, context: context, now: now, on: connection)
            let encoded = Base32.encode(secret)
            return .success(["secret": .string(encoded), "otpauth_uri": .string(Self.otpauthURI(secret: encoded, account: user.email ?? user.id))])
        }
    }

    /// The Key URI authenticator apps scan: `otpauth://totp/Issuer:account?secret=…&issuer=…`.
    static func otpauthURI(secret: String, account: String) -> String {
        let issuer = PercentEncoding.encode(totpIssuer, keeping: "@")
        let label = PercentEncoding.encode(account, keeping: "@")
        return "otpauth://totp/\(issuer):\(label)?secret=\(secret)&issuer=\(issuer)&algorithm=SHA1&digits=\(TOTP.digits)&period=\(Int(TOTP.period))"
    }

    /// `POST /v1/totp/confirm`: the first code from the app turns TOTP on and issues ten recovery
    /// codes (replacing any earlier ones). The session counts as having proved a second factor.
    func confirmTOTP(for principal: Principal, code: String, context: RequestContext) async throws -> [String] {
        let now = clock()
        let dialect = dialect
        do {
            let codes = try await commit { connection -> Result<[String], HTTPError> in
                try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection)
                guard let row = try connection.queryOne(dialect.sql("SELECT * FROM totp_factors WHERE user_id = ?"), [.text(principal.userID)]),
                    row.optionalDate("confirmed_at") == nil
                else { return .failure(.notFound("no TOTP set-up is waiting for confirmation; start one with POST /v1/totp")) }
                let id = try row.string("id")
                let secret = try self.masterKey.unseal(try row.blob("secret"), context: "totp_factors/\(id)")
                guard let step = TOTP.matchingStep(of: code, secret: secret, now: now, after: nil) else {
                    try self.record(.totpFailed, .failure, userID: principal.userID, context: context, now: now, details: ["use": "confirm"], on: connection)
                    return .failure(.invalidGrant(.invalidCode, "the code does not match"))
                }
                try connection.execute(
                    dialect.sql("UPDATE totp_factors SET confirmed_at = ?, last_used_step = ? WHERE id = ?"), [.time(now), .integer(step), .text(id)])
                let codes = try RecoveryCodes.replace(userID: principal.userID, now: now, dialect: dialect, on: connection)
                try self.sessions.markSecondFactor(sessionID: principal.sessionID, now: now, on: connection)
                try self.record(
                    .totpAdded, .success, userID: principal.userID, context: context, now: now,
                    details: ["recovery_codes": String(codes.count), "session_id": principal.sessionID], on: connection)
                return .success(codes)
            }
            count("totp", use: "confirm", true)
            return codes
        } catch {
            count("totp", use: "confirm", false)
            throw error
        }
    }

    /// `DELETE /v1/totp`: turns TOTP off and deletes the recovery codes (S18). Needs a second
    /// factor in the last five minutes.
    func removeTOTP(for principal: Principal, context: RequestContext) async throws {
        let now = clock()
        let dialect = dialect
        try await commit { connection -> Result<Void, HTTPError> in
            guard try connection.queryOne(dialect.sql("SELECT 1 AS one FROM totp_factors WHERE user_id = ?"), [.text(principal.userID)]) != nil else {
                return .failure(.notFound("TOTP is not set up"))
            }
            try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection)
            try connection.execute(dialect.sql("DELETE FROM totp_factors WHERE user_id = ?"), [.text(principal.userID)])
            try connection.execute(dialect.sql("DELETE FROM recovery_codes WHERE user_id = ?"), [.text(principal.userID)])
            try self.record(.totpRemoved, .success, userID: principal.userID, context: context, now: now, on: connection)
            return .success(())
        }
    }

    /// Checks a TOTP code for a user inside the caller's transaction and, when it matches a step
    /// not used before, records that step so the code cannot be used again (S19).
    ///
    /// - Returns: Whether the code was accepted.
    func spendTOTP(_ code: String, userID: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        let dialect = dialect
        guard let row = try connection.queryOne(
            dialect.sql("SELECT * FROM totp_factors WHERE user_id = ? AND confirmed_at IS NOT NULL"), [.text(userID)])
        else { return false }
        let id = try row.string("id")
        let secret = try masterKey.unseal(try row.blob("secret"), context: "totp_factors/\(id)")
        guard let step = TOTP.matchingStep(of: code, secret: secret, now: now, after: row.optionalInt("last_used_step")) else { return false }
        try connection.execute(dialect.sql("UPDATE totp_factors SET last_used_step = ? WHERE id = ?"), [.integer(step), .text(id)])
        return true
    }
}

extension FactorService {
    /// `on`, `pending` (set up, not confirmed) or `off`, with the unused recovery codes when on;
    /// for `latchkey users show`.
    public func totpStatus(userID: String) async throws -> String {
        let dialect = dialect
        return try await database.read { connection in
            guard let row = try connection.queryOne(dialect.sql("SELECT confirmed_at FROM totp_factors WHERE user_id = ?"), [.text(userID)]) else {
                return "off"
            }
            guard row.optionalDate("confirmed_at") != nil else { return "pending" }
            let left = try connection.query(dialect.sql("SELECT code_hash FROM recovery_codes WHERE user_id = ? AND used_at IS NULL"), [.text(userID)]).count
            return "on (\(left) recovery codes left)"
        }
    }
}
