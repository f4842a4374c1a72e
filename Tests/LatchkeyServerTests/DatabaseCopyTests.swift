import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// `latchkey db copy` from a real `latchkey serve --dev` on SQLite to a real PostgreSQL, then
/// `latchkey serve` on the copy, all as processes a user would run.
@Suite("db copy: SQLite to PostgreSQL")
struct DatabaseCopyTests {
    static let password = "correct horse battery"

    /// One answer: the status and the parsed body (`null` when there is none).
    struct Answer {
        var status: Int
        var json: JSONValue
    }

    static func call(_ method: String, _ url: String, _ body: JSONValue? = nil, bearer: String? = nil) async throws -> Answer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.serialized)
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as! HTTPURLResponse).statusCode
        return Answer(status: status, json: data.isEmpty ? .null : try JSONValue(parsing: Array(data)))
    }

    /// `latchkey ARGUMENTS` with `environment` added to this process's.
    static func latchkey(_ arguments: [String], environment: [String: String] = [:]) throws -> Subprocess.Result {
        try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), environment.map { "\($0.key)=\($0.value)" } + [Executables.latchkey.path] + arguments)
    }

    static func writeConfig(_ settings: JSONValue, to path: String) throws {
        try Data(settings.serialized).write(to: URL(fileURLWithPath: path))
    }

    @Test("a live dev server's users, sessions, password, TOTP, Apple identity and audit log move to PostgreSQL; serve on the copy accepts the old refresh token and the password and shows the same audit log; a second run is refused")
    func copyAndServe() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = directory.file("data/latchkey.sqlite")
        let sqliteConfig = directory.file("sqlite.json")
        try Self.writeConfig(
            ["database": .string("sqlite:" + sqlite), "master_key_file": .string(directory.file("master.key")), "dev": true, "listen": "127.0.0.1:0"],
            to: sqliteConfig)
        let server = try await ServerProcess.start(["serve", "--config", sqliteConfig], in: directory.url)
        defer { server.stop(SIGKILL) }
        let base = server.baseURL

        // Ada: a password account with TOTP. Grace: Sign in with Apple.
        let signUp = try await Self.call("POST", base + "/v1/auth/password/signup", ["username": "ada@example.com", "password": .string(Self.password)])
        try #require(signUp.status == 201, "\(signUp.json)")
        let adaTokens = try WireTokenResponse(json: signUp.json)
        let wrong = try await Self.call("POST", base + "/v1/auth/password/login", ["username": "ada@example.com", "password": "not the password"])
        #expect(wrong.status == 401)
        let enrolment = try await Self.call("POST", base + "/v1/totp", bearer: adaTokens.accessToken)
        try #require(enrolment.status == 200, "\(enrolment.json)")
        let secret = TOTPTests.base32Decode(try #require(enrolment.json["secret"]?.stringValue))
        let confirmedStep = TOTP.step(at: Date())
        let confirm = try await Self.call(
            "POST", base + "/v1/totp/confirm", ["code": .string(TOTP.code(secret: secret, step: confirmedStep))], bearer: adaTokens.accessToken)
        try #require(confirm.status == 200, "\(confirm.json)")
        // Ada's refresh token rotates once on SQLite: the copy must know the retired one as retired.
        let adaRefreshed = try await Self.call("POST", base + "/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(adaTokens.refreshToken)])
        try #require(adaRefreshed.status == 200, "\(adaRefreshed.json)")
        let adaRefresh = try #require(adaRefreshed.json["refresh_token"]?.stringValue)
        let grace = try await SandboxSignIn.signIn(at: base, email: "grace@example.com")
        let graceTokens = try grace.tokens

        // The copy runs while the SQLite server is still up; the password comes from the environment.
        let database = "copy_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try cluster.createDatabase(database)
        defer { try? cluster.dropDatabase(database) }
        let url = cluster.url(database: database)
        let copied = try Self.latchkey(["db", "copy", "--from", "sqlite:" + sqlite, "--to", url], environment: ["LATCHKEY_DATABASE_PASSWORD": cluster.password])
        #expect(copied.status == 0, "\(copied.output) \(copied.error)")
        #expect(!(copied.output + copied.error).contains(cluster.password))
        #expect(copied.output.hasPrefix("copied sqlite:\(sqlite) to \(url) at schema version \(LatchkeySchema.migrations.last!.version)\n"))
        for table in ["users", "password_credentials", "identities", "sessions", "refresh_tokens", "totp_factors", "recovery_codes", "signing_keys", "audit_log"] {
            let line = copied.output.split(separator: "\n").first { $0.split(separator: " ").first.map(String.init) == table }
            let fields = try #require(line, "no line for \(table) in \(copied.output)").split(separator: " ")
            #expect(fields.count == 4 && fields[1] == fields[2] && fields[3] == "ok" && Int(fields[1])! > 0, "\(line!)")
        }
        #expect(copied.output.contains("\nverified: "))
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)
        let sqliteAudit = try Self.latchkey(["audit", "--json", "--config", sqliteConfig])
        #expect(sqliteAudit.status == 0, "\(sqliteAudit.error)")

        // The copy served by PostgreSQL, with the password from a file and the same master key.
        let postgresConfig = directory.file("postgres.json")
        try Self.writeConfig(
            [
                "database": .string(url), "database_password_file": .string(cluster.passwordFile),
                "master_key_file": .string(directory.file("master.key")), "dev": true, "listen": "127.0.0.1:0",
            ], to: postgresConfig)
        let postgresAudit = try Self.latchkey(["audit", "--json", "--config", postgresConfig])
        #expect(postgresAudit.status == 0, "\(postgresAudit.error)")
        #expect(postgresAudit.output == sqliteAudit.output, "the same audit log, entry for entry")
        #expect(postgresAudit.output.split(separator: "\n").count >= 8)

        let rerun = try Self.latchkey(["db", "copy", "--from", "sqlite:" + sqlite, "--to", url, "--config", postgresConfig])
        #expect(rerun.status == 1)
        #expect(rerun.error.hasPrefix("latchkey: db copy: the target already holds rows in "), "\(rerun.error)")
        #expect(rerun.error.contains(" users (2)") && rerun.error.contains(" totp_factors (1)"), "\(rerun.error)")
        #expect(rerun.error.contains("db copy fills an empty database only"))

        let copy = try await ServerProcess.start(["serve", "--config", postgresConfig], in: directory.url)
        defer { copy.stop(SIGKILL) }
        let onCopy = copy.baseURL
        // The refresh tokens issued on SQLite refresh on the copy (the audit id sequence continues: no 500).
        let refreshed = try await Self.call("POST", onCopy + "/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(adaRefresh)])
        #expect(refreshed.status == 200, "\(refreshed.json)")
        let graceRefreshed = try await Self.call("POST", onCopy + "/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(graceTokens.refreshToken)])
        #expect(graceRefreshed.status == 200, "\(graceRefreshed.json)")
        let me = try await Self.call("GET", onCopy + "/v1/me", bearer: try #require(graceRefreshed.json["access_token"]?.stringValue))
        #expect(me.status == 200)
        #expect(me.json["identities"]?.arrayValue?.compactMap { $0["provider"]?.stringValue } == ["apple"])
        #expect(me.json["user"]?["email"]?.stringValue == "grace@example.com")

        // The password still opens Ada's account, and her TOTP secret still unseals.
        let login = try await Self.call("POST", onCopy + "/v1/auth/password/login", ["username": "ada@example.com", "password": .string(Self.password)])
        #expect(login.status == 403, "\(login.json)")
        #expect(login.json["error"] == "mfa_required")
        let mfaToken = try #require(login.json["mfa_token"]?.stringValue)
        let step = max(TOTP.step(at: Date()), confirmedStep + 1)
        let verified = try await Self.call("POST", onCopy + "/v1/mfa/verify", ["mfa_token": .string(mfaToken), "totp_code": .string(TOTP.code(secret: secret, step: step))])
        #expect(verified.status == 200, "\(verified.json)")
        let sessions = try await Self.call("GET", onCopy + "/v1/sessions", bearer: try #require(verified.json["access_token"]?.stringValue))
        #expect(sessions.status == 200)
        let amrs = sessions.json["sessions"]?.arrayValue?.map { $0["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [] } ?? []
        #expect(amrs.contains(["pwd", "otp", "mfa"]), "\(amrs)")
        #expect(amrs.sorted { $0.count < $1.count } == [["pwd"], ["pwd", "otp", "mfa"]], "the copied sign-up session and this one: \(amrs)")

        // New audit entries continue after the copied ids (the sequence was set past them).
        let after = try Self.latchkey(["audit", "--json", "--config", postgresConfig])
        #expect(after.status == 0, "\(after.error)")
        #expect(after.output.hasSuffix(sqliteAudit.output), "the copied entries stay, oldest last")
        #expect(after.output.count > sqliteAudit.output.count)
        #expect(!copy.errors.contains("unexpected_error"), "\(copy.errors)")
    }

    @Test("a wrong password or an unreachable server fails with a clear message, exit 1, and no password in the output")
    func wrongPasswordAndURL() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = directory.file("latchkey.sqlite")
        let database = try SQLiteDatabase(configuration: .init(path: sqlite))
        try await Migrator.migrate(database)
        await database.close()
        let secret = "not-the-password-\(UUID().uuidString.prefix(8))"

        let wrongPassword = try Self.latchkey(
            ["db", "copy", "--from", "sqlite:" + sqlite, "--to", cluster.url], environment: ["LATCHKEY_DATABASE_PASSWORD": secret])
        #expect(wrongPassword.status == 1)
        #expect(wrongPassword.error.hasPrefix("latchkey: database: \(cluster.url) cannot be opened"), "\(wrongPassword.error)")
        #expect(wrongPassword.error.contains("password authentication failed"), "\(wrongPassword.error)")
        #expect(!(wrongPassword.output + wrongPassword.error).contains(secret))

        // The password in the URL is shown redacted.
        let inURL = cluster.url.replacingOccurrences(of: "://latchkey@", with: "://latchkey:\(secret)@")
        let wrongInURL = try Self.latchkey(["db", "copy", "--from", "sqlite:" + sqlite, "--to", inURL])
        #expect(wrongInURL.status == 1)
        #expect(wrongInURL.error.contains("://latchkey:***@"), "\(wrongInURL.error)")
        #expect(!(wrongInURL.output + wrongInURL.error).contains(secret))

        let unreachable = try Self.latchkey(
            ["db", "copy", "--from", "sqlite:" + sqlite, "--to", "postgres://latchkey@127.0.0.1:1/latchkey"], environment: ["LATCHKEY_DATABASE_PASSWORD": secret])
        #expect(unreachable.status == 1)
        #expect(unreachable.error.hasPrefix("latchkey: database: postgres://latchkey@127.0.0.1:1/latchkey cannot be opened"), "\(unreachable.error)")
        #expect(!(unreachable.output + unreachable.error).contains(secret))

        let noSource = try Self.latchkey(["db", "copy", "--from", "sqlite:" + directory.file("missing.sqlite"), "--to", cluster.url])
        #expect(noSource.status == 1)
        #expect(noSource.error.contains("no SQLite database at \(directory.file("missing.sqlite"))"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("missing.sqlite")), "nothing created")
        let usage = try Self.latchkey(["db", "copy", "--from", sqlite, "--to", cluster.url])
        #expect(usage.status == 2)
        #expect(usage.error.contains("--from must be sqlite:PATH"))
    }
}
