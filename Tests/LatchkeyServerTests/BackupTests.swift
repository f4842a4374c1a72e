import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Synchronization
import Testing

/// `latchkey backup` against a real server process, and the restore steps of docs/deployment.md.
@Suite("Backup")
struct BackupTests {
    /// A directory with a configuration for `latchkey serve --config` on a loopback port.
    struct Deployment {
        let directory: URL
        let config: URL
        var database: URL { directory.appendingPathComponent("data/latchkey.sqlite") }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-backup-\(UUID())")
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            config = directory.appendingPathComponent("latchkey.json")
            let json = #"{"database":"sqlite:\#(directory.path)/data/latchkey.sqlite","master_key_file":"\#(directory.path)/master.key","dev":true,"listen":"127.0.0.1:0"}"#
            try Data(json.utf8).write(to: config)
        }

        func serve() async throws -> (ServerProcess, port: Int) {
            let server = try await ServerProcess.start(["serve", "--config", config.path], in: directory)
            return (server, try #require(URLComponents(string: server.baseURL)?.port))
        }

        func latchkey(_ arguments: [String]) throws -> Subprocess.Result {
            try Subprocess.run(Executables.latchkey, arguments + ["--config", config.path])
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Signs up `username`; returns the response's refresh token on 201.
    static func signUp(port: Int, _ username: String) -> String? {
        let body = #"{"username":"\#(username)","password":"a long enough passphrase"}"#
        guard case .response(let bytes) = RawHTTP.exchange(port: port, RawHTTP.post("/v1/auth/password/signup", json: body), timeout: 30),
            let response = RawHTTP.parse(bytes), response.status == 201
        else { return nil }
        return (try? WireTokenResponse(parsing: response.body))?.refreshToken
    }

    static func permissions(_ url: URL) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test("S28: a backup taken while sign-ups keep committing is intact and holds every account acknowledged before it began")
    func s28ConsistentWhileWriting() async throws {
        let deployment = try Deployment()
        defer { deployment.remove() }
        let (server, port) = try await deployment.serve()
        let writing = Writing()

        async let writers: [Int] = BlockingWorkers.run(2) { worker in
            var failures = 0
            var number = 0
            while !writing.stop.load(ordering: .acquiring) {
                number += 1
                let username = "writer\(worker)-\(number)@example.com"
                if Self.signUp(port: port, username) != nil {
                    writing.acknowledged.withLock { $0.append(username) }
                } else {
                    failures += 1
                }
            }
            return failures
        }
        func waitFor(_ count: Int) async throws {
            let deadline = Date().addingTimeInterval(60)
            while writing.acknowledged.withLock({ $0.count }) < count, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        }

        try await waitFor(8)
        let before = Set(writing.acknowledged.withLock { $0 })
        let backupFile = deployment.directory.appendingPathComponent("backup.sqlite")
        let backup = try deployment.latchkey(["backup", "--to", backupFile.path])
        let afterBackup = writing.acknowledged.withLock { $0.count }
        // The server keeps serving after the copy: more sign-ups are acknowledged.
        try await waitFor(afterBackup + 4)
        writing.stop.store(true, ordering: .releasing)
        let failures = await writers
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)

        #expect(backup.status == 0, "\(backup.error)")
        #expect(backup.output.hasPrefix("backed up \(deployment.database.path) to \(backupFile.path): "))
        #expect(failures == [0, 0])
        #expect(writing.acknowledged.withLock { $0.count } >= afterBackup + 4)
        #expect(try Self.permissions(backupFile) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: deployment.directory.path).filter { $0.contains(".partial") }.isEmpty)

        let copy = try SQLiteDatabase(configuration: .init(path: backupFile.path))
        #expect(try await copy.integrityCheck())
        let rows = try await copy.read {
            try $0.query("SELECT u.id, p.username, (SELECT count(*) FROM audit_log a WHERE a.user_id = u.id AND a.event = 'password.signup') AS audited FROM users u JOIN password_credentials p ON p.user_id = u.id")
        }
        await copy.close()
        let usernames = Set(rows.compactMap { $0.optionalString("username") })
        #expect(before.isSubset(of: usernames), "missing: \(before.subtracting(usernames).sorted())")
        // Each account came with its audit entry: the copy holds whole transactions only.
        #expect(rows.allSatisfy { $0.optionalInt("audited") == 1 })
    }

    @Test("backup refuses to overwrite an existing file unless --force, and --force replaces it whole")
    func overwrite() async throws {
        let deployment = try Deployment()
        defer { deployment.remove() }
        let (server, port) = try await deployment.serve()
        defer { server.stop() }
        #expect(Self.signUp(port: port, "ada@example.com") != nil)
        let target = deployment.directory.appendingPathComponent("existing.sqlite")
        try Data("precious".utf8).write(to: target)

        let refused = try deployment.latchkey(["backup", "--to", target.path])
        #expect(refused.status == 1)
        #expect(refused.error == "latchkey: \(target.path) exists; pass --force to replace it\n")
        #expect(try Data(contentsOf: target) == Data("precious".utf8))

        let forced = try deployment.latchkey(["backup", "--to", target.path, "--force"])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(try Self.permissions(target) == 0o600)
        let copy = try SQLiteDatabase(configuration: .init(path: target.path))
        let users = try await copy.read { try $0.queryOne("SELECT count(*) AS n FROM users")?.optionalInt("n") }
        await copy.close()
        #expect(users == 1)

        let missing = try deployment.latchkey(["backup", "--to", deployment.directory.appendingPathComponent("no/such/dir.sqlite").path])
        #expect(missing.status == 1)
        #expect(missing.error.hasPrefix("latchkey: backup: create "))
        let usage = try deployment.latchkey(["backup"])
        #expect(usage.status == 2)
        #expect(usage.error.contains("--to is required"))
    }

    @Test("S28: restore as docs/deployment.md says (stop, put the backup in place, start) and a refresh token from before the backup still works")
    func s28RestoreFollowsTheDocumentedSteps() async throws {
        let deployment = try Deployment()
        defer { deployment.remove() }
        var (server, port) = try await deployment.serve()
        let refreshToken = try #require(Self.signUp(port: port, "before@example.com"))
        let backupFile = deployment.directory.appendingPathComponent("latchkey-backup.sqlite")
        let backup = try deployment.latchkey(["backup", "--to", backupFile.path])
        #expect(backup.status == 0, "\(backup.error)")
        #expect(Self.signUp(port: port, "after@example.com") != nil)

        // 1. Stop the server.
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)
        // 2. Move the current database and its -wal and -shm files aside.
        let aside = deployment.directory.appendingPathComponent("broken")
        try FileManager.default.createDirectory(at: aside, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: deployment.database.path + suffix) {
            try FileManager.default.moveItem(atPath: deployment.database.path + suffix, toPath: aside.appendingPathComponent("latchkey.sqlite" + suffix).path)
        }
        // 3. Copy the backup into place, mode 0600 (`install -m 0600 BACKUP DATABASE`).
        let install = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/install"), ["-m", "0600", backupFile.path, deployment.database.path])
        #expect(install.status == 0, "\(install.error)")
        // 4. The master key must be the one the backup was made with: another cannot unseal the
        // signing keys, and the server does not start.
        let otherKey = deployment.directory.appendingPathComponent("other.key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: otherKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: otherKey.path)
        await #expect(throws: ServerProcessError.self) {
            try await ServerProcess.start(["serve", "--config", deployment.config.path], in: deployment.directory, environment: ["LATCHKEY_MASTER_KEY_FILE": otherKey.path])
        }
        // 5. Start it with the same configuration and master key.
        (server, port) = try await deployment.serve()
        defer { server.stop() }

        let refresh = RawHTTP.exchange(port: port, RawHTTP.post("/v1/token", json: #"{"grant_type":"refresh_token","refresh_token":"\#(refreshToken)"}"#))
        guard case .response(let bytes) = refresh, let response = RawHTTP.parse(bytes) else {
            Issue.record("no answer to the refresh")
            return
        }
        #expect(response.status == 200)
        // WireTokenResponse requires access_token: the decode checks it is there.
        let body = try WireTokenResponse(parsing: response.body)
        #expect(body.refreshToken != refreshToken)
        // The restored database is the backup's: the later account is not in it.
        let login = RawHTTP.exchange(port: port, RawHTTP.post("/v1/auth/password/login", json: #"{"username":"after@example.com","password":"a long enough passphrase"}"#))
        guard case .response(let loginBytes) = login else {
            Issue.record("no answer to the login")
            return
        }
        #expect(RawHTTP.parse(loginBytes)?.status == 401)
    }
}

/// The sign-ups the server acknowledged, shared by the writer threads and the test.
final class Writing: Sendable {
    let acknowledged = Mutex<[String]>([])
    let stop = Atomic<Bool>(false)
}
