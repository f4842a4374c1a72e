import Foundation
import LatchkeyJSON
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// Mail from real `latchkey serve` processes to aiosmtpd (`scripts/smtp-sink`, STARTTLS and AUTH),
/// read with Python's `email` package and followed with Python's `requests`: delivery, an outage
/// of a minute, two instances with one killed mid-send, and the start-up checks of the settings.
@Suite("Email delivery over SMTP to aiosmtpd (S33)")
struct EmailDeliveryTests {
    typealias Client = StorageFailureTests.Client

    static let password = "correct horse battery"

    /// `latchkey serve` in a directory of its own under `directory`, mailing to `sink` with its
    /// CA and credentials (the password from the environment, as an operator would pass it).
    static func serve(
        to sink: SMTPSink, in directory: TemporaryDirectory, _ settings: [String: JSONValue] = [:], environment: [String: String] = [:]
    ) async throws -> ServerProcess {
        let own = directory.url.appendingPathComponent("instance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        var members: [String: JSONValue] = [
            "database": .string("sqlite:" + own.appendingPathComponent("latchkey.sqlite").path), "master_key_file": .string(directory.file("master.key")),
            "dev": true, "listen": "127.0.0.1:0",
            "email": ["smtp_url": .string(sink.url), "smtp_username": "latchkey", "ca_file": .string(sink.caFile), "from": "Example <no-reply@example.com>"],
        ]
        members.merge(settings) { _, new in new }
        let config = own.appendingPathComponent("latchkey.json")
        try Data(JSONValue.object(members).serialized).write(to: config)
        return try await ServerProcess.start(
            ["serve", "--config", config.path], in: own, environment: ["LATCHKEY_SMTP_PASSWORD": sink.options.password].merging(environment) { _, new in new })
    }

    /// What Python's `email` package reads in `delivery`, with the link and code of its text.
    static func read(_ delivery: SMTPSink.Delivery) throws -> (parsed: JSONValue, link: String, code: String) {
        let parsed = try JSONValue(parsing: Array(try PythonEmail.parse(delivery.raw).utf8))
        let text = try #require(parsed["plain"]?.stringValue)
        let link = try #require(text.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init))
        let code = try #require(text.firstMatch(of: /Your code: ([0-9]{6})/).map { String($0.output.1) })
        return (parsed, link, code)
    }

    /// Runs Python with `requests` (the test venv's): a client no one here wrote.
    static func python(_ script: String, _ arguments: [String]) throws -> String {
        let python = try #require(ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"], "needs LATCHKEY_PYTHON (make test sets it)")
        let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script] + arguments)
        #expect(result.status == 0, "\(result.error)")
        return result.output
    }

    @Test("S33: a reset goes over STARTTLS and AUTH to aiosmtpd; Python reads it without a defect; the link's GET consumes nothing, its form's POST sets the password; no secret reaches the log")
    func endToEnd() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let directory = try TemporaryDirectory("mail")
        defer { directory.remove() }
        let server = try await Self.serve(to: sink, in: directory)
        defer { server.stop(SIGKILL) }
        let client = Client(baseURL: server.baseURL)
        let signUp = try await client.post("/v1/auth/password/signup", ["username": "ada@example.com", "password": .string(Self.password)])
        try #require(signUp.status == 201, "\(signUp.text)")

        #expect(try await client.post("/v1/auth/password/reset", ["email": "ada@example.com"]).status == 202)
        #expect(try await eventually(within: .seconds(15)) { try sink.deliveries().count == 1 }, "delivered within seconds of the commit")
        let delivery = try #require(try sink.deliveries().first)
        #expect(delivery.tls && delivery.user == "latchkey" && delivery.recipients == ["ada@example.com"] && delivery.mailFrom == "no-reply@example.com")
        let (parsed, link, code) = try Self.read(delivery)
        #expect(parsed["defects"] == [] && parsed["to"] == ["ada@example.com"] && parsed["from_name"] == "Example")
        #expect(parsed["html"]?.stringValue?.contains(code) == true)
        #expect(link.hasPrefix(server.baseURL + "/email/reset?token="))

        // A scanner's GET (twice), then the user's POST of the page's form, with `requests`.
        let outcome = try Self.python(
            """
            import re, sys, requests
            link, password = sys.argv[1], sys.argv[2]
            first = requests.get(link); second = requests.get(link)
            token = re.search(r'name="token" value="([^"]+)"', second.text).group(1)
            done = requests.post(link.split("?")[0], data={"token": token, "password": password})
            again = requests.post(link.split("?")[0], data={"token": token, "password": password})
            print(first.status_code, second.status_code, done.status_code, again.status_code)
            """, [link, "a brand new passphrase"])
        #expect(outcome.trimmingCharacters(in: .whitespacesAndNewlines) == "200 200 200 400", "prefetches consume nothing; the link is single use")
        let old = try await client.post("/v1/auth/password/login", ["username": "ada@example.com", "password": .string(Self.password)])
        let new = try await client.post("/v1/auth/password/login", ["username": "ada@example.com", "password": "a brand new passphrase"])
        #expect(old.status == 401 && new.status == 200)

        let database = try SQLiteDatabase(configuration: .init(path: server.errorLog.deletingLastPathComponent().appendingPathComponent("latchkey.sqlite").path))
        let events = try await database.read { try $0.query("SELECT event FROM audit_log ORDER BY id", []).map { try $0.string("event") } }
        let queued = try await database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox", [])?.int("n") }
        await database.close()
        #expect(events.contains("email.requested") && events.contains("password.reset"), "\(events)")
        #expect(queued == 0, "sent mail leaves the outbox")

        let token = try #require(link.split(separator: "token=").last.map(String.init))
        let log = server.errors
        for secret in [token, code, sink.options.password] { #expect(!log.contains(secret), "a secret in the server's log") }
    }

    @Test("S33: a message the SMTP server refuses for good (550) is dropped at once, audited email.bounced and counted, and the next one still goes")
    func bounce() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let directory = try TemporaryDirectory("mail-bounce")
        defer { directory.remove() }
        let server = try await Self.serve(to: sink, in: directory)
        defer { server.stop(SIGKILL) }
        let client = Client(baseURL: server.baseURL)
        for address in ["bounce-ada@example.com", "grace@example.com"] {
            #expect(try await client.post("/v1/auth/password/signup", ["username": .string(address), "password": .string(Self.password)]).status == 201)
            #expect(try await client.post("/v1/auth/password/reset", ["email": .string(address)]).status == 202)
        }
        #expect(try await eventually(within: .seconds(15)) { try sink.deliveries().count == 1 })
        #expect(try sink.deliveries().map(\.recipients) == [["grace@example.com"]])
        let database = try SQLiteDatabase(configuration: .init(path: server.errorLog.deletingLastPathComponent().appendingPathComponent("latchkey.sqlite").path))
        var bounced: [SQLRow] = []
        _ = try await eventually(within: .seconds(10)) {
            bounced = try await database.read { try $0.query("SELECT outcome, details FROM audit_log WHERE event = 'email.bounced'", []) }
            return !bounced.isEmpty
        }
        let queued = try await database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox", [])?.int("n") }
        await database.close()
        #expect(bounced.count == 1 && queued == 0, "dropped, not retried")
        let details = try JSONValue(parsing: Array((bounced.first?.optionalString("details") ?? "{}").utf8))
        #expect(details["purpose"] == "reset" && details["attempts"] == "1")
        #expect(details["reason"]?.stringValue?.contains("550") == true, "\(details)")
        let metrics = try await client.get("/metrics").text
        #expect(metrics.contains(#"latchkey_email_messages_total{purpose="reset",outcome="bounced"} 1"#))
        #expect(metrics.contains(#"latchkey_email_messages_total{purpose="reset",outcome="sent"} 1"#))
    }

    @Test("S33: an SMTP server down for a minute still gets the message, exactly once; /readyz stays 200; the outage is one log line and a gauge")
    func outage() async throws {
        var sink = try await SMTPSink.start()
        defer { sink.stop() }
        let directory = try TemporaryDirectory("mail-outage")
        defer { directory.remove() }
        let server = try await Self.serve(to: sink, in: directory)
        defer { server.stop(SIGKILL) }
        let client = Client(baseURL: server.baseURL)
        #expect(try await client.post("/v1/auth/password/signup", ["username": "ada@example.com", "password": .string(Self.password)]).status == 201)

        sink.stop()
        let down = ContinuousClock.now
        #expect(try await client.post("/v1/auth/password/reset", ["email": "ada@example.com"]).status == 202)
        while ContinuousClock.now - down < .seconds(60) {
            #expect(try await client.get("/readyz").status == 200, "readiness does not depend on SMTP")
            try await Task.sleep(for: .seconds(5))
        }
        let metrics = try await client.get("/metrics").text
        #expect(metrics.contains("latchkey_email_smtp_up 0"), "the gauge shows the outage")
        #expect(metrics.contains(#"latchkey_email_messages_total{purpose="reset",outcome="deferred"}"#), "\(metrics)")

        sink = try await sink.restart()
        // Retries come 10 s, 20 s, 40 s after the attempts: the one after the outage ends delivers.
        #expect(try await eventually(within: .seconds(60)) { try sink.deliveries().count == 1 })
        try await Task.sleep(for: .seconds(2))
        #expect(try sink.deliveries().count == 1, "exactly once")
        #expect(try await client.get("/metrics").text.contains("latchkey_email_smtp_up 1"))
        let log = server.errors
        #expect(log.components(separatedBy: "smtp_unavailable").count - 1 == 1, "one line per outage:\n\(log)")
        #expect(log.components(separatedBy: "smtp_recovered").count - 1 == 1)
        #expect(!log.contains(sink.options.password))
    }

    @Test("S33 on PostgreSQL: two instances deliver each message once; one killed with SIGKILL mid-send loses nothing, and the other sends it once")
    func twoInstancesAndKill() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        var silent = SMTPSink.Options()
        silent.tarpit = true
        let tarpit = try await SMTPSink.start(silent)
        defer { tarpit.stop() }
        let directory = try TemporaryDirectory("mail-instances")
        defer { directory.remove() }
        try await PostgreSQLServerTests.withDatabase(in: cluster) { url in
            let shared: [String: JSONValue] = ["database": .string(url), "database_password_file": .string(cluster.passwordFile)]
            let first = try await Self.serve(to: sink, in: directory, shared)
            defer { first.stop(SIGKILL) }
            let second = try await Self.serve(to: sink, in: directory, shared)
            defer { second.stop(SIGKILL) }
            let (a, b) = (Client(baseURL: first.baseURL), Client(baseURL: second.baseURL))

            // Both instances drain one outbox: twenty resets, each mailed once.
            for index in 0..<20 {
                let response = try await (index % 2 == 0 ? a : b).post("/v1/auth/password/signup", ["username": .string("user\(index)@example.com"), "password": .string(Self.password)])
                #expect(response.status == 201)
            }
            for index in 0..<20 {
                #expect(try await (index % 2 == 0 ? b : a).post("/v1/auth/password/reset", ["email": .string("user\(index)@example.com")]).status == 202)
            }
            #expect(try await eventually(within: .seconds(30)) { try sink.deliveries().count >= 20 })
            try await Task.sleep(for: .seconds(2))
            let recipients = try sink.deliveries().flatMap(\.recipients)
            #expect(recipients.count == 20 && Set(recipients).count == 20, "each message once: \(recipients.sorted())")

            // A third instance whose SMTP server never answers claims the next message and is
            // killed while it waits; the others leave it alone until its lease ends, then send it.
            let stuck = try await Self.serve(to: tarpit, in: directory, shared.merging(["email": [
                "smtp_url": .string(tarpit.url), "smtp_username": "latchkey", "ca_file": .string(tarpit.caFile), "from": "Example <no-reply@example.com>"]]) { _, new in new })
            defer { stuck.stop(SIGKILL) }
            first.stop(SIGKILL)
            second.stop(SIGKILL)
            let database = try await PostgreSQLDatabase(configuration: .init(url: url, password: cluster.password))
            do {
                #expect(try await Client(baseURL: stuck.baseURL).post("/v1/auth/password/reset", ["email": "user0@example.com"]).status == 202)
                #expect(try await eventually(within: .seconds(10)) { tarpit.connections() >= 1 }, "the stuck instance is sending")
                let claimed = try await database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox WHERE next_attempt_at > ?", [.time(Date().addingTimeInterval(30))])?.int("n") }
                #expect(claimed == 1, "the message is claimed under a lease")
                stuck.stop(SIGKILL)
                let survivor = try await Self.serve(to: sink, in: directory, shared)
                defer { survivor.stop(SIGKILL) }
                #expect(try await eventually(within: .seconds(75)) { try sink.deliveries().count == 21 }, "sent once the lease ended")
                try await Task.sleep(for: .seconds(2))
                #expect(try sink.deliveries().count == 21 && sink.deliveries().last?.recipients == ["user0@example.com"])
                #expect(try await database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox", [])?.int("n") } == 0)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }

    @Test("S33: latchkey mail test sends one message through the configured server, and says why when it cannot, never the password")
    func mailTest() async throws {
        let sink = try await SMTPSink.start()
        defer { sink.stop() }
        let directory = try TemporaryDirectory("mail-test")
        defer { directory.remove() }
        let config = directory.url.appendingPathComponent("latchkey.json")
        let members: JSONValue = [
            "database": .string("sqlite:" + directory.file("db.sqlite")), "master_key_file": .string(directory.file("master.key")),
            "email": ["smtp_url": .string(sink.url), "smtp_username": "latchkey", "ca_file": .string(sink.caFile), "from": "Ops <ops@example.com>"],
        ]
        try Data(members.serialized).write(to: config)
        func mailTest(_ to: String, password: String) throws -> Subprocess.Result {
            let process = ["mail", "test", "--to", to, "--config", config.path]
            return try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["LATCHKEY_SMTP_PASSWORD=" + password, Executables.latchkey.path] + process)
        }
        let sent = try mailTest("ops@example.net", password: sink.options.password)
        #expect(sent.status == 0 && sent.output.contains("sent to ops@example.net through \(sink.url)"), "\(sent.error)")
        let delivery = try #require(try sink.deliveries().first)
        #expect(delivery.recipients == ["ops@example.net"] && delivery.mailFrom == "ops@example.com" && delivery.tls)

        let refused = try mailTest("ops@example.net", password: "not-the-password-42")
        #expect(refused.status == 1 && refused.error.contains("refused the credentials"), "\(refused.error)")
        #expect(!(refused.output + refused.error).contains("not-the-password-42"))
        let bounced = try mailTest("bounce@example.net", password: sink.options.password)
        #expect(bounced.status == 1 && bounced.error.contains("550"), "\(bounced.error)")
        #expect(try sink.deliveries().count == 1)
    }

    @Test("S33: a mail setting that cannot work stops serve with a line naming it")
    func badSettings() async throws {
        let directory = try TemporaryDirectory("mail-settings")
        defer { directory.remove() }
        let notPEM = directory.file("not-a-ca.pem")
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: notPEM))
        let cases: [(JSONValue, String)] = [
            (["smtp_url": "http://mail.example.com"], "email.smtp_url"),
            (["smtp_url": "smtp://user:pw@mail.example.com"], "email.smtp_url"),
            (["smtp_url": "smtp://mail.example.com", "smtp_username": "latchkey"], "email.smtp_username: needs a password"),
            (["smtp_url": "smtp://mail.example.com", "smtp_username": "x", "smtp_password_file": "/nonexistent/password"], "email.smtp_password_file"),
            (["smtp_url": "smtp://mail.example.com", "ca_file": .string(notPEM)], "email.ca_file"),
            (["smtp_username": "latchkey"], "email.smtp_url: must be set"),
        ]
        for (email, expected) in cases {
            let config = directory.url.appendingPathComponent("latchkey-\(UUID()).json")
            let members: JSONValue = [
                "database": .string("sqlite:" + directory.file("db.sqlite")), "master_key_file": .string(directory.file("master.key")),
                "dev": true, "listen": "127.0.0.1:0", "email": email,
            ]
            try Data(members.serialized).write(to: config)
            let result = try Subprocess.run(Executables.latchkey, ["serve", "--config", config.path], directory: directory.url)
            #expect(result.status == 1 && result.error.contains(expected), "\(expected): \(result.error)")
        }
    }
}
