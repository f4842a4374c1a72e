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

@Suite("Password brute-force limits")
struct PasswordRateLimitTests {
    typealias Account = PasswordAccountTests

    @Test("S14: the 11th failure in 15 minutes on one account gets 429 with Retry-After, audited and counted; back-off doubles")
    func s14AccountLimit() async throws {
        try await TestServer.with { server in
            #expect(try await Account.signUp(server, "ada", "correct horse battery").status == 201)
            for attempt in 1...10 {
                #expect(try await Account.logIn(server, "ada", "guess number \(attempt)").status == 401, "attempt \(attempt)")
            }
            let limited = try await Account.logIn(server, "ADA", "correct horse battery")
            #expect(limited.status == 429, "even the right password waits out the block")
            #expect(limited.headers["Retry-After"] == "60")
            #expect(try limited.wireError.error == .rateLimited)
            #expect(try limited.wireError.retryAfter == 60)
            #expect(server.application.metrics.value(.rateLimitHits, ["scope": "login_account"]) == 1)
            let audited = try #require(try await Account.audit(server, event: "password.login").first)
            #expect(audited.outcome.rawValue == "rate_limited" && audited.userID != nil && audited.details["scope"] == "account")

            // Another account from the same address is not blocked.
            #expect(try await Account.signUp(server, "grace", "another good passphrase").status == 201)
            #expect(try await Account.logIn(server, "grace", "another good passphrase").status == 200)

            // After the block, one more failure blocks twice as long.
            server.clock.advance(by: 61)
            #expect(try await Account.logIn(server, "ada", "guess number 11").status == 401)
            #expect(try await Account.logIn(server, "ada", "correct horse battery").headers["Retry-After"] == "120")

            // Once the window and the block have passed, the right password works and clears the count.
            server.clock.advance(by: 15 * 60)
            #expect(try await Account.logIn(server, "ada", "correct horse battery").status == 200)
            let left = try await server.database.read { try $0.query("SELECT key FROM rate_limits WHERE key LIKE 'login:account:%'") }
            #expect(left.isEmpty)
            let keys = try await server.database.read { try $0.query("SELECT key FROM rate_limits") }.map { try $0.string("key") }
            #expect(keys == ["login:ip:127.0.0.1"], "S26: the username is stored only as a hash")
        }
    }

    @Test("S14: an unknown username is limited exactly like a known one")
    func s14UnknownUser() async throws {
        try await TestServer.with { server in
            for attempt in 1...10 {
                #expect(try await Account.logIn(server, "nobody", "guess number \(attempt)").status == 401)
            }
            let limited = try await Account.logIn(server, "nobody", "guess number 11")
            #expect(limited.status == 429)
            #expect(limited.headers["Retry-After"] == "60")
        }
    }

    @Test("S14: the per-address limit holds across usernames and is configurable")
    func s14AddressLimit() async throws {
        try await TestServer.with({ $0.rateLimits.loginPerIP15m = 3 }) { (server: TestServer) async throws in
            for name in ["one", "two", "three"] {
                #expect(try await Account.logIn(server, name, "some guess here").status == 401)
            }
            let limited = try await Account.logIn(server, "four", "some guess here")
            #expect(limited.status == 429)
            #expect(try limited.wireError.retryAfter == 60)
            #expect(server.application.metrics.value(.rateLimitHits, ["scope": "login_ip"]) == 1)
            #expect(try await Account.audit(server, event: "password.login").first?.details["scope"] == "ip")
        }
    }

    @Test("S14: behind a trusted proxy each client has its own per-address limit, and the audit names the client; others cannot forge one")
    func s14BehindProxy() async throws {
        func logIn(_ server: TestServer, from forwarded: String) async throws -> TestResponse {
            try await server.request(
                .post, "/v1/auth/password/login", json: ["username": "someone", "password": "some guess here"],
                headers: ["X-Forwarded-For": forwarded])
        }
        try await TestServer.with({
            $0.rateLimits.loginPerIP15m = 3
            $0.trustedProxies = ["127.0.0.1", "10.0.0.0/8"]
        }) { (server: TestServer) async throws in
            // The client wrote the first entry itself; the proxies at 10.1.2.3 and 127.0.0.1 saw 203.0.113.7.
            for _ in 1...3 { #expect(try await logIn(server, from: "198.51.100.1, 203.0.113.7, 10.1.2.3").status == 401) }
            #expect(try await logIn(server, from: "203.0.113.7").status == 429)
            #expect(try await logIn(server, from: "203.0.113.8").status == 401, "another client behind the same proxy")
            let entries = try await Account.audit(server, event: "password.login")
            #expect(entries.first?.ip == "203.0.113.8")
            #expect(entries.dropFirst().first?.ip == "203.0.113.7")
            let keys = try await server.database.read { try $0.query("SELECT key FROM rate_limits ORDER BY key") }.map { try $0.string("key") }
            #expect(keys.filter { $0.hasPrefix("login:ip:") } == ["login:ip:203.0.113.7", "login:ip:203.0.113.8"])
        }
        // Without trusted_proxies the header is the client's word: ignored.
        try await TestServer.with({ $0.rateLimits.loginPerIP15m = 3 }) { (server: TestServer) async throws in
            for index in 1...3 { #expect(try await logIn(server, from: "203.0.113.\(index)").status == 401) }
            #expect(try await logIn(server, from: "203.0.113.9").status == 429, "one client, whatever it claims")
            #expect(try await Account.audit(server, event: "password.login").first?.ip == "127.0.0.1")
        }
    }

    @Test("S14: the limit holds after a restart of the server process")
    func s14Restart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["serve", "--dev", "--listen", "127.0.0.1:0"]

        let first = try await ServerProcess.start(arguments, in: directory)
        #expect(try await Self.post(first.baseURL, "signup", "ada", "correct horse battery").status == 201)
        for attempt in 1...10 {
            #expect(try await Self.post(first.baseURL, "login", "ada", "guess number \(attempt)").status == 401)
        }
        first.send(SIGTERM)
        #expect(await first.waitForExit(timeout: 20) == 0)

        let second = try await ServerProcess.start(arguments, in: directory)
        let limited = try await Self.post(second.baseURL, "login", "ada", "correct horse battery")
        second.send(SIGTERM)
        #expect(await second.waitForExit(timeout: 20) == 0)
        #expect(limited.status == 429)
        #expect(Int(limited.retryAfter ?? "") ?? 0 > 0)
        #expect(try WireErrorBody(parsing: Array(limited.body.utf8)).error == .rateLimited)
    }

    static func post(_ baseURL: String, _ action: String, _ username: String, _ password: String) async throws -> (status: Int, retryAfter: String?, body: String) {
        var request = URLRequest(url: URL(string: baseURL + "/v1/auth/password/" + action)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(JSONValue.object(["username": .string(username), "password": .string(password)]).serialized)
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        return (http.statusCode, http.value(forHTTPHeaderField: "Retry-After"), String(decoding: data, as: UTF8.self))
    }
}
