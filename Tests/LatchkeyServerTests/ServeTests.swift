import Foundation
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// `latchkey serve` and `latchkey migrate` as an operator runs them: a child process, its
/// banner, its exit status, its signals.
@Suite("latchkey serve")
struct ServeTests {
    static func temporaryDirectory() throws -> URL {
        try TemporaryDirectory("serve").url
    }

    @Test("--dev creates its data folder and a 0600 master key, prints the banner, answers, and stops on SIGTERM with 0")
    func devMode() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
        #expect(server.banner.contains("DEVELOPMENT MODE"))
        #expect(server.banner.contains("curl \(server.baseURL)/healthz"))
        #expect(server.banner.contains("\(server.baseURL)/sandbox/mail"))
        let key = directory.appendingPathComponent("latchkey-data/master.key").path
        #expect(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int == 0o600)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("latchkey-data/latchkey.sqlite").path))

        let port = try #require(URLComponents(string: server.baseURL)?.port)
        guard case .response(let bytes) = RawHTTP.exchange(port: port, RawHTTP.get("/healthz")), let response = RawHTTP.parse(bytes) else {
            Issue.record("no complete answer from /healthz")
            return
        }
        #expect(response.status == 200)
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)
        #expect(server.errors.contains("stopped"))
    }

    @Test("a bad setting stops start-up with one line naming it, exit 1")
    func badConfiguration() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("latchkey.json")
        try Data(#"{"apple": {"teamid": "X"}, "access_token_ttl": 5}"#.utf8).write(to: file)
        let result = try Subprocess.run(Executables.latchkey, ["serve", "--config", file.path], directory: directory)
        let text = result.error
        #expect(result.status == 1)
        #expect(text.contains("apple.teamid: unknown setting"))
        #expect(text.contains("access_token_ttl: must be between"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("latchkey-data").path), "nothing is created")
    }

    @Test("outside development mode a missing master key stops start-up")
    func missingMasterKey() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Subprocess.run(Executables.latchkey, ["serve", "--listen", "127.0.0.1:0"], directory: directory)
        #expect(result.status == 1)
        #expect(result.error.contains("master_key_file:"))
    }

    @Test("migrate applies the schema once, then reports the version")
    func migrate() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("latchkey.json")
        try Data(#"{"database": "sqlite:\#(directory.path)/data/db.sqlite"}"#.utf8).write(to: file)
        let first = try Subprocess.run(Executables.latchkey, ["migrate", "--config", file.path])
        #expect(first.status == 0)
        #expect(first.output.contains("applied 1:"))
        let second = try Subprocess.run(Executables.latchkey, ["migrate", "--config", file.path])
        #expect(second.status == 0)
        #expect(!second.output.contains("applied"))
        #expect(second.output.contains("is at version \(LatchkeySchema.migrations.map(\.version).max()!)"))
    }

    @Test("S28: SIGTERM during load: exit 0, no response cut in half, and the database passes integrity_check")
    func s28GracefulShutdownUnderLoad() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
        let port = try #require(URLComponents(string: server.baseURL)?.port)

        let tallies = await BlockingWorkers.run(8, { worker in
            var tally = (complete: 0, refused: 0, partial: 0)
            let path = worker % 2 == 0 ? "/healthz" : "/readyz"
            // Until the server is gone: each connection is answered completely or refused.
            while true {
                switch RawHTTP.exchange(port: port, RawHTTP.get(path), timeout: 5) {
                case .refused:
                    tally.refused += 1
                    return tally
                case .response(let bytes):
                    if let response = RawHTTP.parse(bytes), response.status == 200 {
                        tally.complete += 1
                    } else {
                        tally.partial += 1
                        print("cut or failed answer: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                    }
                }
            }
        }, after: 0.7, do: { server.send(SIGTERM) })
        let results = tallies.reduce(into: (complete: 0, refused: 0, partial: 0)) { total, tally in
            total.complete += tally.complete
            total.refused += tally.refused
            total.partial += tally.partial
        }
        #expect(await server.waitForExit(timeout: 15) == 0)
        #expect(results.complete > 50, "the load ran (\(results.complete) complete answers)")
        #expect(results.partial == 0, "\(results.partial) answers were cut or malformed")

        let database = try SQLiteDatabase(configuration: .init(path: directory.appendingPathComponent("latchkey-data/latchkey.sqlite").path))
        #expect(try await database.integrityCheck())
        await database.close()
    }
}
