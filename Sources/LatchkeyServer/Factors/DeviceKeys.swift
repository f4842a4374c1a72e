package import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// A registered device key, as `GET /v1/devices` shows it.
package struct DeviceKey: Sendable, Hashable {
    package var id: String
    package var userID: String
    package var label: String
    package var createdAt: Date
    package var lastUsedAt: Date?
}

/// A device signature over a challenge, checked outside the write transaction so that the
/// ECDSA work does not hold the database's write lock.
struct CheckedDeviceProof: Sendable {
    var challenge: Challenge
    var deviceKeyID: String
    var valid: Bool
}

extension FactorService {
    // MARK: Challenges

    /// `POST /v1/challenges`: a `register` challenge, or a `step_up` challenge for one of the
    /// user's device keys, bound to the asking session.
    func issueChallenge(for principal: Principal, purpose: ChallengePurpose, deviceID: String?) async throws -> IssuedChallenge {
        let now = clock()
        return try await commit { connection in
            switch purpose {
            case .register:
                guard deviceID == nil else { return .failure(.invalidRequest("a register challenge takes no device_id")) }
            case .stepUp:
                guard let deviceID else { return .failure(.invalidRequest("a step_up challenge needs device_id")) }
                guard try self.deviceKeys.find(id: deviceID, userID: principal.userID, on: connection) != nil else {
                    return .failure(.notFound("no such device key"))
                }
            case .mfa:
                return .failure(.invalidRequest("purpose must be register or step_up"))
            }
            return .success(
                try Challenge.issue(
                    userID: principal.userID, purpose: purpose, deviceKeyID: deviceID, sessionID: principal.sessionID, mfaTokenHash: nil,
                    now: now, on: connection))
        }
    }

    /// Reads a challenge, checks that it belongs to `matches`, is unspent and unexpired, and
    /// verifies `signature` with `publicKey` (or the challenge's own device key).
    ///
    /// A challenge bound elsewhere (another user, session, purpose or `mfa_token`) is reported
    /// as unknown, so it reveals nothing about challenges that are not the caller's. That the
    /// challenge is still unspent is checked again, by compare-and-set, where it is spent.
    func checkDeviceProof(
        challengeID: String, signature: [UInt8], publicKey: [UInt8]? = nil, now: Date, matches: @escaping @Sendable (Challenge) -> Bool
    ) async throws -> CheckedDeviceProof {
        let challenges = challenges
        let deviceKeys = deviceKeys
        let (challenge, storedKey) = try await database.read { connection -> (Challenge?, (id: String, key: [UInt8])?) in
            guard let challenge = try challenges.find(id: challengeID, on: connection), matches(challenge) else { return (nil, nil) }
            guard let deviceKeyID = challenge.deviceKeyID else { return (challenge, nil) }
            return (challenge, try deviceKeys.publicKey(id: deviceKeyID, on: connection).map { (deviceKeyID, $0) })
        }
        guard let challenge else { throw AuthError.invalidGrant(.unknown, "no such challenge for this request") }
        try challenge.checkUsable(now: now)
        guard let key = publicKey ?? storedKey?.key else { throw AuthError.invalidGrant(.revoked, "the device key was removed") }
        let valid = DeviceSignature.isValid(signature, publicKey: key, digest: challenge.digest)
        return CheckedDeviceProof(challenge: challenge, deviceKeyID: storedKey?.id ?? "", valid: valid)
    }

    // MARK: Registering, listing, removing

    /// `POST /v1/devices`: registers a key after it signed a `register` challenge of this session
    /// (proof of possession). The session counts as having proved a second factor now.
    func registerDevice(
        for principal: Principal, publicKey: [UInt8], label: String, challengeID: String, signature: [UInt8], context: RequestContext
    ) async throws -> DeviceKey {
        guard (try? P256.Signing.PublicKey(x963Representation: publicKey)) != nil else {
            throw AuthError.invalidRequest("public_key must be a 65-byte uncompressed X9.63 P-256 point on the curve")
        }
        let now = clock()
        let proof = try await checkDeviceProof(challengeID: challengeID, signature: signature, publicKey: publicKey, now: now) {
            $0.purpose == .register && $0.userID == principal.userID && $0.sessionID == principal.sessionID
        }
        let device = DeviceKey(id: Identifiers.make("dev"), userID: principal.userID, label: label, createdAt: now, lastUsedAt: nil)
        let result: DeviceKey
        do {
            result = try await commit(conflict: "this device key is already registered") { connection -> Result<DeviceKey, AuthError> in
                try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection)
                guard try self.challenges.spend(id: challengeID, at: now, on: connection) else {
                    return .failure(.invalidGrant(.reused, "the challenge was already used"))
                }
                guard proof.valid else {
                    try self.record(
                        .deviceKeyFailed, .failure, userID: principal.userID, context: context, now: now,
                        details: ["use": "register", "challenge_id": challengeID], on: connection)
                    return .failure(.invalidGrant(.invalidSignature, "the signature does not verify with public_key over the challenge"))
                }
                try self.deviceKeys.insert(device, publicKey: publicKey, on: connection)
                try self.sessions.markSecondFactor(sessionID: principal.sessionID, now: now, on: connection)
                try self.record(
                    .deviceKeyAdded, .success, userID: principal.userID, context: context, now: now,
                    details: ["device_key_id": device.id, "session_id": principal.sessionID], on: connection)
                return .success(device)
            }
        } catch {
            count("device_key", use: "register", false)
            throw error
        }
        count("device_key", use: "register", true)
        return result
    }

    /// The user's device keys, oldest first.
    package func devices(userID: String) async throws -> [DeviceKey] {
        let deviceKeys = deviceKeys
        return try await database.read { try deviceKeys.list(userID: userID, on: $0) }
    }

    /// Removes a device key (S18).
    ///
    /// - Parameters:
    ///   - id: The key.
    ///   - userID: Its owner.
    ///   - principal: The session asking, which must have proved a second factor in the last five
    ///     minutes; `nil` for an operator (`latchkey users remove-device`).
    ///   - context: Who asked, for the audit entry.
    /// - Throws: ``AuthError/notFound(_:)`` when the user has no such key;
    ///   ``AuthError/insufficientAuthentication()``.
    package func removeDevice(_ id: String, userID: String, principal: Principal?, context: RequestContext) async throws {
        let now = clock()
        try await commit { connection -> Result<Void, AuthError> in
            guard try self.deviceKeys.find(id: id, userID: userID, on: connection) != nil else {
                return .failure(.notFound("no such device key"))
            }
            if let principal { try self.sessions.requireRecentSecondFactor(principal, now: now, on: connection) }
            // Removed by a concurrent request since it was read: that request audited it.
            guard try self.deviceKeys.delete(id: id, userID: userID, on: connection) else { throw AuthError.notFound("no such device key") }
            try self.record(
                .deviceKeyRemoved, .success, userID: userID, context: context, now: now,
                details: ["device_key_id": id, "by": principal == nil ? "operator" : "user"], on: connection)
            return .success(())
        }
    }

    // MARK: Step-up

    /// `POST /v1/challenges/{id}/verify`: a device key of the user signed a `step_up` challenge of
    /// this session. The same session gets `hwk` (and `mfa`) in its `amr`, a second-factor time
    /// of now, and new tokens: its refresh token rotates as in a refresh grant (S8).
    func stepUp(_ principal: Principal, challengeID: String, signature: [UInt8], context: RequestContext) async throws -> TokenResponse {
        let now = clock()
        let proof = try await checkDeviceProof(challengeID: challengeID, signature: signature, now: now) {
            $0.purpose == .stepUp && $0.userID == principal.userID && $0.sessionID == principal.sessionID
        }
        let (session, refreshToken, user): (Session, String, User)
        do {
            (session, refreshToken, user) = try await commit { connection -> Result<(Session, String, User), AuthError> in
                guard try self.challenges.spend(id: challengeID, at: now, on: connection) else {
                    return .failure(.invalidGrant(.reused, "the challenge was already used"))
                }
                guard proof.valid else {
                    try self.record(
                        .deviceKeyFailed, .failure, userID: principal.userID, context: context, now: now,
                        details: ["use": "step_up", "device_key_id": proof.deviceKeyID, "challenge_id": challengeID], on: connection)
                    return .failure(.invalidGrant(.invalidSignature, "the signature does not verify with the device key over the challenge"))
                }
                guard try self.deviceKeys.touch(id: proof.deviceKeyID, at: now, on: connection) else {
                    return .failure(.invalidGrant(.revoked, "the device key was removed"))
                }
                guard var session = try self.sessionRows.find(id: principal.sessionID, on: connection), session.isLive(at: now),
                    let user = try self.dependencies.users.find(principal.userID, on: connection)
                else { return .failure(.invalidToken("the session has ended")) }
                session.amr = Self.amr(session.amr, adding: "hwk")
                session.secondFactorAt = now
                guard try self.sessionRows.recordStepUp(sessionID: session.id, amr: session.amr, at: now, on: connection) else {
                    return .failure(.invalidToken("the session has ended"))
                }
                let refreshToken = try self.refreshTokens.rotate(of: &session, now: now, on: connection)
                try self.record(
                    .deviceKeyUsed, .success, userID: principal.userID, context: context, now: now,
                    details: ["use": "step_up", "device_key_id": proof.deviceKeyID, "session_id": session.id], on: connection)
                return .success((session, refreshToken, user))
            }
        } catch {
            count("device_key", use: "step_up", false)
            throw error
        }
        count("device_key", use: "step_up", true)
        return try await accessTokens.response(session: session, refreshToken: refreshToken, user: user, created: false, now: now)
    }
}
