import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Synchronization
import Testing

/// The PostgreSQL server going away under the driver, on a cluster of the test's own (stopping
/// the shared one would fail the other tests).
@Suite("PostgreSQL driver: the server goes down and comes back")
struct PostgreSQLOutageTests {
    @Test("while the server is down transactions fail fast with unavailable and health is false; once it is back, service returns by itself")
    func outageAndRecovery() async throws {
        let cluster = try PostgreSQLCluster.start()
        defer { try? cluster.stop() }
        try await withPostgreSQL(cluster: cluster, configure: { $0.poolSize = 3 }) { database, _ in
            try await database.write { try $0.execute("CREATE TABLE marks (id BIGINT PRIMARY KEY)", []) }
            #expect(await database.isHealthy())

            try cluster.down()
            for id in 1...3 {
                let started = ContinuousClock.now
                await #expect(throws: StoreError.unavailable()) {
                    try await database.write { try $0.execute("INSERT INTO marks (id) VALUES (?)", [.integer(Int64(id))]) }
                }
                #expect(ContinuousClock.now - started < .seconds(2), "a refused connection fails at once")
            }
            #expect(await database.isHealthy() == false)

            try cluster.up()
            let back = ContinuousClock.now
            var recovered = false
            while ContinuousClock.now - back < .seconds(10) {
                if (try? await database.write({ try $0.execute("INSERT INTO marks (id) VALUES (?)", [42]) })) != nil {
                    recovered = true
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(recovered, "writes succeed again within 10 s of the server's return")
            #expect(await database.isHealthy())
            // Every pooled connection works again, not only the first.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 100..<106 {
                    group.addTask {
                        try await database.write { connection in
                            _ = try connection.execute("INSERT INTO marks (id) VALUES (?)", [.integer(Int64(id))])
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await database.read { try $0.queryOne("SELECT count(*) AS n FROM marks", [])?.int("n") } == 7)
        }
    }

    @Test("a connection whose backend stops answering (SIGSTOP) is given up after the response timeout and the transaction runs on a new one")
    func frozenBackend() async throws {
        try await withPostgreSQL(configure: {
            $0.poolSize = 1
            $0.responseTimeout = .milliseconds(500)
        }) { database, _ in
            let pid = try await database.read { try $0.queryOne("SELECT pg_backend_pid() AS pid", [])!.int("pid") }
            #expect(kill(pid_t(pid), SIGSTOP) == 0)
            defer { kill(pid_t(pid), SIGCONT) }
            try await Task.sleep(for: .milliseconds(100))
            let started = ContinuousClock.now
            let next = try await database.read { try $0.queryOne("SELECT pg_backend_pid() AS pid", [])!.int("pid") }
            let waited = ContinuousClock.now - started
            #expect(next != pid)
            #expect(waited >= .milliseconds(450) && waited < .seconds(3), "waited \(waited)")
        }
    }

    @Test("a whole server that stops answering (every process SIGSTOPped) fails transactions with unavailable within seconds, not minutes; it recovers on SIGCONT")
    func frozenServer() async throws {
        let cluster = try PostgreSQLCluster.start()
        defer { try? cluster.stop() }
        try await withPostgreSQL(cluster: cluster, configure: {
            $0.poolSize = 2
            $0.responseTimeout = .milliseconds(500)
            $0.connectTimeout = .seconds(2)
        }) { database, _ in
            try await database.write { try $0.execute("CREATE TABLE marks (id BIGINT PRIMARY KEY)", []) }
            let postmaster = try #require(pid_t(try String(contentsOfFile: cluster.directory + "/data/postmaster.pid", encoding: .utf8)
                .split(separator: "\n")[0]))
            let processes = [postmaster] + Self.children(of: postmaster)
            for process in processes { kill(process, SIGSTOP) }
            defer { for process in processes { kill(process, SIGCONT) } }
            let started = ContinuousClock.now
            await #expect(throws: StoreError.unavailable()) {
                try await database.write { try $0.execute("INSERT INTO marks (id) VALUES (1)", []) }
            }
            let waited = ContinuousClock.now - started
            #expect(waited < .seconds(6), "waited \(waited)")
            #expect(await database.isHealthy() == false)
            for process in processes { kill(process, SIGCONT) }
            try await Task.sleep(for: .milliseconds(200))
            try await database.write { try $0.execute("INSERT INTO marks (id) VALUES (2)", []) }
            #expect(await database.isHealthy())
        }
    }

    @Test("a LISTEN connection whose backend stops answering (SIGSTOP) is noticed by its liveness check, made again, and the change it missed is delivered")
    func frozenListener() async throws {
        try await withPostgreSQL(configure: {
            $0.listenerCheckInterval = .seconds(1)
            $0.responseTimeout = .milliseconds(500)
        }) { database, _ in
            let changes = Atomic<Int>(0)
            let subscription = database.subscribe(to: "marks") { changes.add(1, ordering: .relaxed) }
            defer { subscription.cancel() }
            var listener: Int64?
            let deadline = ContinuousClock.now + .seconds(5)
            while listener == nil, ContinuousClock.now < deadline {
                listener = try await database.read {
                    try $0.queryOne(
                        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN marks'", [])?.int("pid")
                }
                if listener == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let pid = pid_t(try #require(listener, "the listener's session is in pg_stat_activity"))
            #expect(kill(pid, SIGSTOP) == 0)
            defer { kill(pid, SIGCONT) }
            // Announced while the listener's backend hangs: that backend never passes it on, and
            // its socket neither errs nor closes.
            let before = changes.load(ordering: .relaxed)
            try await database.write { try $0.announceChange(on: "marks") }
            let announced = ContinuousClock.now
            while changes.load(ordering: .relaxed) == before, ContinuousClock.now - announced < .seconds(8) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(changes.load(ordering: .relaxed) > before, "the listener noticed the hung connection and told of a possible change")
            #expect(ContinuousClock.now - announced < .seconds(5), "within the check interval, the response timeout and a reconnection")
        }
    }

    /// The processes whose parent is `parent` (PostgreSQL's backends and helpers).
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }
}
