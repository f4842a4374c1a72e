import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// A real full disk under a running server: the database lives on a small tmpfs of its own,
/// which the test fills to the last byte and then empties again.
@Suite("Storage failures")
struct StorageFailureTests {
    @Test("S28: a full disk answers 503 unavailable with Retry-After, logs the failure, makes /readyz 503, keeps no half-written rows, and recovers when space returns")
    func s28FullDisk() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-full-\(UUID())")
        let disk = directory.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // 4 MiB: room for the schema and a few sessions, small enough to fill in a moment.
        let mount = try Subprocess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=4m", "tmpfs", disk.path])
        try #require(mount.status == 0, "this test mounts a tmpfs and needs root: \(mount.error)")
        defer { _ = try? Subprocess.run(URL(fileURLWithPath: "/bin/umount"), ["-l", disk.path]) }

        let databasePath = disk.appendingPathComponent("latchkey.sqlite").path
        let configFile = directory.appendingPathComponent("latchkey.json")
        try Data(#"{"database":"sqlite:\#(databasePath)","master_key_file":"\#(directory.path)/master.key","dev":true,"listen":"127.0.0.1:0"}"#.utf8)
            .write(to: configFile)
        let server = try await ServerProcess.start(["serve", "--config", configFile.path], in: directory)
        defer { server.stop(SIGKILL) }
        let client = Client(baseURL: server.baseURL)

        let before = try await client.post("/v1/auth/password/signup", ["username": "before@example.com", "password": "correct horse battery"])
        try #require(before.status == 201, "\(before.text)")
        let refreshToken = try before.tokens.refreshToken
        #expect(try await client.get("/readyz").status == 200)

        // Fill the disk: whatever room is left goes to a filler file, to the last block.
        let filler = disk.appendingPathComponent("filler")
        let fill = try Subprocess.run(URL(fileURLWithPath: "/bin/dd"), ["if=/dev/zero", "of=\(filler.path)", "bs=4096"])
        try #require(fill.error.contains("No space left on device"), "dd should have filled the disk: \(fill.error)")

        // A refresh grant rotates the token (an update, a tombstone, an audit row), a sign-up
        // creates a user: neither fits, and both are refused whole.
        let refused = try await client.post("/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(refreshToken)])
        #expect(refused.status == 503)
        #expect(try refused.wireError.error == .unavailable)
        #expect(refused.headers["Retry-After"] == "5")
        let signUp = try await client.post("/v1/auth/password/signup", ["username": "during@example.com", "password": "correct horse battery"])
        #expect(signUp.status == 503)
        #expect(try signUp.wireError.error == .unavailable)
        #expect(signUp.headers["Retry-After"] == "5")
        // Sign in with Apple (the server's own sandbox Apple) cannot store its account either,
        // and says when to come back as every other write does.
        let nonce = AppleFlow.nonce()
        let credential = try await client.post("/sandbox/apple/authorize", ["nonce": .string(nonce.hashed), "email": "apple@example.com"]).json
        let apple = try await client.post("/v1/auth/apple", [
            "identity_token": credential["identity_token"] ?? .null, "authorization_code": credential["authorization_code"] ?? .null,
            "nonce": .string(nonce.raw),
        ])
        #expect(apple.status == 503, "\(apple.text)")
        #expect(try apple.wireError.error == .unavailable)
        #expect(apple.headers["Retry-After"] == "5")

        let notReady = try await client.get("/readyz")
        #expect(notReady.status == 503)
        #expect(try notReady.wireError.error == .notReady)
        #expect(notReady.headers["Retry-After"] != nil)
        // One error line for the outage, naming SQLite's reason, and no line per failed write.
        let failing = server.errors.split(separator: "\n").filter { $0.contains(#""event":"storage_writes_failing""#) }
        #expect(failing.count == 1, "\(server.errors)")
        #expect(failing.first?.contains("database or disk is full") == true, "\(failing)")
        #expect(failing.first?.contains(#""level":"error""#) == true)
        #expect(!server.errors.contains(refreshToken), "the token never reaches the log")
        // Still full: readiness's own write probe fails too.
        #expect(try await client.get("/readyz").status == 503)

        // Space returns: ready again without any client write, and the refused requests now
        // succeed, which they could not if half of them had stayed behind.
        try FileManager.default.removeItem(at: filler)
        let ready = try await client.get("/readyz")
        #expect(ready.status == 200, "\(ready.text)")
        #expect(server.errors.contains(#""event":"storage_writes_recovered""#), "\(server.errors)")
        let refreshed = try await client.post("/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(refreshToken)])
        #expect(refreshed.status == 200, "the token the failed rotation left is still the live one: \(refreshed.text)")
        let signUpAgain = try await client.post("/v1/auth/password/signup", ["username": "during@example.com", "password": "correct horse battery"])
        #expect(signUpAgain.status == 201, "no user row was left by the refused sign-up: \(signUpAgain.text)")

        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 30) == 0)
        let database = try SQLiteDatabase(configuration: .init(path: databasePath))
        #expect(try await database.integrityCheck())
        let counts = try await database.read { connection in
            (
                users: try connection.queryOne("SELECT count(*) AS n FROM users", [])?.int("n"),
                live: try connection.queryOne("SELECT count(*) AS n FROM refresh_tokens WHERE retired_at IS NULL", [])?.int("n"),
                rotated: try connection.queryOne("SELECT count(*) AS n FROM audit_log WHERE event = 'session.refreshed'", [])?.int("n"),
                signUps: try connection.queryOne("SELECT count(*) AS n FROM audit_log WHERE event = 'password.signup'", [])?.int("n")
            )
        }
        await database.close()
        #expect(counts.users == 2, "the refused Apple sign-in left no user")
        #expect(counts.live == 2, "one live refresh token per session")
        #expect(counts.signUps == 2, "the refused sign-up left no audit entry")
        #expect(counts.rotated == 1, "the refused rotation left no audit entry")
    }

    @Test("S28: every 503 carries Retry-After: a refusal for storage or capacity that names no time of its own gets the storage failure's 5 s, one that names a time keeps it")
    func s28EveryUnavailableSaysWhenToComeBack() throws {
        for code in [AuthError.Code.unavailable, .overloaded, .appleUnavailable] {
            let response = AuthError(code, "the store refused the write").response
            #expect(response.status == 503, "\(code)")
            #expect(response.headers["Retry-After"] == "5", "\(code)")
            #expect(try WireErrorBody(parsing: response.body).error.rawValue == code.rawValue)
        }
        #expect(AuthError(.unavailable, "another sign-in is under way", retryAfter: 1).response.headers["Retry-After"] == "1")
        #expect(AuthError.rateLimited(retryAfter: 60).response.headers["Retry-After"] == "60")
        #expect(AuthError.invalidRequest("no").response.headers["Retry-After"] == nil)
    }

    /// Plain requests to a server in another process, with the response headers.
    struct Client {
        let baseURL: String

        func get(_ path: String, headers: [String: String] = [:]) async throws -> TestResponse {
            var request = URLRequest(url: URL(string: baseURL + path)!)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            return try await send(request)
        }

        func post(_ path: String, _ json: JSONValue, headers: [String: String] = [:]) async throws -> TestResponse {
            var request = URLRequest(url: URL(string: baseURL + path)!)
            request.httpMethod = "POST"
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.serialized)
            return try await send(request)
        }

        private func send(_ request: URLRequest) async throws -> TestResponse {
            let (data, response) = try await URLSession.shared.data(for: request)
            let http = response as! HTTPURLResponse
            var headers = HTTPHeaders()
            for case (let name as String, let value as String) in http.allHeaderFields { headers.add(name, value) }
            return TestResponse(status: http.statusCode, headers: headers, body: Array(data))
        }
    }
}
