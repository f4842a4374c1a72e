import FoundationEssentials
import LatchkeyStore

/// What `/oauth/device_authorization` answers (RFC 8628 §3.2).
package struct DeviceAuthorizationGrant: Sendable {
    /// The device's secret, for polling `/oauth/token`.
    package var deviceCode: String
    /// What the user types, `XXXX-XXXX`.
    package var userCode: String
    /// `{public_url}/device`.
    package var verificationURI: String
    /// The same with the user code in its query, for a QR code: it fills the code in, the user
    /// still confirms it.
    package var verificationURIComplete: String
    package var expiresIn: Int
    package var interval: Int
}

/// The device authorization grant (RFC 8628): a device with no browser or keyboard to speak of
/// (an Apple TV) asks for a pair of codes, the user types the short one on a phone at `/device`,
/// signs in there as on any hosted page, and allows or denies; the device, polling the token
/// endpoint meanwhile, gets its tokens once.
///
/// Every change of state is a compare-and-set in the database, so it holds across instances; a
/// poll never writes, and while the user has not answered it reads only the first time
/// (``DevicePollGate`` keeps the polling clock, and which codes are known pending, in memory; an
/// answer announces itself on ``DeviceAuthorizationRepository/changeChannel``, which
/// ``followChanges()`` passes on to the gate).
package struct DeviceAuthorizationService: Sendable {
    /// Wrong user codes one address may type in ``wrongCodeWindow`` before it is refused (S45).
    static let wrongCodesPerAddress = 20
    static let wrongCodeWindow: TimeInterval = 15 * 60

    let dependencies: Dependencies
    let signIns: SignInPipeline
    /// Makes the token response, as for the other grants.
    let tokens: TokenService
    /// `device.code_ttl`.
    let codeTTL: Int
    /// The public URL, under which `/device` is.
    let publicURL: @Sendable () -> String
    let gate = DevicePollGate()
    let repository = DeviceAuthorizationRepository()
    let rateLimits = RateLimitRepository()

    var database: any SQLDatabase { dependencies.database }
    var clock: @Sendable () -> Date { dependencies.clock }

    /// The hosted page where the user types the code.
    static let verificationPath = "/device"
    /// Where a device asks for its codes.
    static let endpointPath = "/oauth/device_authorization"

    // MARK: The device asks

    /// Issues a device code and a user code for `client` (RFC 8628 §3.1, §3.2).
    ///
    /// - Throws: `unauthorized_client` unless the client is registered for the device grant;
    ///   `invalid_scope` for no scope or one the client may not have.
    package func issue(client: OAuthClient, scope: String?, context: RequestContext) async throws -> DeviceAuthorizationGrant {
        guard client.grantTypes.contains(.deviceCode) else {
            throw AuthError(.unauthorizedClient, "the client may not use the device authorization grant")
        }
        let requested = Set((scope ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init))
        guard !requested.isEmpty else { throw AuthError(.invalidScope, "scope is required") }
        guard requested.isSubset(of: client.scopes) else { throw AuthError(.invalidScope, "the client may not ask for every scope requested") }
        let granted = requested.sorted().joined(separator: " ")
        let now = clock()
        let deviceCode = DeviceAuthorization.newDeviceCode()
        let authorization = DeviceAuthorization(
            id: DeviceAuthorization.newID(), clientID: client.id, scope: granted, status: .pending, userID: nil, browserSessionID: nil,
            authTime: nil, amr: [], createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(codeTTL)))
        let userCode = try await database.write { connection in
            // 20^8 codes: a clash with a row not yet purged is rare, and then another is drawn.
            var userCode = UserCode.generate()
            while try self.repository.userCodeExists(hash: userCode.sha256, on: connection) { userCode = UserCode.generate() }
            try self.repository.insert(authorization, deviceCodeHash: deviceCode.sha256, userCodeHash: userCode.sha256, on: connection)
            try self.dependencies.record(
                .deviceGrantIssued, .success, userID: nil, context: context, now: now, details: ["client_id": client.id, "scope": granted],
                on: connection)
            return userCode
        }
        let verificationURI = publicURL() + Self.verificationPath
        return DeviceAuthorizationGrant(
            deviceCode: deviceCode, userCode: UserCode.display(userCode), verificationURI: verificationURI,
            verificationURIComplete: verificationURI + "?user_code=" + UserCode.display(userCode), expiresIn: codeTTL,
            interval: DeviceAuthorization.interval)
    }

    // MARK: The user answers

    /// What a typed user code led to.
    package enum CodeEntry: Sendable {
        /// A pending authorization: sign in, then the consent page.
        case found(id: String, clientID: String)
        /// No pending authorization has this code (mistyped, expired or already answered).
        case wrong
        /// Too many wrong codes from this address: try again in so many seconds.
        case limited(retryAfter: Int)
    }

    /// Looks up the pending authorization of a code typed on `/device` (any case, with or
    /// without the dash). S45: an address that typed ``wrongCodesPerAddress`` wrong codes in
    /// ``wrongCodeWindow`` is refused, even a right code, until the window is over; every wrong
    /// code and every refusal is audited.
    package func enter(userCode typed: String, context: RequestContext) async throws -> CodeEntry {
        let now = clock()
        let key = "device_code:ip:" + (context.ip ?? "unknown")
        let hash = UserCode.normalize(typed)?.sha256
        return try await database.write { connection in
            if let until = try self.rateLimits.blockedUntil(key: key, on: connection), until > now {
                try self.dependencies.record(.deviceGrantCodeFailed, .rateLimited, userID: nil, context: context, now: now, on: connection)
                return .limited(retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up))))
            }
            if let hash, let found = try self.repository.find(userCodeHash: hash, on: connection), found.status == .pending, found.expiresAt > now {
                return .found(id: found.id, clientID: found.clientID)
            }
            let (failures, windowStart) = try self.rateLimits.count(
                key: key, now: now, windowStartedBefore: now.addingTimeInterval(-Self.wrongCodeWindow), on: connection)
            if failures >= Self.wrongCodesPerAddress {
                try self.rateLimits.extendBlock(key: key, until: windowStart.addingTimeInterval(Self.wrongCodeWindow), on: connection)
            }
            try self.dependencies.record(
                .deviceGrantCodeFailed, .failure, userID: nil, context: context, now: now, details: ["failures": String(failures)], on: connection)
            return .wrong
        }
    }

    /// The pending, unexpired authorization with this reference, for the sign-in and consent
    /// pages; `nil` once it is answered or expired.
    func pending(id: String) async throws -> DeviceAuthorization? {
        guard id.utf8.count <= 64 else { return nil }
        let now = clock()
        return try await database.read { connection in
            try self.repository.find(id: id, on: connection).flatMap { $0.status == .pending && $0.expiresAt > now ? $0 : nil }
        }
    }

    /// What the consent page's answer did.
    package enum Decision: Sendable {
        case approved, denied
        /// Answered meanwhile (another tab) or expired: nothing changed.
        case gone
    }

    /// The user's answer on the consent page, for the signed-in `browserSession` (S46): a
    /// compare-and-set from `pending`, with its audit entry.
    package func decide(allow: Bool, id: String, browserSession: BrowserSession, context: RequestContext) async throws -> Decision {
        let now = clock()
        // Whatever the write did, this instance's polls read again at once (the others when
        // the repository's announcement reaches them).
        defer { gate.invalidate() }
        return try await database.write { connection in
            guard let found = try self.repository.find(id: id, on: connection),
                try self.repository.decide(
                    id: id, approve: allow, userID: browserSession.userID, browserSessionID: browserSession.id,
                    authTime: browserSession.authTime, amr: browserSession.amr, now: now, on: connection)
            else { return .gone }
            try self.dependencies.record(
                allow ? .deviceGrantApproved : .deviceGrantDenied, .success, userID: browserSession.userID, context: context, now: now,
                details: ["client_id": found.clientID, "scope": found.scope], on: connection)
            return allow ? .approved : .denied
        }
    }

    // MARK: The device polls

    /// The answer while the user has not answered.
    private static let pending = AuthError(.authorizationPending, "the user has not answered yet; poll again after the interval")

    /// Makes every process's gate forget which codes are pending whenever any process announces
    /// an answer, until the subscription is cancelled.
    func followChanges() -> SQLChangeSubscription {
        database.subscribe(to: DeviceAuthorizationRepository.changeChannel) { [gate] in gate.invalidate() }
    }

    private enum Redemption: Sendable {
        case issued(Session, OAuthGrant, String, DeviceAuthorization)
        case spent
        case userGone
    }

    /// A poll of the token endpoint with `grant_type=urn:ietf:params:oauth:grant-type:device_code`
    /// (RFC 8628 §3.4, §3.5; S44, S46).
    ///
    /// - Returns: The tokens, once: the first poll after approval redeems the code by a
    ///   compare-and-set; every later one is `invalid_grant`.
    /// - Throws: `authorization_pending` (decided in memory once the code was read pending),
    ///   `slow_down` (decided in memory, with no database access), `access_denied`, `expired_token`; `invalid_grant` for an unknown or used code
    ///   or one issued to another client; `unauthorized_client` for a client not registered for
    ///   the grant.
    package func poll(deviceCode: String, client: OAuthClient, context: RequestContext) async throws -> OAuthTokens {
        guard client.grantTypes.contains(.deviceCode) else {
            throw AuthError(.unauthorizedClient, "the client may not use the device authorization grant")
        }
        guard deviceCode.utf8.count <= 512 else { throw AuthError.invalidGrant(.unknown, "the device code is not known") }
        let hash = deviceCode.sha256
        let now = clock()
        switch gate.check(hash, clientID: client.id, now: now) {
        case .proceed: break
        case .pending: throw Self.pending
        case .otherClient: throw AuthError.invalidGrant(.unknown, "the device code was issued to another client")
        case .slowDown(let interval):
            throw AuthError(.slowDown, "polled sooner than the interval allows; wait \(interval) seconds between polls from now on")
        }
        let generation = gate.generation
        let found = try await database.read { try self.repository.find(deviceCodeHash: hash, on: $0) }
        guard let stored = found else { throw AuthError.invalidGrant(.unknown, "the device code is not known") }
        guard stored.clientID == client.id else { throw AuthError.invalidGrant(.unknown, "the device code was issued to another client") }
        if stored.status == .pending || stored.status == .approved, now >= stored.expiresAt {
            gate.forget(hash)
            throw AuthError(.expiredToken, "the device code has expired; start again")
        }
        switch stored.status {
        case .pending:
            gate.track(hash, clientID: client.id, expiresAt: stored.expiresAt, now: now, readIn: generation)
            throw Self.pending
        case .denied:
            gate.forget(hash)
            throw AuthError(.accessDenied, "the user denied the request")
        case .redeemed:
            gate.forget(hash)
            throw AuthError.invalidGrant(.used, "the device code was already used")
        case .approved:
            gate.forget(hash)
        }
        let outcome: Redemption = try await database.write { connection in
            guard try self.repository.redeem(deviceCodeHash: hash, now: now, on: connection) else { return .spent }
            guard let userID = stored.userID, let user = try self.dependencies.users.find(userID, on: connection) else { return .userGone }
            let grant = OAuthGrant(clientID: client.id, scope: stored.scope, browserSessionID: stored.browserSessionID)
            // The browser sign-in behind the approval made the second-factor decision.
            let authTime = stored.authTime ?? stored.createdAt
            let authentication = Authentication(
                user: user, amr: stored.amr, secondFactor: .decided(provedAt: stored.amr.contains("mfa") ? authTime : nil))
            guard case .landed(.api(let session, let refreshToken)) = try self.signIns.admit(
                authentication, target: .grant(grant), context: context, now: now, on: connection)
            else { preconditionFailure("a decided second factor is never asked for again, and a grant lands in an API session") }
            try self.repository.attach(sessionID: session.id, toDeviceCode: hash, on: connection)
            try self.dependencies.record(
                .deviceGrantRedeemed, .success, userID: userID, context: context, now: now,
                details: ["client_id": client.id, "session_id": session.id], on: connection)
            return .issued(session, grant, refreshToken, stored)
        }
        switch outcome {
        case .spent: throw AuthError.invalidGrant(.used, "the device code was already used")
        case .userGone: throw AuthError.invalidGrant(.revoked, "the account no longer exists")
        case .issued(let session, let grant, let refreshToken, let stored):
            return try await tokens.tokens(
                session: session, grant: grant, refreshToken: refreshToken, client: client, authTime: stored.authTime ?? stored.createdAt,
                nonce: nil, now: now)
        }
    }
}
