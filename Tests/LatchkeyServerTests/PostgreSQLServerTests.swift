import Foundation
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// Latchkey on PostgreSQL, over HTTP: the server in this process, and the real `latchkey
/// serve` through an outage of the database server (several processes and faults under load:
/// ``PostgreSQLInstancesTests``).
@Suite("PostgreSQL: the server over HTTP")
struct PostgreSQLServerTests {
    /// A new, empty database in `cluster`, dropped when `body` ends.
    static func withDatabase<T>(in cluster: PostgreSQLCluster, _ body: (String) async throws -> T) async throws -> T {
        let name = "server_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try cluster.createDatabase(name)
        defer { try? cluster.dropDatabase(name) }
        return try await body(cluster.url(database: name))
    }

    @Test("the database setting takes postgres:// and postgresql:// URLs; a password comes from the URL, a file or the environment, never two")
    func configuration() throws {
        let url = "postgresql://latchkey@db.internal:5433/latchkey?sslmode=verify-full"
        let loaded = try ConfigurationLoader.load(
            file: nil, environment: ["LATCHKEY_DATABASE": url, "LATCHKEY_DATABASE_PASSWORD": "s3cret", "LATCHKEY_DATABASE_POOL_SIZE": "16"])
        #expect(loaded.usesPostgreSQL && loaded.databasePassword == "s3cret" && loaded.databasePoolSize == 16)
        #expect(loaded.databasePoolTimeout == 2 && loaded.databaseStatementTimeout == 5)
        let withPassword = "postgres://latchkey:hunter2@db.internal/latchkey"
        #expect(try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_DATABASE": withPassword]).databaseForDisplay
            == "postgres://latchkey:***@db.internal/latchkey")
        func problems(_ environment: [String: String]) -> [String] {
            do {
                _ = try ConfigurationLoader.load(file: nil, environment: environment)
                return []
            } catch {
                return error.problems
            }
        }
        let twice = problems(["LATCHKEY_DATABASE": withPassword, "LATCHKEY_DATABASE_PASSWORD": "other"])
        #expect(twice.count == 1 && twice[0].hasPrefix("database: the URL holds a password"))
        #expect(!twice.joined().contains("hunter2") && !twice.joined().contains("other"))
        #expect(problems(["LATCHKEY_DATABASE": "postgres://u@h:0/db"]).first?.hasPrefix("database: PostgreSQL URL: the port") == true)
        #expect(problems(["LATCHKEY_DATABASE": "mysql://u@h/db"]).first?.hasPrefix("database: must be sqlite:PATH or postgres://") == true)
        #expect(problems(["LATCHKEY_DATABASE": url, "LATCHKEY_DATABASE_PASSWORD_FILE": "/nonexistent/password"])
            == ["database_password_file: /nonexistent/password cannot be read"])
        #expect(problems(["LATCHKEY_DATABASE_POOL_SIZE": "0"]) == ["LATCHKEY_DATABASE_POOL_SIZE: must be between 1 and 500"])
    }

    @Test("sign-up, log-in and refresh on PostgreSQL; of 20 concurrent refreshes of one token exactly one succeeds")
    func signUpLogInRefresh() async throws {
        let cluster = try PostgreSQLCluster.shared()
        try await Self.withDatabase(in: cluster) { url in
            try await TestServer.with({
                $0.database = url
                $0.databasePasswordFile = cluster.passwordFile
                // Exactly one winner is the compare-and-set itself, without the reuse grace.
                $0.refreshTokenReuseGrace = 0
            }) { server in
                #expect(server.database.dialect == .postgreSQL)
                let signUp = try await PasswordAccountTests.signUp(server, "ada@example.com", "correct horse battery")
                #expect(signUp.status == 201, "\(signUp.text)")
                let userID = try #require(try signUp.json["user"]?["id"]?.stringValue)

                let login = try await PasswordAccountTests.logIn(server, "ADA@example.com", "correct horse battery")
                #expect(login.status == 200, "\(login.text)")
                #expect(try login.json["user"]?["id"]?.stringValue == userID)
                #expect(try await PasswordAccountTests.logIn(server, "ada@example.com", "wrong horse battery").status == 401)

                let first = try #require(try login.json["refresh_token"]?.stringValue)
                let refreshed = try await SessionTests.refresh(server, first)
                #expect(refreshed.status == 200, "\(refreshed.text)")
                let second = try #require(try refreshed.json["refresh_token"]?.stringValue)
                #expect(second != first)
                let me = try await server.request(.get, "/v1/me", headers: try PasswordAccountTests.bearer(refreshed))
                #expect(me.status == 200)
                #expect(try me.json["username"] == "ada@example.com")

                // Rotation is a compare-and-set on PostgreSQL too: one winner.
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<20 { group.addTask { try await SessionTests.refresh(server, second).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses.sorted())")
                #expect(statuses.allSatisfy { $0 == 200 || $0 == 400 }, "no 5xx: \(statuses.sorted())")

                // What the server wrote is in PostgreSQL, with its audit trail.
                let rows = try await server.database.read { connection in
                    try connection.queryOne("SELECT count(*) AS n FROM password_credentials WHERE user_id = ?", [.text(userID)])?.int("n")
                }
                #expect(rows == 1)
                let events = try await AuditLog(database: server.database).entries(userID: userID, limit: 100).map(\.event.rawValue)
                #expect(events.contains("password.signup"), "\(events)")
            }
        }
    }

    @Test("S8 on PostgreSQL: with the reuse grace, 20 concurrent refreshes of one token rotate it once and every answer carries its one successor")
    func reuseGraceOnPostgreSQL() async throws {
        let cluster = try PostgreSQLCluster.shared()
        try await Self.withDatabase(in: cluster) { url in
            try await TestServer.with({
                $0.database = url
                $0.databasePasswordFile = cluster.passwordFile
            }) { server in
                let signUp = try await PasswordAccountTests.signUp(server, "ada@example.com", "correct horse battery")
                let tokens = try signUp.tokens
                let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                    for _ in 0..<20 { group.addTask { try await SessionTests.refresh(server, tokens.refreshToken) } }
                    return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
                }
                #expect(answers.map(\.status) == Array(repeating: 200, count: 20), "\(answers.map(\.status))")
                #expect(Set(try answers.map { try $0.tokens.refreshToken }).count == 1)
                let live = try await server.database.read { connection in
                    try connection.queryOne(
                        "SELECT count(*) AS n FROM refresh_tokens WHERE session_id = ? AND retired_at IS NULL", [.text(tokens.sessionID)])?.int("n")
                }
                #expect(live == 1)
            }
        }
    }

    @Test("latchkey serve on PostgreSQL: while the database is down /readyz and requests answer 503 with Retry-After, never 500; service returns by itself")
    func outage() async throws {
        let cluster = try PostgreSQLCluster.start()
        defer { try? cluster.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = directory.url.appendingPathComponent("latchkey.json")
        let settings: JSONValue = [
            "database": .string(cluster.url), "master_key_file": .string(directory.file("master.key")), "dev": true,
            "listen": "127.0.0.1:0", "database_statement_timeout": 2,
        ]
        try Data(settings.serialized).write(to: config)
        // The password from the environment, never in the file or the URL.
        let server = try await ServerProcess.start(
            ["serve", "--config", config.path], in: directory.url, environment: ["LATCHKEY_DATABASE_PASSWORD": cluster.password])
        defer { server.stop(SIGKILL) }
        #expect(server.banner.contains(cluster.url))
        #expect(!server.banner.contains(cluster.password))
        let client = StorageFailureTests.Client(baseURL: server.baseURL)

        let signUp = try await client.post("/v1/auth/password/signup", ["username": "grace@example.com", "password": "correct horse battery"])
        try #require(signUp.status == 201, "\(signUp.text)")
        var token = try #require(try signUp.json["refresh_token"]?.stringValue)
        #expect(try await client.get("/readyz").status == 200)

        try cluster.down()
        let ready = try await client.get("/readyz")
        #expect(ready.status == 503)
        for _ in 0..<3 {
            let started = Date()
            let refused = try await client.post("/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(token)])
            #expect(refused.status == 503, "\(refused.text)")
            #expect(try refused.json["error"] == "unavailable")
            #expect(refused.headers["Retry-After"] != nil)
            #expect(Date().timeIntervalSince(started) < 3, "answered promptly, not after a hang")
        }
        let login = try await client.post("/v1/auth/password/login", ["username": "grace@example.com", "password": "correct horse battery"])
        #expect(login.status == 503, "\(login.text)")

        try cluster.up()
        let back = Date()
        var recovered = false
        while Date().timeIntervalSince(back) < 10 {
            if try await client.get("/readyz").status == 200 {
                recovered = true
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(recovered, "ready again within 10 s")
        let refreshed = try await client.post("/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(token)])
        #expect(refreshed.status == 200, "the token refused during the outage was not spent: \(refreshed.text)")
        token = try #require(try refreshed.json["refresh_token"]?.stringValue)
        let errors = try String(contentsOf: server.errorLog, encoding: .utf8)
        #expect(!errors.contains("unexpected_error"), "no 500 during the outage")
        #expect(!errors.contains(cluster.password))
    }

    @Test("S10 on PostgreSQL: a key rotated through one instance is in the other's JWKS within 2 s (NOTIFY/LISTEN), and after the listener's connection is cut")
    func rotationReachesOtherInstance() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let shared = try TemporaryDirectory()
        defer { shared.remove() }
        try await Self.withDatabase(in: cluster) { url in
            let configure = { (configuration: inout Configuration) in
                configuration.database = url
                configuration.databasePasswordFile = cluster.passwordFile
                configuration.masterKeyFile = shared.file("master.key")
            }
            try await TestServer.with(configure) { first in
                try await TestServer.with(configure) { second in
                    // Give the listener a moment to have its LISTEN in place.
                    try await Task.sleep(for: .milliseconds(300))
                    let rotated = try await second.application.signingKeys.rotate(activationDelay: 900, now: second.clock.now)
                    let published = try await eventually(within: .seconds(2)) {
                        try await first.request(.get, "/.well-known/jwks.json").text.contains(rotated.id)
                    }
                    #expect(published, "the rotated key is in the other instance's JWKS within 2 s")

                    // Cut every other session of this database (the listener's among them): it
                    // connects again and still hears the next rotation.
                    let name = try #require(url.split(separator: "/").last)
                    try cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")
                    try await Task.sleep(for: .milliseconds(1500))
                    let again = try await second.application.signingKeys.rotate(activationDelay: 900, now: second.clock.now.addingTimeInterval(1))
                    let republished = try await eventually(within: .seconds(3)) {
                        try await first.request(.get, "/.well-known/jwks.json").text.contains(again.id)
                    }
                    #expect(republished, "the listener reconnects and hears the next rotation")
                }
            }
        }
    }
}
