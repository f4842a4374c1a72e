import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJSON
import LatchkeyStore

/// An `mfa_token`: proof of a first factor, good for five minutes and five wrong tries (docs/reference.md).
/// Only its SHA-256 hash is stored (S7).
struct MFAToken: Sendable, Hashable {
    /// How a token ended, in `mfa_tokens.ended_reason`.
    struct Ending: RawRepresentable, Sendable, Hashable {
        let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        /// It completed a sign-in.
        static let completed = Ending(rawValue: "completed")
        /// It reached ``MFAToken/maximumFailures`` wrong proofs.
        static let tooManyFailures = Ending(rawValue: "too_many_failures")
    }

    var hash: [UInt8]
    var userID: String
    /// The `amr` value of the sign-in method.
    var firstFactor: String
    var createdAt: Date
    var expiresAt: Date
    var failures: Int = 0
    var ended: Ending?

    static let lifetime: TimeInterval = 300
    static let maximumFailures = 5

    /// Reads a token and checks it is still usable.
    ///
    /// - Throws: `invalid_grant` with reason `unknown`, `expired`, `reused` (already completed)
    ///   or `revoked` (five wrong tries).
    static func usable(_ token: String, now: Date, on connection: any SQLConnection) throws -> MFAToken {
        guard token.count <= 512, let mfa = try MFATokenRepository().find(hash: token.sha256, on: connection) else {
            throw AuthError.invalidGrant(.unknown, "the mfa_token is not known")
        }
        switch mfa.ended {
        case .completed?: throw AuthError.invalidGrant(.reused, "the mfa_token was already used")
        case .some: throw AuthError.invalidGrant(.revoked, "the mfa_token ended after too many wrong tries; sign in again")
        case nil: break
        }
        guard now < mfa.expiresAt else { throw AuthError.invalidGrant(.expired, "the mfa_token has expired; sign in again") }
        return mfa
    }
}

/// The second factor offered to `POST /v1/mfa/verify`.
enum MFAProof: Sendable {
    case deviceSignature(challengeID: String, signature: [UInt8])
    case totp(String)
    case recoveryCode(String)
    /// A passkey's `AuthenticationResponseJSON` to a flow of `POST /v1/mfa/passkey/options`.
    case passkey(flowID: String, credential: JSONValue)

    var amr: String {
        switch self {
        case .deviceSignature: "hwk"
        case .totp: "otp"
        case .recoveryCode: "rc"
        case .passkey: PasskeyService.method
        }
    }

    var factor: String {
        switch self {
        case .deviceSignature: "device_key"
        case .totp: "totp"
        case .recoveryCode: "recovery_code"
        case .passkey: "passkey"
        }
    }

    /// The audit event of an accepted proof; nil for a passkey, whose use is audited where it
    /// is verified (``PasskeyService/verifyAssertion(flowID:kind:credential:use:userID:context:now:on:)``).
    var usedEvent: AuditEvent? {
        switch self {
        case .deviceSignature: .deviceKeyUsed
        case .totp: .totpUsed
        case .recoveryCode: .recoveryCodeUsed
        case .passkey: nil
        }
    }

    /// The audit event of a refused proof; nil for a passkey, as ``usedEvent``.
    var failedEvent: AuditEvent? {
        switch self {
        case .deviceSignature: .deviceKeyFailed
        case .totp: .totpFailed
        case .recoveryCode: .recoveryCodeFailed
        case .passkey: nil
        }
    }
}

extension FactorService {
    /// `POST /v1/mfa/challenge`: a challenge for one of the token's user's device keys, bound to
    /// the `mfa_token`.
    func mfaChallenge(token: String, deviceID: String) async throws -> IssuedChallenge {
        let now = clock()
        return try await commit { connection -> Result<IssuedChallenge, AuthError> in
            let mfa = try MFAToken.usable(token, now: now, on: connection)
            guard try self.deviceKeys.find(id: deviceID, userID: mfa.userID, on: connection) != nil else {
                return .failure(.notFound("no such device key"))
            }
            return .success(
                try Challenge.issue(
                    userID: mfa.userID, purpose: .mfa, deviceKeyID: deviceID, sessionID: nil, mfaTokenHash: mfa.hash, now: now, on: connection))
        }
    }

    /// `POST /v1/mfa/verify`: completes a sign-in with a device signature, a TOTP code or a
    /// recovery code. Success ends the `mfa_token` and starts a session whose `amr` is the first
    /// factor, the second and `mfa`; each wrong proof counts, and the fifth ends the token.
    ///
    /// Spending the proof and completing the token are both compare-and-set: of concurrent
    /// requests with one token, at most one signs in, and one that loses keeps nothing.
    func mfaVerify(token: String, proof: MFAProof, context: RequestContext) async throws -> TokenResponse {
        try await mfaVerify(token: token, proof: proof, context: context, target: .api).tokens
    }

    /// ``mfaVerify(token:proof:context:)`` into an API session or a hosted page's browser session.
    func mfaVerify(token: String, proof: MFAProof, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        let now = clock()
        let tokenHash = token.sha256
        var checked: CheckedDeviceProof?
        if case .deviceSignature(let challengeID, let signature) = proof {
            checked = try await checkDeviceProof(challengeID: challengeID, signature: signature, now: now) {
                $0.purpose == .mfa && $0.mfaTokenHash == tokenHash
            }
        }
        let device = checked
        let (landing, user): (SignInPipeline.Landing, User)
        do {
            (landing, user) = try await commit { connection -> Result<(SignInPipeline.Landing, User), AuthError> in
                let mfa = try MFAToken.usable(token, now: now, on: connection)
                let accountKey = LoginRateLimiter.Key(scope: "mfa_account", key: "mfa:account:" + mfa.userID, limit: self.failureLimiter.perAccount)
                if let block = try self.failureLimiter.block([accountKey], now: now, on: connection) {
                    try self.record(.mfaRateLimited, .rateLimited, userID: mfa.userID, context: context, now: now, on: connection)
                    self.metrics.increment(.rateLimitHits, ["scope": "mfa_account"])
                    return .failure(.rateLimited(retryAfter: block.retryAfter))
                }
                var details = ["use": "mfa"]
                let accepted: Bool
                // A refused passkey's own answer, with the failed check's reason.
                var refusal: AuthError?
                switch proof {
                case .deviceSignature(let challengeID, _):
                    guard let device, try self.challenges.spend(id: challengeID, at: now, on: connection) else {
                        return .failure(.invalidGrant(.reused, "the challenge was already used"))
                    }
                    details["device_key_id"] = device.deviceKeyID
                    accepted = try device.valid && self.deviceKeys.touch(id: device.deviceKeyID, at: now, on: connection)
                case .totp(let code):
                    accepted = try self.spendTOTP(code, userID: mfa.userID, now: now, on: connection)
                case .recoveryCode(let code):
                    accepted = try RecoveryCodes.spend(code, userID: mfa.userID, now: now, on: connection)
                case .passkey(let flowID, let credential):
                    switch try self.passkeys.verifyAssertion(
                        flowID: flowID, kind: .secondFactor, credential: credential, use: "mfa", userID: mfa.userID, context: context,
                        now: now, on: connection)
                    {
                    case .success: accepted = true
                    case .failure(let error):
                        accepted = false
                        refusal = error
                    }
                }
                guard accepted else {
                    try self.failureLimiter.recordFailure([accountKey], now: now, on: connection)
                    if let event = proof.failedEvent {
                        try self.record(event, .failure, userID: mfa.userID, context: context, now: now, details: details, on: connection)
                    }
                    let failure = try self.mfaTokens.recordFailure(hash: mfa.hash, maximum: MFAToken.maximumFailures, at: now, on: connection)
                    if failure?.ended == true {
                        try self.record(.mfaEnded, .tooManyFailures, userID: mfa.userID, context: context, now: now, on: connection)
                    }
                    if let refusal { return .failure(refusal) }
                    if case .deviceSignature = proof {
                        return .failure(.invalidGrant(.invalidSignature, "the signature does not verify with the device key over the challenge"))
                    }
                    return .failure(.invalidGrant(.invalidCode, "the code is wrong or was already used"))
                }
                guard try self.mfaTokens.complete(hash: mfa.hash, at: now, on: connection) else {
                    // A concurrent request completed or ended the token since it was read. Throwing
                    // rolls this transaction back, so the proof spent above stays unspent; the
                    // token read again says why it is no longer usable.
                    _ = try MFAToken.usable(token, now: now, on: connection)
                    throw AuthError.invalidGrant(.reused, "the mfa_token was already used")
                }
                try self.failureLimiter.reset(accountKey, on: connection)
                guard let user = try self.dependencies.users.find(mfa.userID, on: connection) else {
                    return .failure(.invalidGrant(.revoked, "the account no longer exists"))
                }
                if let event = proof.usedEvent {
                    try self.record(event, .success, userID: mfa.userID, context: context, now: now, details: details, on: connection)
                }
                let authentication = Authentication(
                    user: user, amr: Self.amr([mfa.firstFactor], adding: proof.amr), secondFactor: .proved(at: now))
                guard case .landed(let landing) = try self.signIns.admit(authentication, target: target, context: context, now: now, on: connection)
                else { preconditionFailure("a proved second factor is never asked for again") }
                return .success((landing, user))
            }
        } catch {
            count(proof.factor, use: "mfa", false)
            throw error
        }
        count(proof.factor, use: "mfa", true)
        return try await signIns.finish(landing, user: user, created: false, now: now)
    }
}
