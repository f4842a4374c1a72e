import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Synchronization
import Testing

/// A database whose connections run `interleave` once, just before the first statement that
/// contains `trigger`, on the same transaction: as if another server process had committed that
/// write between this request's read and its compare-and-set. SQLite's single writer never
/// interleaves two transactions, so this is how a test reaches the path PostgreSQL's READ
/// COMMITTED takes.
final class InterleavingDatabase: SQLDatabase {
    let base: any SQLDatabase
    let trigger: String
    let interleave: @Sendable (any SQLConnection) throws -> Void
    let fired = Mutex(false)

    init(_ base: any SQLDatabase, before trigger: String, _ interleave: @escaping @Sendable (any SQLConnection) throws -> Void) {
        self.base = base
        self.trigger = trigger
        self.interleave = interleave
    }

    var dialect: SQLDialect { base.dialect }

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await base.read { try body(Connection(base: $0, database: self)) }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await base.write { try body(Connection(base: $0, database: self)) }
    }

    func subscribe(to channel: String, _ onChange: @escaping @Sendable () -> Void) -> SQLChangeSubscription {
        base.subscribe(to: channel, onChange)
    }

    func isHealthy() async -> Bool { await base.isHealthy() }

    func close() async {}

    struct Connection: SQLConnection {
        let base: any SQLConnection
        let database: InterleavingDatabase

        func before(_ sql: String) throws {
            guard sql.contains(database.trigger), database.fired.withLock({ fired in defer { fired = true }; return !fired }) else { return }
            try database.interleave(base)
        }

        func execute(_ sql: String, _ bindings: [SQLValue]) throws -> Int {
            try before(sql)
            return try base.execute(sql, bindings)
        }

        func query(_ sql: String, _ bindings: [SQLValue]) throws -> [SQLRow] {
            try before(sql)
            return try base.query(sql, bindings)
        }

        func queryOne(_ sql: String, _ bindings: [SQLValue]) throws -> SQLRow? {
            try before(sql)
            return try base.queryOne(sql, bindings)
        }
    }
}

/// Each compare-and-set of the second factors loses to a write committed between its read and
/// its update, and the service acts on the `false`: it refuses, and keeps nothing it must not.
@Suite("Second factors act on a lost compare-and-set")
struct FactorCompareAndSetTests {
    /// The server's factor service, over its database with `interleave` run before `trigger`.
    static func factors(_ server: TestServer, before trigger: String, _ interleave: @escaping @Sendable (any SQLConnection) throws -> Void) -> FactorService {
        let database = InterleavingDatabase(server.database, before: trigger, interleave)
        let application = server.application
        let configuration = Configuration()
        let dependencies = Dependencies(database: database, metrics: application.metrics, clock: { server.clock.now })
        let accessTokens = AccessTokens(database: database, keys: application.signingKeys, configuration: configuration)
        let browserSessions = BrowserSessionService(database: database, clock: dependencies.clock)
        let sessions = SessionService(
            dependencies: dependencies, accessTokens: accessTokens, browserSessions: browserSessions, configuration: configuration)
        let signIns = SignInPipeline(dependencies: dependencies, sessions: sessions, browserSessions: browserSessions, accessTokens: accessTokens)
        return FactorService(
            dependencies: dependencies, sessions: sessions, signIns: signIns,
            refreshTokens: RefreshTokens(
                dependencies: dependencies, sessions: sessions, accessTokens: accessTokens,
                dpop: DPoPService(dependencies: dependencies, masterKey: application.masterKey, configuration: configuration),
                masterKey: application.masterKey, configuration: configuration),
            accessTokens: accessTokens,
            passkeys: PasskeyService(
                dependencies: dependencies, sessions: sessions, signIns: signIns, masterKey: application.masterKey, configuration: configuration,
                publicURL: { accessTokens.issuer }),
            masterKey: application.masterKey, failuresPerAccount: 10)
    }

    static func refusal(_ body: () async throws -> some Sendable) async -> AuthError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? AuthError
        }
    }

    @Test("S19: a TOTP step used by another request after this one read the factor is refused as invalid_code and counted")
    func s19TOTPStepTakenMeanwhile() async throws {
        try await TestServer.with { server in
            let (user, _, secret, _) = try await TOTPTests.enrolled(server)
            server.clock.advance(by: 30)
            let step = TOTP.step(at: server.clock.now)
            let (mfaToken, _) = try await MFATests.mfaRequired(server, user)
            let factors = Self.factors(server, before: "UPDATE totp_factors SET last_used_step") { connection in
                try connection.execute("UPDATE totp_factors SET last_used_step = ?", [.integer(step)])
            }
            let refusal = await Self.refusal {
                try await factors.mfaVerify(token: mfaToken, proof: .totp(TOTP.code(secret: secret, step: step)), context: RequestContext())
            }
            #expect(refusal == AuthError.invalidGrant(.invalidCode, "") && refusal?.reason == .invalidCode)
            let failures = try await server.database.read { try $0.queryOne("SELECT failures FROM mfa_tokens", [])?.int("failures") }
            #expect(failures == 1, "the replay counts as a wrong proof")
        }
    }

    @Test("S7: a recovery code spent by another request meanwhile is refused as invalid_code")
    func s7RecoveryCodeSpentMeanwhile() async throws {
        try await TestServer.with { server in
            let (user, _, _, codes) = try await TOTPTests.enrolled(server)
            let (mfaToken, _) = try await MFATests.mfaRequired(server, user)
            let factors = Self.factors(server, before: "UPDATE recovery_codes SET used_at") { connection in
                try connection.execute("UPDATE recovery_codes SET used_at = created_at", [])
            }
            let refusal = await Self.refusal {
                try await factors.mfaVerify(token: mfaToken, proof: .recoveryCode(codes[0]), context: RequestContext())
            }
            #expect(refusal?.code == .invalidGrant && refusal?.reason == .invalidCode)
        }
    }

    @Test("S7: an mfa_token completed by another request meanwhile signs nobody in, and the proof stays unspent")
    func s7MFATokenCompletedMeanwhile() async throws {
        try await TestServer.with { server in
            let (user, _, _, codes) = try await TOTPTests.enrolled(server)
            let (mfaToken, _) = try await MFATests.mfaRequired(server, user)
            let sessionsBefore = try await server.application.services.sessions.sessions(userID: user.id).count
            let factors = Self.factors(server, before: "UPDATE mfa_tokens SET ended_at") { connection in
                try connection.execute("UPDATE mfa_tokens SET ended_at = created_at, ended_reason = 'completed'", [])
            }
            let refusal = await Self.refusal {
                try await factors.mfaVerify(token: mfaToken, proof: .recoveryCode(codes[0]), context: RequestContext())
            }
            #expect(refusal?.code == .invalidGrant && refusal?.reason == .reused)
            let used = try await server.database.read { try $0.query("SELECT used_at FROM recovery_codes WHERE used_at IS NOT NULL", []) }
            #expect(used.isEmpty, "the losing transaction was rolled back")
            #expect(try await server.application.services.sessions.sessions(userID: user.id).count == sessionsBefore)
        }
    }

    @Test("S16: a challenge spent by another request after its signature was checked is refused as reused")
    func s16ChallengeSpentMeanwhile() async throws {
        try await TestServer.with { server in
            let (user, token, device, deviceID) = try await DeviceKeyTests.registered(server)
            let challenge = try await server.request(
                .post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: DeviceKeyTests.bearer(token))
            let (challengeID, signature) = try device.sign(challengeIn: challenge)
            let factors = Self.factors(server, before: "UPDATE challenges SET used_at") { connection in
                try connection.execute("UPDATE challenges SET used_at = created_at", [])
            }
            let principal = Principal(userID: user.id, sessionID: token.session.id, amr: ["pwd"])
            let refusal = await Self.refusal {
                try await factors.stepUp(
                    principal, challengeID: challengeID, signature: try #require(Base64URL.decode(signature)), context: RequestContext())
            }
            #expect(refusal?.code == .invalidGrant && refusal?.reason == .reused)
            let session = try await server.application.services.sessions.session(token.session.id)
            #expect(session?.amr == ["pwd"], "no step-up was recorded")
        }
    }

    @Test("S19: a TOTP set-up confirmed by another request meanwhile is a conflict and issues no recovery codes")
    func s19ConfirmedMeanwhile() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let begin = try await server.request(.post, "/v1/totp", headers: TOTPTests.bearer(token)).decode(WireTOTPEnrollment.self)
            let secret = TOTPTests.base32Decode(begin.secret)
            let factors = Self.factors(server, before: "UPDATE totp_factors SET confirmed_at") { connection in
                try connection.execute("UPDATE totp_factors SET confirmed_at = created_at", [])
            }
            let principal = Principal(userID: user.id, sessionID: token.session.id, amr: ["pwd"])
            let refusal = await Self.refusal {
                try await factors.confirmTOTP(
                    for: principal, code: TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)), context: RequestContext())
            }
            #expect(refusal?.code == .conflict)
            let codes = try await server.database.read { try $0.query("SELECT code_hash FROM recovery_codes", []) }
            #expect(codes.isEmpty)
        }
    }
}
