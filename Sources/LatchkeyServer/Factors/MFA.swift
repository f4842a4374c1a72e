import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyStore

/// An `mfa_token`: proof of a first factor, good for five minutes and five wrong tries (docs/reference.md).
struct MFAToken: Sendable {
    var hash: [UInt8]
    var userID: String
    var firstFactor: String

    static let lifetime: TimeInterval = 300
    static let maximumFailures = 5

    /// Reads a token and checks it is still usable.
    ///
    /// - Throws: `invalid_grant` with reason `unknown`, `expired`, `reused` (already completed)
    ///   or `revoked` (five wrong tries).
    static func usable(_ token: String, now: Date, dialect: SQLDialect, on connection: any SQLConnection) throws -> MFAToken {
        guard token.count <= 512, let row = try connection.queryOne(dialect.sql("SELECT * FROM mfa_tokens WHERE token_hash = ?"), [.blob(token.sha256)]) else {
            throw HTTPError.invalidGrant(.unknown, "the mfa_token is not known")
        }
        switch row.optionalString("ended_reason") {
        case "completed"?: throw HTTPError.invalidGrant(.reused, "the mfa_token was already used")
        case .some: throw HTTPError.invalidGrant(.revoked, "the mfa_token ended after too many wrong tries; sign in again")
        case nil: break
        }
        guard now < (try row.date("expires_at")) else { throw HTTPError.invalidGrant(.expired, "the mfa_token has expired; sign in again") }
        return MFAToken(hash: try row.blob("token_hash"), userID: try row.string("user_id"), firstFactor: try row.string("first_factor"))
    }
}

extension SessionService {
    /// The MFA branch of ``signIn(method:context:authenticate:)``: when the user has a second
    /// factor, stores an `mfa_token` (S7: 256 random bits, kept as a SHA-256 hash) in the sign-in
    /// transaction and returns the 403 `mfa_required` to answer instead of a session.
    ///
    /// - Returns: nil when the user has no second factor and the sign-in goes on.
    func beginSecondFactor(after factor: FirstFactor, context: RequestContext, now: Date, on connection: any SQLConnection) throws -> HTTPError? {
        let dialect = database.dialect
        let factors = try SecondFactors.list(userID: factor.user.id, dialect: dialect, on: connection)
        guard !factors.isEmpty else { return nil }
        let token = Identifiers.secret()
        try connection.execute(
            dialect.sql("INSERT INTO mfa_tokens (token_hash, user_id, first_factor, created_at, expires_at) VALUES (?, ?, ?, ?, ?)"),
            [.blob(token.sha256), .text(factor.user.id), .text(factor.method), .time(now), .time(now.addingTimeInterval(MFAToken.lifetime))])
        try audit.record(
            .init(time: now, userID: factor.user.id, event: .mfaRequired, outcome: .pending, ip: context.ip, requestID: context.requestID,
                  details: ["method": factor.method]),
            on: connection)
        return .mfaRequired(token: token, factors: factors)
    }
}

/// The second factor offered to `POST /v1/mfa/verify`.
enum MFAProof: Sendable {
    case deviceSignature(challengeID: String, signature: [UInt8])
    case totp(String)
    case recoveryCode(String)

    var amr: String {
        switch self {
        case .deviceSignature: "hwk"
        case .totp: "otp"
        case .recoveryCode: "rc"
        }
    }

    var factor: String {
        switch self {
        case .deviceSignature: "device_key"
        case .totp: "totp"
        case .recoveryCode: "recovery_code"
        }
    }

    var usedEvent: AuditEvent {
        switch self {
        case .deviceSignature: .deviceKeyUsed
        case .totp: .totpUsed
        case .recoveryCode: .recoveryCodeUsed
        }
    }

    var failedEvent: AuditEvent {
        switch self {
        case .deviceSignature: .deviceKeyFailed
        case .totp: .totpFailed
        case .recoveryCode: .recoveryCodeFailed
        }
    }
}

extension FactorService {
    /// `POST /v1/mfa/challenge`: a challenge for one of the token's user's device keys, bound to
    /// the `mfa_token`.
    func mfaChallenge(token: String, deviceID: String) async throws -> JSONValue {
        let now = clock()
        let dialect = dialect
        return try await commit { connection -> Result<JSONValue, HTTPError> in
            let mfa = try MFAToken.usable(token, now: now, dialect: dialect, on: connection)
            guard try Self.deviceKey(deviceID, userID: mfa.userID, dialect: dialect, on: connection) != nil else {
                return .failure(.notFound("no such device key"))
            }
            return .success(
                try Challenge.issue(
                    userID: mfa.userID, purpose: .mfa, deviceKeyID: deviceID, sessionID: nil, mfaTokenHash: mfa.hash, now: now,
                    dialect: dialect, on: connection))
        }
    }

    /// `POST /v1/mfa/verify`: completes a sign-in with a device signature, a TOTP code or a
    /// recovery code. Success ends the `mfa_token` and starts a session whose `amr` is the first
    /// factor, the second and `mfa`; each wrong proof counts, and the fifth ends the token.
    func mfaVerify(token: String, proof: MFAProof, context: RequestContext) async throws -> TokenResponse {
        let now = clock()
        let dialect = dialect
        let tokenHash = token.sha256
        var checked: CheckedDeviceProof?
        if case .deviceSignature(let challengeID, let signature) = proof {
            checked = try await checkDeviceProof(challengeID: challengeID, signature: signature, now: now) {
                $0.purpose == .mfa && $0.mfaTokenHash == tokenHash
            }
        }
        let device = checked
        let (session, refreshToken, user): (Session, String, User)
        do {
            (session, refreshToken, user) = try await commit { connection -> Result<(Session, String, User), HTTPError> in
                let mfa = try MFAToken.usable(token, now: now, dialect: dialect, on: connection)
                let accountKey = LoginRateLimiter.Key(scope: "mfa_account", key: "mfa:account:" + mfa.userID, limit: self.failureLimiter.perAccount)
                if let block = try self.failureLimiter.block([accountKey], now: now, on: connection) {
                    try self.record(.mfaRateLimited, .rateLimited, userID: mfa.userID, context: context, now: now, on: connection)
                    self.metrics.increment(.rateLimitHits, ["scope": "mfa_account"])
                    return .failure(.rateLimited(retryAfter: block.retryAfter))
                }
                var details = ["use": "mfa"]
                let accepted: Bool
                switch proof {
                case .deviceSignature(let challengeID, _):
                    guard let device, try Challenge.spend(challengeID, now: now, dialect: dialect, on: connection) else {
                        return .failure(.invalidGrant(.reused, "the challenge was already used"))
                    }
                    details["device_key_id"] = device.deviceKeyID
                    accepted = try device.valid && self.touchDevice(device.deviceKeyID, now: now, on: connection)
                case .totp(let code):
                    accepted = try self.spendTOTP(code, userID: mfa.userID, now: now, on: connection)
                case .recoveryCode(let code):
                    accepted = try RecoveryCodes.spend(code, userID: mfa.userID, now: now, dialect: dialect, on: connection)
                }
                guard accepted else {
                    try self.failureLimiter.recordFailure([accountKey], now: now, on: connection)
                    try self.record(proof.failedEvent, .failure, userID: mfa.userID, context: context, now: now, details: details, on: connection)
                    try connection.execute(dialect.sql("UPDATE mfa_tokens SET failures = failures + 1 WHERE token_hash = ?"), [.blob(mfa.hash)])
                    let failures = try connection.queryOne(dialect.sql("SELECT failures FROM mfa_tokens WHERE token_hash = ?"), [.blob(mfa.hash)])?.int("failures") ?? 0
                    if failures >= MFAToken.maximumFailures {
                        try connection.execute(
                            dialect.sql("UPDATE mfa_tokens SET ended_at = ?, ended_reason = 'too_many_failures' WHERE token_hash = ?"),
                            [.time(now), .blob(mfa.hash)])
                        try self.record(.mfaEnded, .tooManyFailures, userID: mfa.userID, context: context, now: now, on: connection)
                    }
                    if case .deviceSignature = proof {
                        return .failure(.invalidGrant(.invalidSignature, "the signature does not verify with the device key over the challenge"))
                    }
                    return .failure(.invalidGrant(.invalidCode, "the code is wrong or was already used"))
                }
                try self.failureLimiter.reset(accountKey, on: connection)
                try connection.execute(
                    dialect.sql("UPDATE mfa_tokens SET ended_at = ?, ended_reason = 'completed' WHERE token_hash = ?"), [.time(now), .blob(mfa.hash)])
                guard let user = try self.sessions.users.find(mfa.userID, on: connection) else {
                    return .failure(.invalidGrant(.revoked, "the account no longer exists"))
                }
                try self.record(proof.usedEvent, .success, userID: mfa.userID, context: context, now: now, details: details, on: connection)
                let (session, refreshToken) = try self.sessions.createSession(
                    userID: mfa.userID, amr: Self.amr([mfa.firstFactor], adding: proof.amr), secondFactorAt: now, context: context, now: now,
                    on: connection)
                return .success((session, refreshToken, user))
            }
        } catch {
            count(proof.factor, use: "mfa", false)
            throw error
        }
        count(proof.factor, use: "mfa", true)
        return try await sessions.tokenResponse(session: session, refreshToken: refreshToken, user: user, created: false, now: now)
    }
}
