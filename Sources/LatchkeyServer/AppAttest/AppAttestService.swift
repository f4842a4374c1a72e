import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWebAuthn

/// A challenge as the app receives it, once.
struct AppAttestChallenge: Sendable, Hashable {
    /// The random bytes; Latchkey keeps only their SHA-256.
    var bytes: [UInt8]
    /// Seconds it lives.
    var expiresIn: Int
}

/// An app check token as issued (docs/reference.md "App Attest").
struct AppCheckToken: Sendable, Hashable {
    var token: String
    var expiresIn: Int
}

/// The endpoints `app_attest.enforce` may name.
enum AppCheckEndpoint: String, Sendable, CaseIterable {
    case signup
    case signIn = "sign_in"
    case token
}

/// App Attest (S47, S48) and the app check tokens it earns (S49): one-time challenges, key
/// attestation, assertions with strictly increasing counters, and the token check of the
/// endpoints under `app_attest.enforce`.
///
/// The verification itself is ``AppAttest`` (LatchkeyWebAuthn), pure; this service spends the
/// challenge, stores the key, advances the counter by compare-and-set and audits.
final class AppAttestService: Sendable {
    let dependencies: Dependencies
    let keys: SigningKeyRing
    let policy: AppAttestPolicy
    /// `app_attest.token_ttl`.
    let tokenTTL: Int
    /// The endpoints that need a token, and whether a missing or bad one is refused.
    let enforced: Set<AppCheckEndpoint>
    let logOnly: Bool
    let issuer: @Sendable () -> String
    let repository = AppAttestRepository()

    /// How long a challenge stays good (five minutes).
    static let challengeLifetime = 300
    /// Random bytes in a challenge.
    static let challengeByteCount = 32
    /// The `typ` of an app check token.
    static let tokenType = "app-check+jwt"
    /// A challenge that is unknown, spent or expired.
    static let unknownChallenge = AuthError.invalidGrant(AuthError.Reason(rawValue: "unknown_challenge"), "no such challenge, or it expired or was used")

    init(dependencies: Dependencies, keys: SigningKeyRing, configuration: Configuration, issuer: @escaping @Sendable () -> String) {
        let settings = configuration.appAttest
        self.dependencies = dependencies
        self.keys = keys
        self.policy = AppAttestPolicy(
            appIDs: settings.appIDs, environment: AppAttestEnvironment(rawValue: settings.environment) ?? .production,
            roots: settings.rootCAFile == nil ? [AppAttest.appleRoot()] : settings.rootCertificates.map(\.certificate))
        self.tokenTTL = settings.tokenTTL
        self.enforced = Set(settings.enforce.compactMap(AppCheckEndpoint.init(rawValue:)))
        self.logOnly = settings.enforceMode == "log"
        self.issuer = issuer
    }

    /// Whether any app may attest keys here (`app_attest.app_ids` is set).
    var isEnabled: Bool { !policy.appIDs.isEmpty }

    private func requireEnabled() throws(AuthError) {
        guard isEnabled else { throw AuthError.notFound("App Attest is not configured on this server (app_attest.app_ids)") }
    }

    /// `POST /v1/app-attest/challenge`: a new one-time challenge.
    func challenge() async throws -> AppAttestChallenge {
        try requireEnabled()
        let bytes = SecureRandom.bytes(count: Self.challengeByteCount)
        let now = dependencies.clock()
        try await dependencies.database.write { connection in
            try self.repository.insertChallenge(
                hash: HashFunction.sha256.hash(bytes), createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(Self.challengeLifetime)),
                on: connection)
        }
        return AppAttestChallenge(bytes: bytes, expiresIn: Self.challengeLifetime)
    }

    /// `POST /v1/app-attest/keys`: verifies the attestation of `keyID` over the challenge and
    /// stores the key.
    ///
    /// The challenge is spent whatever the outcome.
    ///
    /// - Throws: `invalid_grant` with the failed check as `reason` (`unknown_challenge` for a
    ///   challenge that is unknown, spent or expired); `conflict` for a key attested before.
    func attestKey(keyID: [UInt8], attestation: [UInt8], challenge: [UInt8], context: RequestContext) async throws -> AppAttestedKey {
        try requireEnabled()
        let now = dependencies.clock()
        // SHA-256 of the challenge is both the stored row's key and the clientDataHash.
        let clientDataHash = HashFunction.sha256.hash(challenge)
        let verified: Result<AppAttestedKey, WebAuthnError>
        do throws(WebAuthnError) {
            verified = .success(try AppAttest.verifyAttestation(attestation, keyID: keyID, clientDataHash: clientDataHash, policy: policy, at: now))
        } catch {
            verified = .failure(error)
        }
        let details = ["key_id": Base64URL.encode(keyID)]
        let outcome = try await dependencies.database.write { connection -> Result<AppAttestedKey, AuthError> in
            let refuse = { (error: AuthError, reason: String) throws -> Result<AppAttestedKey, AuthError> in
                try self.dependencies.record(
                    .appAttestKeyRefused, .failure, userID: nil, context: context, now: now, details: details.merging(["reason": reason]) { $1 },
                    on: connection)
                return .failure(error)
            }
            guard try self.repository.spendChallenge(hash: clientDataHash, at: now, on: connection) else {
                return try refuse(Self.unknownChallenge, "unknown_challenge")
            }
            let key: AppAttestedKey
            switch verified {
            case .success(let value): key = value
            case .failure(let error): return try refuse(.invalidGrant(AuthError.Reason(rawValue: error.reason), error.message), error.reason)
            }
            guard try self.repository.findKey(id: keyID, on: connection) == nil else {
                return try refuse(.conflict("this key was attested already; generate a new key"), "key_exists")
            }
            try self.repository.insertKey(key, at: now, on: connection)
            try self.dependencies.record(
                .appAttestKeyAttested, .success, userID: nil, context: context, now: now,
                details: details.merging(["app_id": key.appID, "environment": key.environment.rawValue]) { $1 }, on: connection)
            return .success(key)
        }
        let succeeded = if case .success = outcome { true } else { false }
        dependencies.metrics.increment(.appAttest, ["operation": "attest", "outcome": succeeded ? "success" : "failure"])
        return try outcome.get()
    }

    /// `POST /v1/app-attest/assertions`: verifies an assertion of an attested key over the
    /// challenge, advances its counter and signs an app check token.
    ///
    /// The challenge is spent whatever the outcome; the counter moves by compare-and-set, so
    /// of two assertions with one counter, on any instances, at most one earns a token.
    ///
    /// - Throws: `invalid_grant` with the failed check as `reason` (`unknown_challenge`,
    ///   `unknown_key`, `bad_signature`, `rp_id_mismatch`, `counter_mismatch`, `malformed`).
    func assertKey(keyID: [UInt8], assertion: [UInt8], challenge: [UInt8], context: RequestContext) async throws -> AppCheckToken {
        try requireEnabled()
        let now = dependencies.clock()
        let clientDataHash = HashFunction.sha256.hash(challenge)
        let stored = try await dependencies.database.read { try self.repository.findKey(id: keyID, on: $0) }
        let verified = Self.verify(assertion, of: stored, clientDataHash: clientDataHash)
        let details = ["key_id": Base64URL.encode(keyID)]
        let outcome = try await dependencies.database.write { connection -> Result<String, AuthError> in
            let refuse = { (error: AuthError) throws -> Result<String, AuthError> in
                try self.dependencies.record(
                    .appAttestAssertionRefused, .failure, userID: nil, context: context, now: now,
                    details: details.merging(["reason": error.reason?.rawValue ?? error.code.rawValue]) { $1 }, on: connection)
                return .failure(error)
            }
            guard try self.repository.spendChallenge(hash: clientDataHash, at: now, on: connection) else {
                return try refuse(Self.unknownChallenge)
            }
            switch verified {
            case .failure(let error):
                return try refuse(error)
            case .success(let proof):
                guard try self.repository.advanceCounter(keyID: keyID, to: proof.counter, at: now, on: connection) else {
                    return try refuse(
                        .invalidGrant(AuthError.Reason(rawValue: "counter_mismatch"), "an assertion with this counter or a later one came first"))
                }
                return .success(proof.appID)
            }
        }
        let succeeded = if case .success = outcome { true } else { false }
        dependencies.metrics.increment(.appAttest, ["operation": "assert", "outcome": succeeded ? "success" : "failure"])
        return try await token(appID: try outcome.get(), keyID: keyID, now: now)
    }

    /// What an assertion of `key` proves: its counter and the key's app.
    static func verify(
        _ assertion: [UInt8], of key: AppAttestKey?, clientDataHash: [UInt8]
    ) -> Result<(counter: UInt32, appID: String), AuthError> {
        guard let key else { return .failure(.invalidGrant(AuthError.Reason(rawValue: "unknown_key"), "no key with this key_id was attested")) }
        do throws(WebAuthnError) {
            let counter = try AppAttest.verifyAssertion(
                assertion, publicKey: key.attested.publicKey, clientDataHash: clientDataHash, appID: key.attested.appID, previousCounter: key.counter)
            return .success((counter, key.attested.appID))
        } catch {
            return .failure(.invalidGrant(AuthError.Reason(rawValue: error.reason), error.message))
        }
    }

    /// Signs an app check token: ES256 with the server's current key, `typ: app-check+jwt`,
    /// `iss`, `sub` (the app id), `key_id` (base64url), `iat`, `exp`, `jti`.
    func token(appID: String, keyID: [UInt8], now: Date) async throws -> AppCheckToken {
        guard let signer = try await keys.current(now: now).signer else { throw NoActiveSigningKey() }
        var claims = JWTClaims()
        claims.issuer = issuer()
        claims.subject = appID
        claims["key_id"] = .string(Base64URL.encode(keyID))
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(TimeInterval(tokenTTL))
        claims.tokenID = Identifiers.secret()
        return AppCheckToken(token: try signer.sign(claims, type: Self.tokenType), expiresIn: tokenTTL)
    }

    /// Why `token` is not a valid app check token of this server at `now`, or nil when it is:
    /// ES256 by a published key, `typ: app-check+jwt`, this issuer, unexpired, `sub` one of
    /// `app_attest.app_ids`, with `key_id`.
    func tokenProblem(_ token: String, now: Date) async throws -> String? {
        let snapshot = try await keys.current(now: now)
        let policy = JWTValidationPolicy(
            issuer: issuer(), audiences: nil, algorithms: [.es256], requiredClaims: ["exp", "iat", "sub", "key_id"], type: .exactly(Self.tokenType))
        do {
            let claims = try JWTVerifier(keys: snapshot.verificationKeys, policy: policy).verify(token, now: now).claims
            guard let subject = claims.subject, self.policy.appIDs.contains(subject) else { return "not_configured_app" }
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    /// The app check of an endpoint under `app_attest.enforce` (S49): passes when `token` is a
    /// valid app check token; otherwise refuses with 401 `app_check_failed`, or in `log` mode
    /// lets the request through. Either way a failure is counted and audited.
    ///
    /// - Parameters:
    ///   - endpoint: Which enforced endpoint the request is for.
    ///   - token: The `X-Latchkey-App-Check` header, if any.
    ///   - context: Who sent it.
    /// - Throws: ``AuthError/Code-swift.struct/appCheckFailed``.
    func check(_ endpoint: AppCheckEndpoint, token: String?, context: RequestContext) async throws {
        guard enforced.contains(endpoint) else { return }
        let now = dependencies.clock()
        var problem = "missing"
        if let token {
            guard let found = try await tokenProblem(token, now: now) else {
                dependencies.metrics.increment(.appChecks, ["endpoint": endpoint.rawValue, "outcome": "passed"])
                return
            }
            problem = found
        }
        dependencies.metrics.increment(.appChecks, ["endpoint": endpoint.rawValue, "outcome": logOnly ? "logged" : "refused"])
        await dependencies.recordOutsideTransaction(
            .appCheckFailed, logOnly ? .logged : .failure, userID: nil, context: context, details: ["endpoint": endpoint.rawValue, "reason": problem])
        if !logOnly {
            throw AuthError(.appCheckFailed, "this endpoint needs a valid app check token in X-Latchkey-App-Check (\(problem))")
        }
    }
}
