import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// A user's TOTP factor as stored: the secret sealed under the master key, confirmed once the
/// first code from the app matched, and the last step used (S19).
struct TOTPFactor: Sendable, Hashable {
    var id: String
    var userID: String
    /// The secret sealed under the master key with the context ``sealingContext``.
    var sealedSecret: [UInt8]
    var confirmedAt: Date?
    var lastUsedStep: Int64?
    var createdAt: Date

    /// The master key's context for the secret of the factor `id`.
    static func sealingContext(_ id: String) -> String { "totp_factors/\(id)" }
}

/// A TOTP set-up as the user sees it once: the base32 secret and the URI an authenticator app
/// scans.
struct TOTPEnrollment: Sendable, Hashable {
    var secret: String
    var otpauthURI: String
}

/// What TOTP looks like for `latchkey users show`.
package enum TOTPStatus: Sendable, Hashable, CustomStringConvertible {
    case off
    /// Set up, not confirmed.
    case pending
    /// Confirmed, with this many unused recovery codes.
    case on(recoveryCodesLeft: Int)

    package var description: String {
        switch self {
        case .off: "off"
        case .pending: "pending"
        case .on(let left): "on (\(left) recovery codes left)"
        }
    }
}

extension FactorService {
    /// The issuer shown in authenticator apps.
    static let totpIssuer = "Latchkey"

    /// `POST /v1/totp`: a new, unconfirmed TOTP secret, sealed under the master key; it replaces
    /// an earlier unconfirmed one. A user whose TOTP is confirmed must remove it first (409).
    func beginTOTP(for principal: Principal, context: RequestContext) async throws -> TOTPEnrollment {
        let now = clock()
        let secret = SecureRandom.bytes(count: TOTP.secretByteCount)
        let id = Identifiers.make("otp")
        let factor = TOTPFactor(
            id: id, userID: principal.userID, sealedSecret: try masterKey.seal(secret, context: TOTPFactor.sealingContext(id)),
            confirmedAt: nil, lastUsedStep: nil, createdAt: now)
        let alreadySetUp = "TOTP is already set up; remove it first"
        return try await commit(conflict: alreadySetUp) { connection -> Result<TOTPEnrollment, AuthError> in
            try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection)
            guard let user = try self.dependencies.users.find(principal.userID, on: connection) else { return .failure(.invalidToken("the account no longer exists")) }
            if try self.totpFactors.isConfirmed(userID: principal.userID, on: connection) { return .failure(.conflict(alreadySetUp)) }
            // A factor confirmed (or begun) concurrently makes the insert fail on the unique user_id: 409 too.
            try self.totpFactors.deleteUnconfirmed(userID: principal.userID, on: connection)
            try self.totpFactors.insert(factor, on: connection)
            try self.record(.totpStarted, .success, userID: principal.userID, context: context, now: now, on: connection)
            let encoded = Base32.encode(secret)
            return .success(
                TOTPEnrollment(secret: encoded, otpauthURI: TOTP.keyURI(secret: encoded, account: user.email ?? user.id, issuer: Self.totpIssuer)))
        }
    }

    /// `POST /v1/totp/confirm`: the first code from the app turns TOTP on and issues ten recovery
    /// codes (replacing any earlier ones). The session counts as having proved a second factor.
    ///
    /// - Throws: 404 when no set-up is waiting; `invalid_grant` `invalid_code` for a wrong code;
    ///   409 when a concurrent request confirmed it first.
    func confirmTOTP(for principal: Principal, code: String, context: RequestContext) async throws -> [String] {
        let now = clock()
        do {
            let codes = try await commit { connection -> Result<[String], AuthError> in
                try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection)
                guard let factor = try self.totpFactors.find(userID: principal.userID, on: connection), factor.confirmedAt == nil else {
                    return .failure(.notFound("no TOTP set-up is waiting for confirmation; start one first"))
                }
                let secret = try self.masterKey.unseal(factor.sealedSecret, context: TOTPFactor.sealingContext(factor.id))
                guard let step = TOTP.matchingStep(of: code, secret: secret, now: now, after: nil) else {
                    try self.record(.totpFailed, .failure, userID: principal.userID, context: context, now: now, details: ["use": "confirm"], on: connection)
                    return .failure(.invalidGrant(.invalidCode, "the code does not match"))
                }
                guard try self.totpFactors.confirm(id: factor.id, step: step, at: now, on: connection) else {
                    throw AuthError.conflict("TOTP is already set up; remove it first")
                }
                let codes = try RecoveryCodes.replace(userID: principal.userID, now: now, on: connection)
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
        try await removeTOTP(userID: principal.userID, id: nil, principal: principal, context: context)
    }

    /// Turns a user's TOTP off and deletes their recovery codes: for the user (`principal`, who
    /// must have proved a second factor in the last five minutes), or with `principal` `nil` for
    /// an admin of the admin API, who names the factor by `id`.
    func removeTOTP(userID: String, id: String?, principal: Principal?, context: RequestContext) async throws {
        let now = clock()
        try await commit { connection -> Result<Void, AuthError> in
            guard let factor = try self.totpFactors.find(userID: userID, on: connection), id == nil || factor.id == id else {
                return .failure(.notFound("TOTP is not set up"))
            }
            if let principal { try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection) }
            // Removed by a concurrent request since it was read: that request audited it.
            guard try self.totpFactors.delete(userID: userID, on: connection) else { throw AuthError.notFound("TOTP is not set up") }
            try self.recoveryCodes.deleteAll(userID: userID, on: connection)
            try self.record(
                .totpRemoved, .success, userID: userID, context: context, now: now, details: principal == nil ? ["by": "operator"] : [:], on: connection)
            return .success(())
        }
    }

    /// Checks a TOTP code for a user inside the caller's transaction and, when it matches a step
    /// later than the last one used, records that step by compare-and-set so the code cannot be
    /// used again, not even by a request running at the same time (S19).
    ///
    /// - Returns: Whether the code was accepted.
    func spendTOTP(_ code: String, userID: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        guard let factor = try totpFactors.find(userID: userID, on: connection), factor.confirmedAt != nil else { return false }
        let secret = try masterKey.unseal(factor.sealedSecret, context: TOTPFactor.sealingContext(factor.id))
        guard let step = TOTP.matchingStep(of: code, secret: secret, now: now, after: factor.lastUsedStep) else { return false }
        return try totpFactors.advanceStep(id: factor.id, to: step, on: connection)
    }

    /// `on` (with the unused recovery codes), `pending` (set up, not confirmed) or `off`; for
    /// `latchkey users show`.
    package func totpStatus(userID: String) async throws -> TOTPStatus {
        let totpFactors = totpFactors
        let recoveryCodes = recoveryCodes
        return try await database.read { connection in
            guard let factor = try totpFactors.find(userID: userID, on: connection) else { return .off }
            guard factor.confirmedAt != nil else { return .pending }
            return .on(recoveryCodesLeft: try recoveryCodes.unusedCount(userID: userID, on: connection))
        }
    }
}
