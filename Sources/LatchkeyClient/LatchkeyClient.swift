#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import LatchkeyWire

/// The SDK: signs the user in against a Latchkey server, keeps the session in a
/// ``CredentialStore``, and hands out fresh access tokens, refreshing at most once at a time.
///
/// Only the user, the launch-time check, or one of the server's definite `invalid_grant` reasons
/// ends a session. A network failure, a 5xx, a locked store or a sibling process's rotation keeps
/// it, and the call throws a ``LatchkeyError`` that says what happened.
public actor LatchkeyClient {
    /// How the client was set up.
    public nonisolated let configuration: LatchkeyConfiguration
    /// The server's endpoints over the configured transport.
    nonisolated let api: ServerAPI
    private nonisolated let hub: AuthEventHub

    /// The session as this client last read or wrote it; `loaded` is false until the store could
    /// be read (a locked Keychain at launch).
    private var cached: StoredSession?
    private var loaded: Bool
    /// A refreshed session the store refused (locked); written again at the next chance.
    private var unsaved = false
    /// The refresh every caller waits for while it runs (single flight).
    private var inFlight: Task<StoredSession, any Error>?

    /// A client for `configuration`, sending requests through `transport`.
    public init(configuration: LatchkeyConfiguration, transport: any HTTPTransport = URLSessionTransport()) {
        self.configuration = configuration
        var api = ServerAPI(baseURL: configuration.baseURL, transport: transport, dpop: configuration.dpop.map(DPoPProver.init))
        api.appCheck = configuration.appAttest.map { AppCheckTokens($0, api: api) }
        self.api = api
        do {
            self.cached = try configuration.store.load()
            self.loaded = true
        } catch {
            self.cached = nil
            self.loaded = false
        }
        self.hub = AuthEventHub(current: cached?.session)
    }

    /// What the store holds (perhaps expired), or `nil` when signed out.
    public var session: Session? { current()?.session }

    /// A new stream of events for each access: first ``AuthEvent/initialSession(_:)`` with the
    /// current session (`nil` when signed out), then every later event.
    public nonisolated var authEvents: AsyncStream<AuthEvent> { hub.stream() }

    /// Sends an event that does not come from the session (the app lock's ``AuthEvent/locked``
    /// and ``AuthEvent/unlocked``) to every ``authEvents`` stream.
    nonisolated func publish(_ event: AuthEvent) { hub.send(event) }

    // MARK: First factors

    /// Signs in with what Sign in with Apple returned. The name, when Apple shared it (the first
    /// authorization only), goes with it; the server keeps it, so it is never needed again.
    ///
    /// - Returns: ``SignInResult/signedIn(_:)``, or ``SignInResult/secondFactorRequired(_:)``.
    /// - Throws: ``LatchkeyError`` (`invalid_identity_token` as ``LatchkeyError/Code/server(code:)``, …).
    public func signInWithApple(_ credential: AppleCredential) async throws -> SignInResult {
        let body = WireAppleSignInRequest(
            identityToken: credential.identityToken, authorizationCode: credential.authorizationCode, nonce: credential.rawNonce,
            givenName: credential.name?.givenName, familyName: credential.name?.familyName)
        return try await firstFactor("/v1/auth/apple", body, appleUserID: credential.user)
    }

    /// Creates a password account and signs it in.
    ///
    /// - Throws: ``LatchkeyError``: `conflict` when the username is taken, `invalid_request` with
    ///   ``LatchkeyError/reason`` `password_too_short` / `password_common` / … for a refused password.
    public func signUp(username: String, password: String, name: PersonName? = nil) async throws -> SignInResult {
        let body = WirePasswordSignUpRequest(username: username, password: password, givenName: name?.givenName, familyName: name?.familyName)
        return try await firstFactor("/v1/auth/password/signup", body, appleUserID: nil)
    }

    /// Signs in with a username and password (also what an `ASPasswordCredential` carries).
    ///
    /// - Throws: ``LatchkeyError/Code/invalidCredentials``, ``LatchkeyError/Code/rateLimited(retryAfter:)``, ….
    public func signIn(username: String, password: String) async throws -> SignInResult {
        try await firstFactor("/v1/auth/password/login", WirePasswordLoginRequest(username: username, password: password), appleUserID: nil)
    }

    /// Completes a sign-in that needs a second factor.
    ///
    /// - Returns: The new session, also stored and announced as ``AuthEvent/signedIn(_:)``.
    /// - Throws: ``LatchkeyError``: `invalid_grant` with reason `invalid_code` or
    ///   `invalid_signature` for a wrong proof (the challenge stays usable for its tries); for a
    ///   passkey, what ``LatchkeyClient/signInWithPasskey(username:using:)`` throws.
    public func completeSignIn(_ challenge: MFAChallenge, with proof: SecondFactorProof) async throws -> Session {
        let request: WireMFAVerifyRequest
        var registered: (publicKey: String, id: String)?
        switch proof {
        case .totp(let code):
            request = .totp(mfaToken: challenge.mfaToken, code: code)
        case .recoveryCode(let code):
            request = .recoveryCode(mfaToken: challenge.mfaToken, code: code)
        case .deviceKey(let id, let key):
            let issued = try await call(
                "POST", "/v1/mfa/challenge", WireMFAChallengeRequest(mfaToken: challenge.mfaToken, deviceID: id), as: WireChallenge.self)
            let signature = try await sign(issued, with: key)
            request = .deviceSignature(mfaToken: challenge.mfaToken, challengeID: issued.challengeID, signature: signature)
            registered = (Base64URL.encode(try await key.publicKeyX963()), id)
        case .passkey(let authenticator):
            request = try await passkeyProof(challenge, authenticator)
        }
        let response = try await call("POST", "/v1/mfa/verify", request, as: WireTokenResponse.self)
        var stored = signedIn(response, appleUserID: challenge.appleUserID)
        if let registered {
            stored.deviceKeyIDs[registered.publicKey] = registered.id
            remember(stored)
        }
        return stored.session
    }

    // MARK: Tokens

    /// An access token that lives at least `minTTL` more, refreshing first if needed.
    ///
    /// However many callers ask at once, one refresh runs and all of them get its token. A
    /// `minTTL` longer than a token's life means "refresh now", shared by every caller waiting
    /// at that moment.
    ///
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/notSignedIn``; ``LatchkeyError/Code/sessionEnded``
    ///   when the server ended the session (with ``LatchkeyError/signOutReason``); anything
    ///   ambiguous (``LatchkeyError/Code/network``, a 5xx, ``LatchkeyError/Code/keychainLocked``)
    ///   keeps the session.
    public func accessToken(minTTL: Duration = .seconds(60)) async throws -> String {
        switch SessionMachine.tokenStep(current(), now: configuration.now(), minTTL: minTTL) {
        case .use(let token): return token
        case .notSignedIn: throw LatchkeyError(.notSignedIn, "there is no session; sign in first")
        case .refresh(let due): return try await refresh(due: due).session.accessToken
        }
    }

    /// Sets `Authorization: Bearer …` on `request` with a token that lives at least
    /// ``LatchkeyConfiguration/refreshLeeway`` more; with DPoP, `Authorization: DPoP …` and a
    /// `DPoP` proof for the request's method and URL (set them last).
    ///
    /// - Throws: as ``accessToken(minTTL:)``.
    public func authorize(_ request: inout URLRequest) async throws {
        let token = try await accessToken(minTTL: configuration.refreshLeeway)
        guard let dpop = api.dpop, let url = request.url else {
            request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            return
        }
        request.setValue("DPoP " + token, forHTTPHeaderField: "Authorization")
        request.setValue(try await dpop.proof(method: request.httpMethod ?? "GET", url: url, accessToken: token), forHTTPHeaderField: "DPoP")
    }

    /// Refreshes now (joining a refresh already running).
    ///
    /// - Returns: The session with the new tokens.
    /// - Throws: as ``accessToken(minTTL:)``.
    @discardableResult
    public func refresh() async throws -> Session {
        guard let stored = current() else { throw LatchkeyError(.notSignedIn, "there is no session; sign in first") }
        return try await refresh(due: stored.session.refreshToken).session
    }

    // MARK: Account

    /// The signed-in account: user, identities, second factors.
    public func me() async throws -> Account {
        let account = Account(try await authorized("GET", "/v1/me", as: WireAccount.self))
        userChanged(account.user)
        return account
    }

    /// The user's live sessions, newest first; ``SessionInfo/isCurrent`` marks this one.
    public func sessions() async throws -> [SessionInfo] {
        try await authorized("GET", "/v1/sessions", as: WireSessionList.self).sessions.map(SessionInfo.init)
    }

    /// Signs out: ends the session at the server when it can be reached (every session of the
    /// user with `everywhere`), and always ends it here, with ``AuthEvent/signedOut(_:)``
    /// ``SignOutReason/userInitiated``.
    public func signOut(everywhere: Bool = false) async {
        _ = try? await inFlight?.value
        if everywhere, let token = try? await accessToken(minTTL: .zero),
            (try? await api.send("POST", "/v1/logout", body: WireLogoutRequest(all: true), bearer: token)) != nil
        {
            end(.userInitiated)
            return
        }
        await revokeAtServer()
        end(.userInitiated)
    }

    /// Ends the session for `reason` here and, when reachable, at the server: for the Apple
    /// glue's `credentialRevokedNotification` observer and similar signals.
    public func signOut(because reason: SignOutReason) async {
        _ = try? await inFlight?.value
        await revokeAtServer()
        end(reason)
    }

    /// Deletes the account at the server (revoking Apple's tokens there), then ends the session
    /// here with ``SignOutReason/accountDeleted``.
    ///
    /// - Throws: ``LatchkeyError``: `insufficient_authentication` as ``LatchkeyError/Code/server(code:)``
    ///   when the user has a second factor and has not proved it in the last five minutes
    ///   (``stepUp(with:)`` first); the session is kept on any error.
    public func deleteAccount() async throws {
        _ = try await authorizedSend("DELETE", "/v1/me")
        end(.accountDeleted)
    }

    // MARK: Second factors

    /// Registers `key` as a second factor: asks for a `register` challenge, has the key sign it,
    /// posts the public key. The key's server id is kept with the session, so ``stepUp(with:)``
    /// needs only the key.
    ///
    /// - Throws: ``LatchkeyError`` (`conflict` when the key is already registered); whatever
    ///   the key's `sign` throws (a canceled biometric prompt).
    public func registerDeviceKey(_ key: any DeviceKey, label: String) async throws -> DeviceInfo {
        let challenge = try await authorized("POST", "/v1/challenges", WireChallengeRequest(purpose: .register), as: WireChallenge.self)
        let signature = try await sign(challenge, with: key)
        let publicKey = Base64URL.encode(try await key.publicKeyX963())
        let device = try await authorized(
            "POST", "/v1/devices",
            WireDeviceRegistration(publicKey: publicKey, label: label, challengeID: challenge.challengeID, signature: signature),
            as: WireDevice.self)
        if var stored = current() {
            stored.deviceKeyIDs[publicKey] = device.id
            remember(stored)
        }
        return DeviceInfo(device)
    }

    /// Proves `key` (registered through this SDK) for the current session: the new tokens carry
    /// `hwk` and `mfa`, as actions like ``deleteAccount()`` require.
    ///
    /// - Returns: The session with the stepped-up tokens.
    /// - Throws: ``LatchkeyError/Code/deviceKeyNotRegistered`` for a key this SDK did not register.
    public func stepUp(with key: any DeviceKey) async throws -> Session {
        let publicKey = Base64URL.encode(try await key.publicKeyX963())
        guard let deviceID = current()?.deviceKeyIDs[publicKey] else {
            throw LatchkeyError(.deviceKeyNotRegistered, "this key was not registered through this client")
        }
        let challenge = try await authorized(
            "POST", "/v1/challenges", WireChallengeRequest(purpose: .stepUp, deviceID: deviceID), as: WireChallenge.self)
        let signature = try await sign(challenge, with: key)
        let response = try await authorized(
            "POST", "/v1/challenges/\(challenge.challengeID)/verify", WireStepUpRequest(signature: signature), as: WireTokenResponse.self)
        guard var stored = current() else { throw LatchkeyError(.notSignedIn, "the session ended during the step-up") }
        stored.session = Session(response, now: configuration.now())
        remember(stored)
        hub.send(.signedIn(stored.session))
        return stored.session
    }

    /// Starts TOTP enrolment; confirm with the first code through ``confirmTOTP(code:)``.
    public func enrollTOTP() async throws -> TOTPEnrollment {
        let enrollment = try await authorized("POST", "/v1/totp", as: WireTOTPEnrollment.self)
        return TOTPEnrollment(secret: enrollment.secret, otpauthURI: enrollment.otpauthURI)
    }

    /// Confirms TOTP enrolment with a current code.
    ///
    /// - Returns: The ten recovery codes, shown once.
    public func confirmTOTP(code: String) async throws -> [String] {
        try await authorized("POST", "/v1/totp/confirm", WireTOTPConfirmation(code: code), as: WireRecoveryCodes.self).recoveryCodes
    }

    // MARK: Launch

    /// The launch-time check (Apple's "Check credential state on every app launch"): Apple's
    /// credential state for the stored Apple user, then the server.
    ///
    /// `.revoked` and `.notFound` end the session (here and at the server); `.transferred` ends
    /// it so the user signs in with Apple again and the server links the account through
    /// `transfer_sub`; `.authorized` (or a session without Apple) asks the server when the
    /// access token is due for refresh. When Apple or the server cannot be reached the cached
    /// session is kept: ``LaunchOutcome/offline(_:)``.
    public func restore(appleState: any AppleCredentialStateSource) async -> LaunchOutcome {
        guard let stored = current() else { return .signedOut(nil) }
        var state: Result<AppleCredentialState, any Error>?
        if let appleUserID = stored.appleUserID {
            do {
                state = .success(try await appleState.state(forUserID: appleUserID))
            } catch {
                state = .failure(error)
            }
        }
        switch LaunchCheck.appleStep(state) {
        case .offline:
            return .offline(stored.session)
        case .signOut(let reason):
            await revokeAtServer()
            end(reason)
            return .signedOut(reason)
        case .checkServer:
            let server: Result<Session, LatchkeyError>
            do {
                _ = try await accessToken(minTTL: configuration.refreshLeeway)
                server = current().map { .success($0.session) } ?? .failure(LatchkeyError(.notSignedIn, "signed out during the check"))
            } catch let error as LatchkeyError {
                server = .failure(error)
            } catch {
                server = .failure(LatchkeyError(.network, "the server could not be asked"))
            }
            return LaunchCheck.outcome(server: server, stored: stored.session)
        }
    }

    // MARK: Internals

    /// Sends an event on every stream (the Apple glue's app lock sends `.locked` / `.unlocked`).
    nonisolated func send(_ event: AuthEvent) {
        hub.send(event)
    }

    /// The session, reading the store if it could not be read before, and writing a session the
    /// store refused earlier.
    func current() -> StoredSession? {
        if !loaded, let stored = try? Optional(configuration.store.load()) {
            cached = stored
            loaded = true
            hub.setCurrent(stored?.session)
        }
        if unsaved, let cached, (try? configuration.store.save(cached)) != nil { unsaved = false }
        return cached
    }

    /// Keeps `stored` here and in the store; a store that refuses (locked) is written later.
    private func remember(_ stored: StoredSession) {
        cached = stored
        do {
            try configuration.store.save(stored)
            unsaved = false
            loaded = true
        } catch {
            unsaved = true
        }
    }

    /// Keeps the server's newer view of the signed-in user with the session and announces it as
    /// ``AuthEvent/userUpdated(_:)``; a user other than the session's is not this client's concern.
    func userChanged(_ user: Account.User) {
        guard var stored = current(), stored.session.user.id == user.id, stored.session.user != user else { return }
        stored.session.user = user
        remember(stored)
        hub.send(.userUpdated(user))
    }

    /// Ends the session here: forgets it, deletes it from the store, tells every stream.
    private func end(_ reason: SignOutReason) {
        cached = nil
        unsaved = false
        loaded = (try? configuration.store.delete()) != nil
        hub.send(.signedOut(reason))
    }

    /// Best effort: revokes the stored refresh token at the server (RFC 7009).
    private func revokeAtServer() async {
        guard let token = cached?.session.refreshToken else { return }
        _ = try? await api.send("POST", "/v1/revoke", body: WireRevokeRequest(token: token, tokenTypeHint: "refresh_token"))
    }

    /// A first factor's call: the session (stored and announced), or the second factor the
    /// server's `mfa_required` answer asks for.
    func firstFactor(_ path: String, _ body: some WireEncodable, appleUserID: String?) async throws -> SignInResult {
        do {
            let response = try await api.call("POST", path, body: body, appCheck: true, as: WireTokenResponse.self)
            return .signedIn(signedIn(response, appleUserID: appleUserID).session)
        } catch let failure as ServerAPI.Failure {
            guard let body = failure.body, body.error == .mfaRequired, let mfaToken = body.mfaToken else { throw failure.error }
            var challenge = MFAChallenge(mfaToken: mfaToken, factors: (body.factors ?? []).compactMap(SecondFactor.init))
            challenge.appleUserID = appleUserID
            return .secondFactorRequired(challenge)
        }
    }

    /// Stores the session a sign-in answered and announces it.
    private func signedIn(_ response: WireTokenResponse, appleUserID: String?) -> StoredSession {
        signedIn(Session(response, now: configuration.now()), appleUserID: appleUserID)
    }

    /// Stores a new session of a sign-in (keeping the device keys of the same user) and announces
    /// it as ``AuthEvent/signedIn(_:)``.
    func signedIn(_ session: Session, appleUserID: String?) -> StoredSession {
        let previous = current()
        let keys = previous?.session.user.id == session.user.id ? previous?.deviceKeyIDs ?? [:] : [:]
        let stored = StoredSession(session: session, appleUserID: appleUserID, deviceKeyIDs: keys)
        remember(stored)
        hub.send(.signedIn(session))
        return stored
    }

    /// A call without a bearer token; error answers become ``LatchkeyError``.
    func call<Model: WireDecodable>(
        _ method: String, _ path: String, _ body: (any WireEncodable)? = nil, as type: Model.Type
    ) async throws -> Model {
        do {
            return try await api.call(method, path, body: body, as: type)
        } catch let failure as ServerAPI.Failure {
            throw failure.error
        }
    }

    /// A call with the access token; a 401 `invalid_token` refreshes once and retries, so a
    /// session revoked meanwhile is found out through the refresh's definite answer.
    func authorized<Model: WireDecodable>(
        _ method: String, _ path: String, _ body: (any WireEncodable)? = nil, as type: Model.Type
    ) async throws -> Model {
        let answer = try await authorizedSend(method, path, body)
        do {
            return try Model(parsing: Array(answer.body))
        } catch {
            throw LatchkeyError(.invalidResponse, "\(path) answered a body the wire contract does not describe: \(error)")
        }
    }

    func authorizedSend(_ method: String, _ path: String, _ body: (any WireEncodable)? = nil) async throws -> ServerAPI.Answer {
        var token = try await accessToken(minTTL: configuration.refreshLeeway)
        for attempt in 0..<2 {
            do {
                return try await api.send(method, path, body: body, bearer: token)
            } catch let failure as ServerAPI.Failure {
                guard attempt == 0, failure.status == 401, failure.body?.error == .invalidToken, let stored = current() else {
                    throw failure.error
                }
                // A token refreshed meanwhile is tried as it is; the one that was refused is refreshed.
                token =
                    stored.session.accessToken == token
                    ? try await refresh(due: stored.session.refreshToken).session.accessToken : stored.session.accessToken
            }
        }
        throw LatchkeyError(.invalidResponse, "unreachable")
    }

    private func sign(_ challenge: WireChallenge, with key: any DeviceKey) async throws -> String {
        guard let bytes = Base64URL.decode(challenge.challenge) else {
            throw LatchkeyError(.invalidResponse, "the challenge is not base64url")
        }
        return Base64URL.encode(try await key.sign(bytes))
    }

    // MARK: Refresh

    /// Single flight: every caller while a refresh runs waits for that one.
    private func refresh(due: String) async throws -> StoredSession {
        if let inFlight { return try await inFlight.value }
        let task = Task { try await self.performRefresh(due: due) }
        inFlight = task
        defer { inFlight = nil }
        return try await task.value
    }

    private func performRefresh(due: String) async throws -> StoredSession {
        switch configuration.coordination {
        case .inProcess:
            return try await refreshHoldingLock(due: due, shared: false)
        case .shared(let lockFile):
            let lock = try await FileLock(url: lockFile)
            defer { lock.unlock() }
            return try await refreshHoldingLock(due: due, shared: true)
        }
    }

    private func refreshHoldingLock(due: String, shared: Bool) async throws -> StoredSession {
        // Re-read: a sibling (another process, or another client on the same store) may have
        // rotated the token while this one waited for the lock.
        let stored: StoredSession?
        do {
            stored = try configuration.store.load()
        } catch {
            // Shared: another process may have rotated the token, and presenting it blind could
            // be reuse. In process, this client's own copy is the newest there is.
            if shared { throw error }
            stored = cached
        }
        switch SessionMachine.lockedStep(due: due, stored: unsaved ? cached : stored) {
        case .signedOut:
            end(.userInitiated)
            throw LatchkeyError(.notSignedIn, "the session was signed out elsewhere", signOutReason: .userInitiated)
        case .adopt(let sibling):
            cached = sibling
            loaded = true
            hub.send(.tokenRefreshed(sibling.session))
            return sibling
        case .present(let token):
            let response: WireTokenResponse
            do {
                response = try await api.call(
                    "POST", "/v1/token", body: WireRefreshRequest(refreshToken: token), appCheck: true, as: WireTokenResponse.self)
            } catch let failure as ServerAPI.Failure {
                var error = failure.error
                switch SessionMachine.verdict(status: failure.status, serverCode: failure.body?.error.rawValue, reason: failure.body?.reason) {
                case .keep:
                    throw error
                case .signOut(let reason):
                    error.code = .sessionEnded
                    error.signOutReason = reason
                    end(reason)
                    throw error
                case .reusedUnlessSiblingRotated:
                    let now = try? configuration.store.load()
                    guard let reason = SessionMachine.reusedVerdict(presented: token, stored: now) else {
                        let sibling = now!
                        cached = sibling
                        hub.send(.tokenRefreshed(sibling.session))
                        return sibling
                    }
                    error.code = .sessionEnded
                    error.signOutReason = reason
                    end(reason)
                    throw error
                }
            }
            var next = (unsaved ? cached : stored) ?? StoredSession(session: Session(response, now: configuration.now()))
            next.session = Session(response, now: configuration.now())
            remember(next)
            hub.send(.tokenRefreshed(next.session))
            return next
        }
    }
}
