import Foundation
import LatchkeyStore
import LatchkeyTestSupport
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
}
