import Foundation
import LatchkeyCrypto
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Synchronization
import Testing

/// SIGKILL in the middle of refresh traffic, again and again: every transaction either happened
/// whole or not at all (docs/security.md S8, S28).
@Suite("Crash safety")
struct CrashSafetyTests {
    @Test("S28: SIGKILL during refresh load leaves one live refresh token per session, and a client holding the newest token can refresh")
    func s28KillDuringRefresh() async throws {
        let directory = try TemporaryDirectory("crash").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = TestServer.configuration(in: directory)
        let configFile = directory.appendingPathComponent("latchkey.json")
        try Data(#"{"database":"\#(configuration.database)","master_key_file":"\#(configuration.masterKeyFile)","dev":true,"listen":"127.0.0.1:0"}"#.utf8).write(to: configFile)

        // Sessions made beforehand in this process, as a sign-in would have made them.
        var tokens = try await {
            let application = try await LatchkeyApplication.open(configuration: configuration, accessLog: false)
            let users = UserRepository(database: application.database)
            let user = try await application.database.write { try users.create(email: "crash@example.com", now: Date(), on: $0) }
            var tokens = [String]()
            for _ in 0..<16 {
                tokens.append(try await application.services.signIns.startSession(userID: user.id, amr: ["pwd"], context: RequestContext()).refreshToken)
            }
            await application.shutdown()
            return tokens
        }()
        var alive = Array(tokens.indices)

        for round in 0..<4 {
            let server = try await ServerProcess.start(["serve", "--config", configFile.path], in: directory)
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let latest = Chains(Dictionary(uniqueKeysWithValues: alive.map { ($0, tokens[$0]) }))
            let workers = alive
            _ = await BlockingWorkers.run(workers.count, { index in
                let worker = workers[index]
                while true {
                    let token = latest.tokens.withLock { $0[worker]! }
                    let result = RawHTTP.exchange(port: port, RawHTTP.post("/v1/token", json: #"{"grant_type":"refresh_token","refresh_token":"\#(token)"}"#), timeout: 5)
                    guard case .response(let bytes) = result, let response = RawHTTP.parse(bytes), response.status == 200,
                        let next = (try? WireTokenResponse(parsing: response.body))?.refreshToken
                    else { return }
                    latest.tokens.withLock { $0[worker] = next }
                    // A client pauses between refreshes, so a kill usually finds it holding its
                    // newest token rather than waiting for an answer the kill will swallow.
                    usleep(UInt32.random(in: 5_000...20_000))
                }
            }, after: 0.3 + 0.15 * Double(round), do: { server.send(SIGKILL) })
            _ = await server.waitForExit(timeout: 10)
            for (worker, token) in latest.tokens.withLock({ $0 }) { tokens[worker] = token }

            // The database as the crash left it.
            let database = try SQLiteDatabase(configuration: .init(path: configuration.sqlitePath))
            #expect(try await database.integrityCheck())
            let rows = try await database.read { try $0.query("SELECT session_id, token_hash, retired_at, replaced_by FROM refresh_tokens") }
            await database.close()
            let bySession = Dictionary(grouping: rows) { (try? $0.string("session_id")) ?? "" }
            #expect(bySession.count == 16)
            for (session, rows) in bySession {
                #expect(rows.filter { $0.optionalInt("retired_at") == nil }.count == 1, "session \(session) after round \(round)")
            }
            // Each client's newest token is either the live one, or was rotated by a request whose
            // answer the kill swallowed. That client goes on as a real one does after a lost answer:
            // it presents the same token again, and the reuse grace (S8, 60 s by default) hands it
            // the same live successor. (Ending such a chain instead made the test a lottery: on a
            // loaded machine more requests are in flight at each kill, and after four rounds every
            // one of the 16 chains could have ended.)
            alive = alive.filter { worker in
                let hash = HashFunction.sha256.hash(Array(tokens[worker].utf8))
                guard let row = rows.first(where: { (try? $0.blob("token_hash")) == hash }) else {
                    Issue.record("worker \(worker)'s token is not in the database")
                    return false
                }
                if row.optionalInt("retired_at") == nil { return true }
                let replacement = row.optionalBlob("replaced_by")
                let replacedByLive = rows.contains { (try? $0.blob("token_hash")) == replacement && $0.optionalInt("retired_at") == nil }
                #expect(replacedByLive, "a retired token was replaced by the live one")
                return replacedByLive
            }
        }
        #expect(!alive.isEmpty)

        // After the last restart every client holding the live token refreshes successfully.
        let server = try await ServerProcess.start(["serve", "--config", configFile.path], in: directory)
        let port = try #require(URLComponents(string: server.baseURL)?.port)
        for worker in alive {
            let result = RawHTTP.exchange(port: port, RawHTTP.post("/v1/token", json: #"{"grant_type":"refresh_token","refresh_token":"\#(tokens[worker])"}"#))
            guard case .response(let bytes) = result else {
                Issue.record("no answer")
                continue
            }
            #expect(RawHTTP.parse(bytes)?.status == 200, "worker \(worker)")
        }
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)
    }
}

/// The newest refresh token each client holds, shared by the client tasks.
final class Chains: Sendable {
    let tokens: Mutex<[Int: String]>
    init(_ tokens: [Int: String]) { self.tokens = Mutex(tokens) }
}
