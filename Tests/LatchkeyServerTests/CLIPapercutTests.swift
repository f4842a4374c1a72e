import Foundation
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// What a newcomer meets in the first hour with the `latchkey` executable: each message says
/// what is wrong and what to type instead, and what it suggests works as written.
@Suite("latchkey CLI: the first hour")
struct CLIPapercutTests {
    static func latchkey(_ arguments: [String], in directory: URL, input: String? = nil) throws -> Subprocess.Result {
        try Subprocess.run(Executables.latchkey, arguments, input: input, directory: directory)
    }

    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    @Test("a mistyped setting stops start-up and names the setting it probably meant")
    func unknownSettingSuggestion() async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("latchkey.json")
            try Data(#"{"listne": "127.0.0.1:9000", "pasword": {"min_length": 10}, "apple": {"teamid": "X"}, "frobnicate": 1}"#.utf8).write(to: file)
            let result = try Self.latchkey(["serve", "--dev", "--config", file.path], in: directory)
            #expect(result.status == 1)
            let lines = result.error.split(separator: "\n").map(String.init)
            #expect(lines.contains("latchkey: configuration: listne: unknown setting (did you mean listen?)"), "\(result.error)")
            #expect(lines.contains("latchkey: configuration: pasword: unknown setting (did you mean password?)"))
            #expect(lines.contains("latchkey: configuration: apple.teamid: unknown setting (did you mean apple.team_id?)"))
            #expect(lines.contains("latchkey: configuration: frobnicate: unknown setting"))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("latchkey-data").path))
        }
    }

    @Test("an unknown LATCHKEY_ variable is warned about, with the likely one, and the server starts anyway")
    func unknownEnvironmentVariable() async throws {
        try await Self.withDirectory { directory in
            let server = try await ServerProcess.start(
                ["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory, environment: ["LATCHKEY_LISTNE": "127.0.0.1:9000", "LATCHKEY_NOTHING_LIKE_IT": "1"])
            #expect(server.banner.contains("DEVELOPMENT MODE"))
            #expect(server.errors.contains("latchkey: warning: LATCHKEY_LISTNE: no such setting, ignored (did you mean LATCHKEY_LISTEN?)"), "\(server.errors)")
            #expect(server.errors.contains("latchkey: warning: LATCHKEY_NOTHING_LIKE_IT: no such setting, ignored\n"))
            server.send(SIGTERM)
            #expect(await server.waitForExit(timeout: 15) == 0)
        }
        // The check itself, without a process: known variables pass, only LATCHKEY_ ones count.
        #expect(ConfigurationLoader.environmentWarnings(["LATCHKEY_APPLE_TEAM_ID": "x", "HOME": "/root", "LATCHKEY_APPLE_TEAMID": "x"])
            == ["LATCHKEY_APPLE_TEAMID: no such setting, ignored (did you mean LATCHKEY_APPLE_TEAM_ID?)"])
    }

    @Test("a --config file that does not exist says no such file")
    func missingConfigFile() async throws {
        try await Self.withDirectory { directory in
            for command in [["serve"], ["migrate"], ["users", "list"]] {
                let result = try Self.latchkey(command + ["--config", "latchkey.jsn"], in: directory)
                #expect(result.status == 1, "\(command)")
                #expect(result.error.hasSuffix("latchkey: configuration: latchkey.jsn: no such file\n"), "\(command): \(result.error)")
            }
        }
    }

    @Test("S10: the missing-master-key hint, pasted into a shell, makes a key the server starts with (mode 0600, directory made)")
    func s10MasterKeyHintWorks() async throws {
        try await Self.withDirectory { directory in
            let refused = try Self.latchkey(["serve", "--listen", "127.0.0.1:0"], in: directory)
            #expect(refused.status == 1)
            let marker = "create one with: "
            let line = try #require(refused.error.split(separator: "\n").first { $0.contains(marker) }, "\(refused.error)")
            let command = String(line[line.range(of: marker)!.upperBound...])
            #expect(command.hasPrefix("(umask 077 && mkdir -p ") && command.hasSuffix(")"), "the umask stays in a subshell: \(command)")
            let pasted = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], directory: directory)
            #expect(pasted.status == 0, "\(pasted.error)")
            let key = directory.appendingPathComponent("latchkey-data/master.key").path
            #expect(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int == 0o600)
            let server = try await ServerProcess.start(["serve", "--listen", "127.0.0.1:0"], in: directory)
            #expect(server.banner.contains("master key  ./latchkey-data/master.key\n"), "\(server.banner)")
            server.send(SIGTERM)
            #expect(await server.waitForExit(timeout: 15) == 0)
        }
    }

    @Test("the hint quotes a path with spaces so the pasted command still works")
    func masterKeyHintQuotes() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("secret's dir/master key").path
            let command = MasterKey.creationCommand(path: path)
            let pasted = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], directory: directory)
            #expect(pasted.status == 0, "\(pasted.error)")
            #expect(try MasterKey.load(path: path, createIfMissing: false).created == false)
        }
    }

    @Test("S10: an operator command outside the server's directory says so, creates nothing and suggests no new master key")
    func s10OperatorCommandElsewhere() async throws {
        try await Self.withDirectory { directory in
            for command in [["users", "list"], ["keys", "list"], ["users", "show", "usr_x"], ["sessions", "list", "--user", "usr_x"]] {
                let result = try Self.latchkey(command, in: directory)
                #expect(result.status == 1, "\(command)")
                #expect(result.error.contains("no Latchkey database at ./latchkey-data/latchkey.sqlite"), "\(command): \(result.error)")
                #expect(result.error.contains("--config FILE"))
                #expect(!result.error.contains("create one") && !result.error.contains("urandom"))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing was created")

            // A database without its master key: a new key could not open it, so none is suggested.
            let dev = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
            dev.send(SIGTERM)
            #expect(await dev.waitForExit(timeout: 15) == 0)
            try FileManager.default.removeItem(at: directory.appendingPathComponent("latchkey-data/master.key"))
            for command in [["users", "list"], ["serve", "--listen", "127.0.0.1:0"]] {
                let result = try Self.latchkey(command, in: directory)
                #expect(result.status == 1, "\(command)")
                #expect(result.error.contains("master_key_file: ./latchkey-data/master.key does not exist, but the database"), "\(result.error)")
                #expect(result.error.contains("a new key cannot open them") && !result.error.contains("urandom"))
                #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("latchkey-data/master.key").path))
            }
        }
    }

    @Test("the banner shows the bind address and the public URL apart")
    func bannerBindAndPublicURL() async throws {
        try await Self.withDirectory { directory in
            let server = try await ServerProcess.start(
                ["serve", "--dev", "--listen", "127.0.0.1:0", "--public-url", "http://localhost:9999"], in: directory)
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            #expect(server.banner.hasPrefix("latchkey 0.1.0 listening on http://127.0.0.1:\(port)\n  public URL  http://localhost:9999\n"), "\(server.banner)")
            #expect(server.banner.contains("curl http://localhost:9999/healthz"))
            server.send(SIGTERM)
            #expect(await server.waitForExit(timeout: 15) == 0)

            let plain = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
            let plainPort = try #require(URLComponents(string: plain.baseURL)?.port)
            #expect(plain.banner.contains("\n  public URL  http://127.0.0.1:\(plainPort) (public_url is not set: the bind address)\n"), "\(plain.banner)")
            plain.send(SIGTERM)
            #expect(await plain.waitForExit(timeout: 15) == 0)
        }
    }

    @Test("a production start on a non-loopback listener warns about an http or loopback public_url, and not about https")
    func productionExposureWarning() async throws {
        try await Self.withDirectory { directory in
            let key = directory.appendingPathComponent("master.key")
            let made = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", MasterKey.creationCommand(path: key.path)])
            #expect(made.status == 0)
            let environment = ["LATCHKEY_MASTER_KEY_FILE": key.path]
            let server = try await ServerProcess.start(
                ["serve", "--listen", "0.0.0.0:0", "--public-url", "http://127.0.0.1:8080"], in: directory, environment: environment)
            server.send(SIGTERM)
            #expect(await server.waitForExit(timeout: 15) == 0)
            #expect(server.errors.contains("latchkey: warning: public_url: http://127.0.0.1:8080 is a loopback address while the server listens on 0.0.0.0:0"), "\(server.errors)")

            let secure = try await ServerProcess.start(
                ["serve", "--listen", "0.0.0.0:0", "--public-url", "https://auth.example.com"], in: directory, environment: environment)
            #expect(secure.banner.contains("public URL  https://auth.example.com\n"))
            secure.send(SIGTERM)
            #expect(await secure.waitForExit(timeout: 15) == 0)
            #expect(!secure.errors.contains("warning: public_url"), "\(secure.errors)")
        }
        var configuration = Configuration()
        configuration.listen = "0.0.0.0:8080"
        #expect(ConfigurationLoader.exposureWarnings(configuration).first?.hasPrefix("public_url: not set") == true)
        configuration.listen = "127.0.0.1:8080"
        #expect(ConfigurationLoader.exposureWarnings(configuration).isEmpty, "behind a proxy on the same host")
        configuration.listen = "0.0.0.0:8080"
        configuration.dev = true
        #expect(ConfigurationLoader.exposureWarnings(configuration).isEmpty)
    }

    @Test("S14: users set-password lifts an active lockout, audited, and the new password works at once")
    func s14SetPasswordLiftsLockout() async throws {
        try await TestServer.with { server in
            typealias Account = PasswordAccountTests
            let signUp = try await Account.signUp(server, "ada", "correct horse battery")
            let userID = try signUp.tokens.user.id
            for attempt in 1...10 {
                #expect(try await Account.logIn(server, "ada", "guess number \(attempt)").status == 401)
            }
            #expect(try await Account.logIn(server, "ada", "correct horse battery").status == 429, "locked out")
            let config = try Self.configFile(for: server)

            let set = try Self.latchkey(["users", "set-password", userID, "--config", config.path], in: server.directory, input: "a brand new passphrase\n")
            #expect(set.status == 0, "\(set.error)")
            #expect(set.output == "password set for \(userID); their sessions have ended\nthe lockout after failed sign-ins is lifted\n")
            let login = try await Account.logIn(server, "ada", "a brand new passphrase")
            #expect(login.status == 200, "\(String(decoding: login.body, as: UTF8.self))")
            let lifted = try await Account.audit(server, event: "password.lockout_lifted")
            #expect(lifted.count == 1 && lifted.first?.userID == userID && lifted.first?.requestID == "cli")
            let left = try await server.database.read { try $0.query("SELECT key FROM rate_limits WHERE key LIKE 'login:ip:%'") }
            #expect(left.count == 1, "the address's counter stays: it limits the guesser")

            // Without a lockout there is nothing to lift, and nothing is audited.
            let again = try Self.latchkey(["users", "set-password", userID, "--config", config.path], in: server.directory, input: "another new passphrase\n")
            #expect(again.output == "password set for \(userID); their sessions have ended\n")
            #expect(try await Account.audit(server, event: "password.lockout_lifted").count == 1)
        }
    }

    @Test("operator tables stay aligned whatever the width of their cells")
    func alignedTables() async throws {
        try await TestServer.with { server in
            _ = try await server.createUser(email: "a@b.co", givenName: "Al")
            _ = try await server.createUser(email: "someone.with.a.very.long.address@subdomain.example.com", givenName: "Bartholomew-Maximilian")
            let config = try Self.configFile(for: server)
            let result = try Self.latchkey(["users", "list", "--config", config.path], in: server.directory)
            #expect(result.status == 0, "\(result.error)")
            let lines = result.output.split(separator: "\n")
            #expect(lines.count == 3)
            // Where each cell starts: no cell holds a space here.
            let columns = try lines.map { line in try line.ranges(of: Regex(#"\S+"#)).map { line.distance(from: line.startIndex, to: $0.lowerBound) } }
            #expect(Set(columns.map(\.count)).count == 1, "\(result.output)")
            #expect(Set(columns).count == 1, "every column starts where its header does: \(result.output)")
            #expect(!lines.contains { $0.hasSuffix(" ") })
        }
    }

    /// A configuration file that points the CLI at a test server's database and key.
    static func configFile(for server: TestServer) throws -> URL {
        let file = server.directory.appendingPathComponent("latchkey.json")
        let configuration = TestServer.configuration(in: server.directory)
        try Data(#"{"database": "sqlite:\#(configuration.sqlitePath)", "master_key_file": "\#(configuration.masterKeyFile)"}"#.utf8).write(to: file)
        return file
    }
}
