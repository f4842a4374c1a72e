import Foundation
import LatchkeyErrors
import LatchkeyStore
import LatchkeyTestSupport
import Synchronization
import Testing

/// The PostgreSQL driver against a real server (``PostgreSQLCluster``): binding, the pool's
/// bound and wait timeout, retries of serialization failures, statement timeouts, the advisory
/// lock of migrations.
@Suite("PostgreSQL driver")
struct PostgreSQLDatabaseTests {
    static let scratch = """
        CREATE TABLE scratch (
            id \(SQLDialect.postgreSQL.bigIntegerType) PRIMARY KEY, name TEXT UNIQUE, data \(SQLDialect.postgreSQL.blobType),
            number DOUBLE PRECISION, note TEXT
        )
        """

    @Test("every kind of value goes in as a parameter and comes back the same, NULL included")
    func bindingRoundTrips() async throws {
        try await withPostgreSQL { database, _ in
            try await database.write { try $0.execute(Self.scratch, []) }
            let allBytes = (0...255).map(UInt8.init)
            let rows: [(Int64, String?, [UInt8]?, Double?, String?)] = [
                (.max, "ünïcødé ✓ 🗝", allBytes, 1.5e-300, ""),
                (.min, "", [], -0.25, nil),
                (0, nil, nil, nil, "it's \"quoted\" -- not a comment ?"),
            ]
            try await database.write { connection in
                for row in rows {
                    try connection.execute(
                        "INSERT INTO scratch (id, name, data, number, note) VALUES (?, ?, ?, ?, ?)",
                        [.integer(row.0), SQLValue(row.1), SQLValue(row.2), SQLValue(row.3), SQLValue(row.4)])
                }
            }
            let read = try await database.read { try $0.query("SELECT * FROM scratch ORDER BY id", []) }
            #expect(read.count == 3)
            for (expected, row) in zip(rows.sorted { $0.0 < $1.0 }, read) {
                #expect(try row.int("id") == expected.0)
                #expect(row.optionalString("name") == expected.1)
                #expect(row.optionalBlob("data") == expected.2)
                #expect(row["number"].realValue == expected.3)
                #expect(row.optionalString("note") == expected.4)
            }
            // Parameters compared in WHERE, and values computed by the server.
            let found = try await database.read { connection in
                try connection.queryOne(
                    "SELECT id, count(*) OVER () AS n, data = ? AS same, id > ? AS bigger FROM scratch WHERE name = ?",
                    [.blob(allBytes), .integer(0), .text("ünïcødé ✓ 🗝")])
            }
            #expect(try found?.int("id") == .max)
            #expect(try found?.int("n") == 1)
            #expect(try found?.bool("same") == true)
            #expect(try found?.bool("bigger") == true)
        }
    }

    @Test("execute counts the rows changed; RETURNING and ON CONFLICT work as portable SQL")
    func changedRows() async throws {
        try await withPostgreSQL { database, _ in
            try await database.write { try $0.execute(Self.scratch, []) }
            let counts = try await database.write { connection in
                [
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?), (?, ?)", [1, "a", 2, "b"]),
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [1, "c"]),
                    try connection.execute("UPDATE scratch SET note = ? WHERE note IS NULL", ["x"]),
                    try connection.execute("UPDATE scratch SET note = ? WHERE note IS NULL", ["y"]),
                    try connection.execute("DELETE FROM scratch WHERE id = ?", [2]),
                ]
            }
            #expect(counts == [2, 0, 2, 0, 1])
            let returned = try await database.write { connection in
                try connection.queryOne("UPDATE scratch SET number = ? WHERE id = ? RETURNING id, number", [2.5, 1])
            }
            #expect(try returned?.double("number") == 2.5)
        }
    }

    @Test("a clash is a constraint error; a body that throws leaves nothing; one that swallows a failed statement commits nothing")
    func failuresRollBack() async throws {
        try await withPostgreSQL { database, _ in
            try await database.write { try $0.execute(Self.scratch, []) }
            try await database.write { try $0.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [1, "a"]) }
            await #expect(throws: StoreError.constraint()) {
                try await database.write { try $0.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [2, "a"]) }
            }
            struct Refusal: Error {}
            await #expect(throws: Refusal.self) {
                try await database.write { connection in
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [3, "c"])
                    throw Refusal()
                }
            }
            // PostgreSQL aborts the transaction at the failed statement: the insert before it must
            // not commit, and the caller must hear of it.
            await #expect(throws: StoreError.constraint()) {
                try await database.write { connection in
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [4, "d"])
                    _ = try? connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [5, "a"])
                    return true
                }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.write { try $0.execute("COMMIT", []) }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.read { try $0.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [6, "f"]) }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.read { try $0.query("SELECT * FROM scratch WHERE id = ?", []) }
            }
            await #expect(throws: StoreError.schema()) {
                try await database.read { try $0.query("SELECT * FROM no_such_table", []) }
            }
            let ids = try await database.read { try $0.query("SELECT id FROM scratch ORDER BY id", []).map { try $0.int("id") } }
            #expect(ids == [1])
        }
    }

    @Test("an unawaited statement rides with the next one: its failure fails that call or the commit, nothing commits, and the connection serves the next transaction")
    func unawaitedStatements() async throws {
        try await withPostgreSQL(configure: {
            $0.poolSize = 1
            $0.applicationName = "latchkey-unawaited-test"
        }) { database, configuration in
            try await database.write { try $0.execute(Self.scratch, []) }
            // Several in a row, then a read that sees them: the server runs them in order.
            let seen = try await database.write { connection in
                try connection.executeUnawaited("INSERT INTO scratch (id, name) VALUES (?, ?)", [1, "a"])
                try connection.executeUnawaited("INSERT INTO scratch (id, name) VALUES (?, ?)", [2, "b"])
                try connection.executeUnawaited("UPDATE scratch SET note = ? WHERE id = ?", ["n", 2])
                return try connection.query("SELECT id FROM scratch WHERE note IS NULL OR note = ? ORDER BY id", ["n"]).map { try $0.int("id") }
            }
            #expect(seen == [1, 2])
            // A clash found by the statement after it: that call throws it, and nothing commits.
            await #expect(throws: StoreError.constraint()) {
                try await database.write { connection in
                    try connection.executeUnawaited("INSERT INTO scratch (id, name) VALUES (?, ?)", [3, "c"])
                    try connection.executeUnawaited("INSERT INTO scratch (id, name) VALUES (?, ?)", [4, "a"])
                    return try connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [5, "e"])
                }
            }
            // A clash last in the body: the commit throws it.
            await #expect(throws: StoreError.constraint()) {
                try await database.write { connection in
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [6, "f"])
                    try connection.executeUnawaited("INSERT INTO scratch (id, name) VALUES (?, ?)", [7, "b"])
                }
            }
            // A body that throws with an unawaited statement in flight rolls back.
            struct Refusal: Error {}
            await #expect(throws: Refusal.self) {
                try await database.write { connection in
                    try connection.executeUnawaited("INSERT INTO scratch (id, name) VALUES (?, ?)", [8, "h"])
                    throw Refusal()
                }
            }
            let ids = try await database.read { try $0.query("SELECT id FROM scratch ORDER BY id", []).map { try $0.int("id") } }
            #expect(ids == [1, 2])
            // Reads commit unanswered; the next transaction on the one connection reads that
            // answer first and goes on.
            for id in 10...12 {
                _ = try await database.read { try $0.queryOne("SELECT count(*) AS n FROM scratch", []) }
                try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (?)", [.integer(Int64(id))]) }
            }
            let count = try await database.read { try $0.queryOne("SELECT count(*) AS n FROM scratch", [])?.int("n") }
            #expect(count == 5)
            // An unanswered COMMIT still ends the transaction on the server at once.
            var observing = configuration
            observing.applicationName = "latchkey-observer"
            let observer = try await PostgreSQLDatabase(configuration: observing)
            let idle = try await eventually(within: .seconds(2)) {
                try await observer.read { connection in
                    try connection.queryOne("SELECT state FROM pg_stat_activity WHERE application_name = ?", ["latchkey-unawaited-test"])?
                        .string("state") == "idle"
                }
            }
            await observer.close()
            #expect(idle)
        }
    }

    @Test("read-modify-write transactions that collide are retried (40001) until each has applied once")
    func serializationFailuresRetry() async throws {
        try await withPostgreSQL(configure: { $0.poolSize = 4 }) { database, _ in
            try await database.write { connection in
                try connection.execute(Self.scratch, [])
                try connection.execute("INSERT INTO scratch (id, number) VALUES (1, 0)", [])
            }
            let writers = 12
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<writers {
                    group.addTask {
                        try await database.write { connection in
                            // Read, wait so that the others read the same value, then write it back
                            // plus one: without serializable isolation and retries, updates get lost.
                            let value = try connection.queryOne("SELECT number FROM scratch WHERE id = 1", [])!.double("number")
                            _ = try connection.queryOne("SELECT pg_sleep(0.02) AS slept", [])
                            try connection.execute("UPDATE scratch SET number = ? WHERE id = 1", [.real(value + 1)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let value = try await database.read { try $0.queryOne("SELECT number FROM scratch WHERE id = 1", [])!.double("number") }
            #expect(value == Double(writers))
            #expect(await database.statistics().retries > 0)
        }
    }

    @Test("the pool holds at most its size of connections; a caller that waits past the wait timeout gets busy")
    func poolBoundAndWaitTimeout() async throws {
        try await withPostgreSQL(configure: {
            $0.poolSize = 2
            $0.waitTimeout = .milliseconds(300)
            $0.applicationName = "latchkey-pool-test"
        }) { database, _ in
            // Two transactions hold both connections for a second.
            let holders = (0..<2).map { _ in
                Task { try await database.read { _ = try $0.queryOne("SELECT pg_sleep(1) AS slept", []) } }
            }
            try await Task.sleep(for: .milliseconds(200))
            let started = ContinuousClock.now
            await #expect(throws: StoreError.busy()) {
                try await database.read { try $0.queryOne("SELECT 1 AS one", []) }
            }
            let waited = ContinuousClock.now - started
            #expect(waited >= .milliseconds(250) && waited < .milliseconds(900), "waited \(waited)")
            for holder in holders { try await holder.value }

            // Forty concurrent transactions share the two connections; all succeed.
            let peak = try await withThrowingTaskGroup(of: Int64.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        try await database.read { connection in
                            try connection.queryOne(
                                "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = ?", ["latchkey-pool-test"])!.int("n")
                        }
                    }
                }
                return try await group.reduce(0) { max($0, $1) }
            }
            #expect(peak >= 1 && peak <= 2)
            let figures = await database.statistics()
            #expect(figures.poolSize == 2 && figures.idle == 2 && figures.waiting == 0)
            #expect(figures.cacheHits > 30, "prepared statements are reused: \(figures)")
        }
    }

    @Test("a statement past the statement timeout fails with busy, and the connection serves the next one")
    func statementTimeout() async throws {
        try await withPostgreSQL(configure: {
            $0.poolSize = 1
            $0.statementTimeout = .milliseconds(200)
        }) { database, _ in
            let started = ContinuousClock.now
            await #expect(throws: StoreError.busy()) {
                try await database.read { try $0.queryOne("SELECT pg_sleep(3) AS slept", []) }
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            let seven = try await database.read { try $0.queryOne("SELECT 7 AS seven", [])?.int("seven") }
            #expect(seven == 7)
        }
    }

    @Test("connections ended by the server are replaced: the next transaction reconnects by itself")
    func terminatedConnectionsReconnect() async throws {
        try await withPostgreSQL(configure: {
            $0.poolSize = 2
            $0.applicationName = "latchkey-terminate-test"
        }) { database, configuration in
            try await database.write { try $0.execute(Self.scratch, []) }
            let cluster = try PostgreSQLCluster.shared()
            try cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'latchkey-terminate-test'")
            try await Task.sleep(for: .milliseconds(100))
            for id in 1...4 {
                try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (?)", [.integer(Int64(id))]) }
            }
            #expect(try await database.read { try $0.queryOne("SELECT count(*) AS n FROM scratch", [])?.int("n") } == 4)
        }
    }

    @Test("a wrong password or an unreachable server is unavailable, and the error holds no password")
    func loginFailures() async throws {
        let cluster = try PostgreSQLCluster.shared()
        let wrong = "not-the-password-\(UUID().uuidString)"
        do {
            _ = try await PostgreSQLDatabase(configuration: .init(url: cluster.url(database: "postgres"), password: wrong))
            Issue.record("a wrong password was accepted")
        } catch let error as StoreError {
            #expect(error.code == .unavailable)
            #expect(!error.description.contains(wrong))
            #expect(!error.description.contains(cluster.password))
        }
        // The password inside the URL works too, and is shown redacted.
        let inURL = cluster.url.replacingOccurrences(of: "latchkey@", with: "latchkey:\(cluster.password)@")
        let database = try await PostgreSQLDatabase(configuration: .init(url: inURL))
        #expect(await database.isHealthy())
        await database.close()
        #expect(try PostgreSQLURL(inURL).redacted == cluster.url.replacingOccurrences(of: "latchkey@", with: "latchkey:***@"))
        #expect(try PostgreSQLURL(inURL).hasPassword)
        // Nothing listens on port 1.
        await #expect(throws: StoreError.unavailable()) {
            _ = try await PostgreSQLDatabase(configuration: .init(url: "postgresql://latchkey@127.0.0.1:1/postgres?sslmode=disable"))
        }
        #expect(throws: StoreError.misuse()) { try PostgreSQLURL("postgres://u@h:99999/db") }
        #expect(throws: StoreError.misuse()) { try PostgreSQLURL("mysql://u@h/db") }
        #expect(PostgreSQLURL.redact("postgres://u@h/db?sslmode=require&password=hunter2") == "postgres://u@h/db?sslmode=require&password=***")
    }

    @Test("instances migrating one database together apply each migration once (advisory lock)")
    func concurrentMigrations() async throws {
        try await withPostgreSQL { _, configuration in
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let database = try await PostgreSQLDatabase(configuration: configuration)
                        do {
                            let applied = try await Migrator.migrate(database).map(\.version)
                            await database.close()
                            return applied
                        } catch {
                            await database.close()
                            throw error
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            #expect(applied.sorted() == LatchkeySchema.migrations.map(\.version))
        }
    }
}
