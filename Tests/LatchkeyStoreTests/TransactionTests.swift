import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Testing

@Suite("Transactions")
struct TransactionTests {
    struct Boom: Error {}

    /// A query that keeps SQLite busy for a millisecond or so.
    static let busyWork = """
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) SELECT count(*) AS n FROM c
        """

    @Test("S28: a write that inserts and then throws leaves nothing behind")
    func s28RollbackOnThrow() async throws {
        try await withDatabase { database, _ in
            try await createScratchTable(database)
            await #expect(throws: Boom.self) {
                try await database.write { connection in
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (1, 'a')", [])
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (2, 'b')", [])
                    throw Boom()
                }
            }
            #expect(try await count("scratch", in: database) == 0)
            // The connection is usable afterwards and not stuck in the old transaction.
            try await database.write { try $0.execute("INSERT INTO scratch (id, name) VALUES (3, 'c')", []) }
            #expect(try await count("scratch", in: database) == 1)
        }
    }

    @Test("S28: a constraint failure mid-transaction rolls back the statements before it")
    func s28ConstraintRollsBack() async throws {
        try await withDatabase { database, _ in
            try await createScratchTable(database)
            try await database.write { try $0.execute("INSERT INTO scratch (id, name) VALUES (1, 'taken')", []) }
            let error = await #expect(throws: StoreError.constraint()) {
                try await database.write { connection in
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (2, 'fresh')", [])
                    try connection.execute("UPDATE scratch SET note = 'changed' WHERE id = 1", [])
                    try connection.execute("INSERT INTO scratch (id, name) VALUES (3, ?)", ["taken"])
                }
            }
            #expect(error?.message.contains("UNIQUE") == true)
            #expect(error?.message.contains("taken") == false)
            let rows = try await database.read { try $0.query("SELECT id, note FROM scratch", []) }
            #expect(rows.count == 1)
            #expect(rows.first?["note"] == .null)
        }
    }

    @Test("a read sees one snapshot and can run while a long write holds the lock (WAL)")
    func readsDuringLongWrite() async throws {
        try await withDatabase(readers: 2) { database, _ in
            try await createScratchTable(database)
            try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (1)", []) }
            // Stay inside the transaction until the reads are done; a reader blocked behind this
            // write would make the wait time out and the test fail instead of hang.
            let writing = await HeldWrite(on: database) { try $0.execute("INSERT INTO scratch (id) VALUES (2)", []) }
            let started = ContinuousClock.now
            async let first = count("scratch", in: database)
            async let second = count("scratch", in: database)
            let counts = try await [first, second]
            let waited = ContinuousClock.now - started
            #expect(try await writing.release(), "the write was released by the reads, not by the timeout")
            #expect(counts == [1, 1], "readers see the last commit, not the open transaction")
            #expect(waited < .seconds(5))
            #expect(try await count("scratch", in: database) == 2)
        }
    }

    @Test("writes are serialised: concurrent increments lose no update")
    func serialisedWrites() async throws {
        try await withDatabase { database, _ in
            try await database.write { connection in
                try connection.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", [])
                try connection.execute("INSERT INTO counter VALUES (1, 0)", [])
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        try await database.write { connection in
                            let n = try connection.queryOne("SELECT n FROM counter WHERE id = 1", [])!.int("n")
                            try connection.execute("UPDATE counter SET n = ? WHERE id = 1", [.integer(n + 1)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let n = try await database.read { try $0.queryOne("SELECT n FROM counter", [])!.int("n") }
            #expect(n == 200)
        }
    }

    @Test("S28: writes that commit together stay apart: one that throws leaves nothing, its neighbours land")
    func groupCommitIsolation() async throws {
        struct Refused: Error {}
        try await withDatabase { database, _ in
            try await database.write { try $0.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, note TEXT)", []) }
            let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for id in 0..<300 {
                    group.addTask {
                        do {
                            try await database.write { connection in
                                try connection.execute("INSERT INTO log (id, note) VALUES (?, 'a')", [.integer(Int64(id))])
                                try connection.execute("UPDATE log SET note = 'b' WHERE id = ?", [.integer(Int64(id))])
                                if id % 7 == 0 { throw Refused() }
                            }
                            return (id, true)
                        } catch is Refused {
                            return (id, false)
                        }
                    }
                }
                return try await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            let stored = try await database.read { connection in
                try connection.query("SELECT id, note FROM log ORDER BY id", []).map { (Int(try $0.int("id")), try $0.string("note")) }
            }
            #expect(stored.map(\.0) == (0..<300).filter { $0 % 7 != 0 })
            #expect(stored.allSatisfy { $0.1 == "b" })
            #expect(outcomes.filter { !$0.value }.count == 43)
        }
    }

    @Test("two databases on one file (as two processes) both write under contention; every write lands")
    func twoInstancesContend() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("shared.sqlite")
        let first = try SQLiteDatabase(configuration: .init(path: path))
        let second = try SQLiteDatabase(configuration: .init(path: path))
        do {
            try await first.write { connection in
                try connection.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", [])
                try connection.execute("INSERT INTO counter VALUES (1, 0)", [])
                try connection.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, writer TEXT NOT NULL)", [])
            }
            let perInstance = 150
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, database) in [("first", first), ("second", second)] {
                    for _ in 0..<perInstance {
                        group.addTask {
                            // Read-modify-write: lost updates would show if the lock did not hold.
                            try await database.write { connection in
                                let n = try connection.queryOne("SELECT n FROM counter WHERE id = 1", [])!.int("n")
                                try connection.execute("UPDATE counter SET n = ? WHERE id = 1", [.integer(n + 1)])
                                try connection.execute("INSERT INTO log (writer) VALUES (?)", [.text(name)])
                                // Hold the lock for a millisecond or so, so the two
                                // instances really meet it taken.
                                _ = try connection.queryOne(Self.busyWork, [])
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let n = try await second.read { try $0.queryOne("SELECT n FROM counter", [])!.int("n") }
            #expect(n == Int64(2 * perInstance))
            let perWriter = try await first.read {
                try $0.query("SELECT writer, count(*) AS n FROM log GROUP BY writer ORDER BY writer", [])
            }
            #expect(try perWriter.map { try $0.int("n") } == [Int64(perInstance), Int64(perInstance)])
            // They did contend: each waited for the other's lock at some point.
            let (firstWaits, secondWaits) = await (first.statistics().busyWaits, second.statistics().busyWaits)
            #expect(firstWaits + secondWaits > 0, "first \(firstWaits), second \(secondWaits)")
        } catch {
            await first.close()
            await second.close()
            throw error
        }
        await first.close()
        await second.close()
    }

    @Test(
        "another process (the sqlite3 shell) and this one write the same file at once; every write lands",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func anotherProcessWrites() async throws {
        try await withDatabase { database, directory in
            try await database.write { try $0.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, writer TEXT NOT NULL)", []) }
            let rounds = 300
            let script =
                ".bail on\n.timeout 10000\n"
                + String(repeating: "BEGIN IMMEDIATE; INSERT INTO log (writer) VALUES ('shell'); COMMIT;\n", count: rounds)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [directory.file("test.sqlite")]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try Subprocess.launch(process)
            let feeding = Task.detached {
                try input.fileHandleForWriting.write(contentsOf: Data(script.utf8))
                try input.fileHandleForWriting.close()
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<rounds {
                    group.addTask {
                        _ = try await database.write { try $0.execute("INSERT INTO log (writer) VALUES ('api')", []) }
                    }
                }
                try await group.waitForAll()
            }
            try await feeding.value
            let message = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "sqlite3 said: \(message)")
            let perWriter = try await database.read {
                try $0.query("SELECT writer, count(*) AS n FROM log GROUP BY writer ORDER BY writer", [])
                    .map { "\(try $0.string("writer"))=\(try $0.int("n"))" }
            }
            #expect(perWriter == ["api=\(rounds)", "shell=\(rounds)"])
        }
    }

    @Test("a full queue refuses more work at once with busy instead of queueing without bound")
    func boundedQueue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try SQLiteDatabase(configuration: .init(path: directory.file("queue.sqlite"), queueLimit: 1))
        try await createScratchTable(database)
        let wedged = await HeldWrite(on: database)
        let started = ContinuousClock.now
        let error = await #expect(throws: StoreError.busy()) {
            try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (1)", []) }
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(error?.message.contains("queue is full") == true)
        // Readers have queues of their own.
        #expect(try await count("scratch", in: database) == 0)
        #expect(await database.statistics().queuedWrites == 1)
        #expect(try await wedged.release())
        try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (1)", []) }
        #expect(try await count("scratch", in: database) == 1)
        await database.close()
    }

    @Test("a write gives up with busy after the timeout when another process holds the lock")
    func busyAfterTimeout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("busy.sqlite")
        let holder = try SQLiteDatabase(configuration: .init(path: path))
        let waiter = try SQLiteDatabase(configuration: .init(path: path, busyTimeout: .milliseconds(200)))
        try await createScratchTable(holder)
        let holding = await HeldWrite(on: holder) { try $0.execute("INSERT INTO scratch (id) VALUES (1)", []) }
        let started = ContinuousClock.now
        await #expect(throws: StoreError.busy()) {
            try await waiter.write { try $0.execute("INSERT INTO scratch (id) VALUES (2)", []) }
        }
        let waited = ContinuousClock.now - started
        #expect(try await holding.release())
        #expect(waited >= .milliseconds(180) && waited < .seconds(3), "waited \(waited)")
        // Once the lock is free, the same database writes normally.
        try await waiter.write { try $0.execute("INSERT INTO scratch (id) VALUES (3)", []) }
        #expect(try await count("scratch", in: waiter) == 2)
        await holder.close()
        await waiter.close()
    }
}
