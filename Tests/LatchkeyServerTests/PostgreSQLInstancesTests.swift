import Foundation
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyTestSupport
import LatchkeyWire
import Synchronization
import Testing

/// Several real `latchkey serve` processes on one PostgreSQL database, and faults under load:
/// an instance killed with SIGKILL, the database server restarted.
@Suite("PostgreSQL: several server processes, and faults under load")
struct PostgreSQLInstancesTests {
    typealias Client = StorageFailureTests.Client

    /// `latchkey serve` on `database` (a URL of `cluster`), in a directory of its own under
    /// `directory`, with the master key and public URL every instance shares (as behind a load
    /// balancer: access tokens name it as `iss`), the password from the environment.
    static func serve(
        _ database: String, cluster: PostgreSQLCluster, in directory: TemporaryDirectory, _ settings: [String: JSONValue] = [:]
    ) async throws -> ServerProcess {
        let own = directory.url.appendingPathComponent("instance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        var members: [String: JSONValue] = [
            "database": .string(database), "master_key_file": .string(directory.file("master.key")), "dev": true,
            "listen": "127.0.0.1:0", "public_url": "https://auth.example.test",
        ]
        members.merge(settings) { _, new in new }
        let config = own.appendingPathComponent("latchkey.json")
        try Data(JSONValue.object(members).serialized).write(to: config)
        return try await ServerProcess.start(
            ["serve", "--config", config.path], in: own, environment: ["LATCHKEY_DATABASE_PASSWORD": cluster.password])
    }

    static func signUp(_ client: Client, _ username: String) async throws -> TestResponse {
        try await client.post("/v1/auth/password/signup", ["username": .string(username), "password": "correct horse battery"])
    }

    static func logIn(_ client: Client, _ username: String) async throws -> TestResponse {
        try await client.post("/v1/auth/password/login", ["username": .string(username), "password": "correct horse battery"])
    }

    static func refresh(_ client: Client, _ token: String) async throws -> TestResponse {
        try await client.post("/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(token)])
    }

    /// Without the reuse grace: one 200 of concurrent refreshes is the compare-and-set itself,
    /// and a replay is reuse at once.
    static let withoutGrace: [String: JSONValue] = ["refresh_token_reuse_grace": 0]

    /// Two instances without the reuse grace on a new database of the shared cluster, the
    /// first started first (it migrates and makes the master key); both killed when `body` ends.
    static func withTwoInstances<T>(_ body: (ServerProcess, ServerProcess) async throws -> T) async throws -> T {
        let cluster = try PostgreSQLCluster.shared()
        let directory = try TemporaryDirectory("instances")
        defer { directory.remove() }
        return try await PostgreSQLServerTests.withDatabase(in: cluster) { url in
            let first = try await Self.serve(url, cluster: cluster, in: directory, Self.withoutGrace)
            defer { first.stop(SIGKILL) }
            let second = try await Self.serve(url, cluster: cluster, in: directory, Self.withoutGrace)
            defer { second.stop(SIGKILL) }
            return try await body(first, second)
        }
    }

    @Test("S8 with two latchkey serve processes on one PostgreSQL: a refresh token from one refreshes on the other, 60 concurrent refreshes of one token split across both give exactly one 200, reuse detected on one revokes the family on the other, a logout on one is refused by the other within 2 s")
    func twoInstances() async throws {
        try await Self.withTwoInstances { first, second in
            let (a, b) = (Client(baseURL: first.baseURL), Client(baseURL: second.baseURL))

            let signUp = try await Self.signUp(a, "ada@example.com")
            try #require(signUp.status == 201, "\(signUp.text)")
            let onSecond = try await Self.refresh(b, try signUp.tokens.refreshToken)
            try #require(onSecond.status == 200, "a token issued by one instance refreshes on the other: \(onSecond.text)")
            let token = try onSecond.tokens.refreshToken

            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<60 { group.addTask { try await Self.refresh(index % 2 == 0 ? a : b, token) } }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == 200 }.count == 1, "\(answers.map(\.status).sorted())")
            for refused in answers where refused.status != 200 {
                #expect(refused.status == 400 && (try? refused.wireError.error) == .invalidGrant, "\(refused.status): \(refused.text)")
            }

            // Reuse detected on the second revokes the session the first rotated.
            let login = try await Self.logIn(b, "ada@example.com")
            try #require(login.status == 200, "\(login.text)")
            let original = try login.tokens.refreshToken
            let rotated = try await Self.refresh(a, original)
            try #require(rotated.status == 200, "\(rotated.text)")
            let replay = try await Self.refresh(b, original)
            #expect(replay.status == 400 && (try? replay.wireError.grantFailure) == .reused, "\(replay.text)")
            let successor = try await Self.refresh(a, try rotated.tokens.refreshToken)
            #expect(successor.status == 400 && (try? successor.wireError.error) == .invalidGrant, "the family is revoked: \(successor.text)")
            let rotatedBearer = try rotated.bearer
            #expect(try await eventually(within: .seconds(2)) {
                try await a.get("/v1/me", headers: rotatedBearer).status == 401
            }, "the revoked family's access token is refused by the first within 2 s")

            // A logout on the first is refused by the second within 2 s, and its refresh token too.
            let third = try await Self.logIn(a, "ada@example.com")
            try #require(third.status == 200, "\(third.text)")
            let bearer = try third.bearer
            #expect(try await b.get("/v1/me", headers: bearer).status == 200, "the second holds the session as live")
            #expect(try await a.post("/v1/logout", ["all": false], headers: bearer).status == 204)
            let started = ContinuousClock.now
            let refused = try await eventually(within: .seconds(2)) {
                try await b.get("/v1/me", headers: bearer).status == 401
            }
            #expect(refused, "a bearer logged out on one instance is refused by the other within 2 s")
            #expect(ContinuousClock.now - started < .seconds(2.5))
            let afterLogout = try await Self.refresh(b, try third.tokens.refreshToken)
            #expect(afterLogout.status == 400 && (try? afterLogout.wireError.grantFailure) == .revoked, "\(afterLogout.text)")
        }
    }

    /// What one load worker had acknowledged: a sign-up answered 201 and the refresh tokens of its
    /// session, each answered 200, oldest first.
    struct Acknowledged: Sendable {
        var username: String
        var tokens: [String]
    }

    @Test("kill -9 of one instance under load loses nothing it acknowledged: every sign-up it answered 201 logs in on the other, every rotation it answered 200 left the old token spent and the new one known")
    func killNineLosesNothingAcknowledged() async throws {
        try await Self.withTwoInstances { victim, survivor in
            let (a, b) = (Client(baseURL: victim.baseURL), Client(baseURL: survivor.baseURL))

            // Workers sign up and refresh against the victim until it dies under them; each keeps
            // only what the victim answered with success.
            let signedUp = Counter()
            let rotated = Counter()
            let acknowledged = try await withThrowingTaskGroup(of: [Acknowledged].self) { group in
                for worker in 0..<6 {
                    group.addTask {
                        var done: [Acknowledged] = []
                        do {
                            for account in 0... {
                                let username = "w\(worker)-\(account)@example.com"
                                let signUp = try await Self.signUp(a, username)
                                guard signUp.status == 201 else { continue }
                                done.append(Acknowledged(username: username, tokens: [try signUp.tokens.refreshToken]))
                                signedUp.add()
                                for _ in 0..<8 {
                                    let refreshed = try await Self.refresh(a, done[done.count - 1].tokens.last!)
                                    guard refreshed.status == 200 else { break }
                                    done[done.count - 1].tokens.append(try refreshed.tokens.refreshToken)
                                    rotated.add()
                                }
                            }
                        } catch {
                            // The victim is gone: the request in flight was never answered.
                        }
                        return done
                    }
                }
                group.addTask {
                    // The kill comes once the load has done a good deal more than the minimum
                    // checked below (at most 30 s); it used to come after a fixed 4 s.
                    _ = try await eventually(within: .seconds(30)) {
                        signedUp.value >= 12 && rotated.value >= 40
                    }
                    victim.send(SIGKILL)
                    return []
                }
                return try await group.reduce(into: [Acknowledged]()) { $0 += $1 }
            }
            #expect(await victim.waitForExit(timeout: 10) != nil)
            let rotations = acknowledged.map { $0.tokens.count - 1 }.reduce(0, +)
            try #require(acknowledged.count >= 6 && rotations >= 20, "enough load before the kill: \(acknowledged.count) sign-ups, \(rotations) rotations")

            for account in acknowledged {
                let login = try await Self.logIn(b, account.username)
                #expect(login.status == 200, "\(account.username), acknowledged by the killed instance, logs in on the other: \(login.text)")
                // The last acknowledged token is known: live, or spent by a rotation the victim
                // committed but never answered. Never unknown.
                let last = try await Self.refresh(b, account.tokens.last!)
                #expect(last.status == 200 || (try? last.wireError.grantFailure) == .reused, "\(account.username): \(last.text)")
                // The one before it was spent by an acknowledged rotation.
                if account.tokens.count >= 2 {
                    let spent = try await Self.refresh(b, account.tokens[account.tokens.count - 2])
                    #expect(spent.status == 400 && (try? spent.wireError.grantFailure) != .unknown, "\(account.username): \(spent.text)")
                }
            }
        }
    }

    /// One answer seen under load.
    struct Observation: Sendable {
        var status: Int
        var retryAfter: Bool
        var seconds: Double
        var at: ContinuousClock.Instant
    }

    @Test("a PostgreSQL restart under load: every answer is 200 or 503 with Retry-After, none slower than the request deadline, and service returns within seconds")
    func restartUnderLoad() async throws {
        let cluster = try PostgreSQLCluster.start()
        defer { try? cluster.stop() }
        let directory = try TemporaryDirectory("pg-restart")
        defer { directory.remove() }
        // The deadline of a request on a lost database: the statement timeout (2 s), the driver's
        // 2 s on top for the answer, the connect timeout (2 s) for a new connection.
        let server = try await Self.serve(cluster.url, cluster: cluster, in: directory, ["database_statement_timeout": 2])
        defer { server.stop(SIGKILL) }
        let client = Client(baseURL: server.baseURL)
        var accounts: [(refresh: String, bearer: [String: String])] = []
        for index in 0..<6 {
            let signUp = try await Self.signUp(client, "load\(index)@example.com")
            try #require(signUp.status == 201, "\(signUp.text)")
            accounts.append((try signUp.tokens.refreshToken, try signUp.bearer))
        }

        let stop = Flag()
        let seeded = accounts
        let load = Task {
            try await withThrowingTaskGroup(of: [Observation].self) { group in
                for account in seeded {
                    group.addTask {
                        var seen: [Observation] = []
                        var (token, bearer) = account
                        while !stop.isSet {
                            // A refresh (a write) and a bearer call (a read), in turn. A 503 keeps
                            // the token: if its rotation committed unanswered, the reuse grace
                            // hands the same successor to the retry.
                            let started = ContinuousClock.now
                            let refreshed = try await Self.refresh(client, token)
                            seen.append(Self.observe(refreshed, since: started))
                            if refreshed.status == 200 {
                                token = try refreshed.tokens.refreshToken
                                bearer = try refreshed.bearer
                            }
                            let asked = ContinuousClock.now
                            seen.append(Self.observe(try await client.get("/v1/me", headers: bearer), since: asked))
                        }
                        return seen
                    }
                }
                return try await group.reduce(into: [Observation]()) { $0 += $1 }
            }
        }
        try await Task.sleep(for: .seconds(1))
        try cluster.down()
        try await Task.sleep(for: .seconds(2))
        try cluster.up()
        let up = ContinuousClock.now
        try await Task.sleep(for: .seconds(8))
        stop.set()
        let seen = try await load.value

        let statuses = Dictionary(grouping: seen, by: \.status).mapValues(\.count)
        #expect(Set(statuses.keys).isSubset(of: [200, 503]), "only 200 and 503: \(statuses)")
        #expect(seen.filter { $0.status == 503 && !$0.retryAfter }.isEmpty, "every 503 carries Retry-After")
        #expect((statuses[503] ?? 0) > 0, "the restart was felt: \(statuses)")
        let slowest = seen.map(\.seconds).max() ?? 0
        #expect(slowest < 6.5, "no answer later than the request deadline: \(slowest) s")
        // Service returns within seconds of the database, and stays.
        let firstBack = seen.filter { $0.status == 200 && $0.at > up }.map(\.at).min()
        let recovery = firstBack.map { $0 - up }
        #expect(recovery.map { $0 < .seconds(5) } == true, "served again \(String(describing: recovery)) after the database returned")
        let late = seen.filter { $0.at > up + .seconds(6) }
        #expect(!late.isEmpty && late.allSatisfy { $0.status == 200 }, "all 200 once recovered: \(late.map(\.status))")
        #expect(!server.errors.contains("unexpected_error"), "no 500")
        #expect(!server.errors.contains(cluster.password))
    }

    /// A count the load workers raise and the test reads.
    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }

    /// A flag the test sets once for the load workers to stop.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    static func observe(_ response: TestResponse, since started: ContinuousClock.Instant) -> Observation {
        let now = ContinuousClock.now
        let elapsed = now - started
        return Observation(
            status: response.status, retryAfter: response.headers["Retry-After"] != nil,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, at: now)
    }
}
