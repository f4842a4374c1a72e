import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Testing

@Suite("SQLiteDatabase")
struct SQLiteDatabaseTests {
    @Test("opens, creates the file, closes, and closing twice is harmless")
    func openClose() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("open.sqlite")
        let database = try SQLiteDatabase(configuration: .init(path: path))
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(await database.isHealthy())
        await database.close()
        await database.close()
        #expect(await database.isHealthy() == false)
    }

    @Test("a missing directory is an io error, not a crash")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(throws: StoreError.io()) {
            try SQLiteDatabase(configuration: .init(path: directory.file("no/such/dir/db.sqlite")))
        }
    }

    @Test("a file that is not a database is refused as corrupt")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("garbage.sqlite")
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.corrupt()) {
            try SQLiteDatabase(configuration: .init(path: path))
        }
    }

    @Test("configuration out of range is misuse")
    func badConfiguration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(throws: StoreError.misuse()) {
            try SQLiteDatabase(configuration: .init(path: directory.file("x.sqlite"), readers: 0))
        }
    }

    @Test("WAL, foreign keys and synchronous=FULL are in effect on readers and the writer; durability normal is synchronous=NORMAL")
    func pragmas() async throws {
        for durability in SQLiteDatabase.Durability.allCases {
            try await withDatabase(durability: durability) { database, _ in
                for probe in [ProbeConnection.reader, .writer] {
                    let (journal, foreignKeys, synchronous) = try await probe.run(database) { connection in
                        (
                            try connection.queryOne("PRAGMA journal_mode", [])!.string("journal_mode"),
                            try connection.queryOne("PRAGMA foreign_keys", [])!.int("foreign_keys"),
                            try connection.queryOne("PRAGMA synchronous", [])!.int("synchronous")
                        )
                    }
                    #expect(journal == "wal", "\(probe)")
                    #expect(foreignKeys == 1, "\(probe)")
                    // 2 is FULL, 1 is NORMAL.
                    #expect(synchronous == (durability == .full ? 2 : 1), "\(probe) \(durability)")
                }
            }
        }
    }

    @Test("every value type round-trips: NULL, integer limits, reals, unicode, blobs, empty values")
    func roundTrip() async throws {
        try await withDatabase { database, _ in
            try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v)", []) }
            let values: [SQLValue] = [
                .null, .integer(0), .integer(1), .integer(-1), .integer(.max), .integer(.min), .integer(1 << 53 + 1),
                .real(0.1), .real(-2.5e300), .real(.infinity), .real(-.infinity), .real(.leastNonzeroMagnitude),
                .text(""), .text("plain"), .text("héllo wörld ✓ 日本語 🔐 \u{1F469}\u{200D}\u{1F4BB}"),
                .text("e\u{301}"), .blob([]), .blob([0]), .blob(Array(0...255)),
                .blob([UInt8](repeating: 0xAB, count: 1 << 20)), true, false,
            ]
            try await database.write { connection in
                for (index, value) in values.enumerated() {
                    try connection.execute("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(Int64(index)), value])
                }
            }
            let rows = try await database.read { try $0.query("SELECT k, v FROM t ORDER BY k", []) }
            #expect(rows.count == values.count)
            for row in rows {
                let index = Int(try row.int("k"))
                #expect(row["v"] == values[index], "value \(index)")
            }
        }
    }

    @Test("hostile values round-trip: quotes, SQL, NUL bytes in text and blobs")
    func hostileValues() async throws {
        try await withDatabase { database, _ in
            try await createScratchTable(database)
            let texts = [
                "'", "''", "\"", "'; DROP TABLE scratch; --", "Robert'); DROP TABLE scratch;--", "a\0b", "\0", "\0\0'\0",
                "?", "?1 $1 :name @name", "\\", "%_", String(repeating: "x", count: 100_000),
                "\u{FEFF}bom", "\u{202E}rtl",
            ]
            try await database.write { connection in
                for (index, text) in texts.enumerated() {
                    let blob = Array(text.utf8) + [0, 0, 39, 0]
                    try connection.execute(
                        "INSERT INTO scratch (id, name, data, note) VALUES (?, ?, ?, ?)",
                        [.integer(Int64(index)), .text(text), .blob(blob), .text(text)])
                }
            }
            #expect(try await count("scratch", in: database) == Int64(texts.count))
            for (index, text) in texts.enumerated() {
                let row = try await database.read {
                    try $0.queryOne("SELECT id, data, note FROM scratch WHERE name = ?", [.text(text)])
                }
                let found = try #require(row, "text \(index)")
                #expect(try found.int("id") == Int64(index))
                #expect(try found.string("note") == text)
                #expect(try found.blob("data") == Array(text.utf8) + [0, 0, 39, 0])
            }
            // SQLite counts a text with a NUL inside in full too.
            let length = try await database.read {
                try $0.queryOne("SELECT length(CAST(? AS BLOB)) AS n", [.text("a\0b")])!.int("n")
            }
            #expect(length == 3)
        }
    }

    @Test("typed accessors are strict and name the column, never the value")
    func typedAccessors() async throws {
        try await withDatabase { database, _ in
            let row = try await database.read { connection in
                try connection.queryOne(
                    "SELECT 7 AS i, 'secret-value' AS s, x'0102' AS b, NULL AS n, 1 AS yes, 2 AS two, 1.5 AS r", [])!
            }
            #expect(try row.int("i") == 7)
            #expect(try row.string("s") == "secret-value")
            #expect(try row.blob("b") == [1, 2])
            #expect(try row.bool("yes"))
            #expect(try row.double("r") == 1.5)
            #expect(try row.double("i") == 7)
            #expect(row.optionalInt("n") == nil)
            #expect(row.optionalString("n") == nil)
            #expect(row.optionalBlob("missing") == nil)
            #expect(row["missing"] == .null)
            #expect(row.contains("s") && !row.contains("missing"))
            let attempts: [() throws -> Void] = [
                { _ = try row.int("s") }, { _ = try row.string("i") }, { _ = try row.blob("n") },
                { _ = try row.bool("two") }, { _ = try row.int("missing") },
            ]
            for attempt in attempts {
                let error = #expect(throws: StoreError.typeMismatch()) { try attempt() }
                #expect(error?.message.contains("secret-value") == false)
            }
        }
    }

    @Test("literals and conversions build the expected values")
    func valueConversions() {
        let optionalText: String? = nil
        let values: [SQLValue] = [
            nil, 42, 1.5, "text", true, SQLValue(optionalText), SQLValue([UInt8]([1])),
            SQLValue(Date(timeIntervalSince1970: 1_700_000_000.9)), SQLValue(Int32(-3)),
        ]
        #expect(
            values == [
                .null, .integer(42), .real(1.5), .text("text"), .integer(1), .null, .blob([1]), .integer(1_700_000_000),
                .integer(-3),
            ])
        #expect(SQLValue.time(Date(timeIntervalSince1970: -0.5)) == .integer(-1))
    }

    @Test("prepared statements are cached and reused, and the cache is bounded")
    func statementCache() async throws {
        try await withDatabase(readers: 1, statementCacheSize: 5) { database, _ in
            try await createScratchTable(database)
            let before = await database.statistics()
            for index in 0..<50 {
                try await database.write {
                    try $0.execute(
                        "INSERT INTO scratch (id, name) VALUES (?, ?)", [.integer(Int64(index)), .text("n\(index)")])
                }
            }
            let after = await database.statistics()
            // BEGIN IMMEDIATE, SAVEPOINT, the INSERT, RELEASE and COMMIT: prepared at most once
            // each, then reused.
            #expect(after.cacheMisses - before.cacheMisses <= 5)
            #expect(after.cacheHits - before.cacheHits >= 245)
            // More distinct statements than the capacity: the cache stays bounded.
            try await database.read { connection in
                for index in 0..<20 { _ = try connection.queryOne("SELECT \(index) AS n", []) }
            }
            #expect(await database.statistics().cachedStatements <= 10, "5 on the writer, 5 on the reader")
        }
    }

    @Test("a statement cache of size 0 still works")
    func noStatementCache() async throws {
        try await withDatabase(statementCacheSize: 0) { database, _ in
            try await createScratchTable(database)
            try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (?)", [1]) }
            #expect(try await count("scratch", in: database) == 1)
            #expect(await database.statistics().cachedStatements == 0)
        }
    }

    @Test("misuse: several statements in one call, wrong binding count, NUL in SQL, writes in read")
    func misuse() async throws {
        try await withDatabase { database, _ in
            try await createScratchTable(database)
            await #expect(throws: StoreError.misuse()) {
                try await database.write {
                    try $0.execute("INSERT INTO scratch (id) VALUES (1); DELETE FROM scratch", [])
                }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.write { try $0.execute("INSERT INTO scratch (id, name) VALUES (?, ?)", [1]) }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.write {
                    try $0.execute("INSERT INTO scratch (id) VALUES (1)\0; DELETE FROM scratch", [])
                }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.read { try $0.execute("INSERT INTO scratch (id) VALUES (1)", []) }
            }
            await #expect(throws: StoreError.misuse()) {
                try await database.write { try $0.execute("COMMIT", []) }
            }
            // A trailing semicolon and comment are one statement.
            try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (2); -- done", []) }
            #expect(try await count("scratch", in: database) == 1)
        }
    }

    @Test("SQL errors are schema errors whose reason names the SQL but not the values")
    func schemaErrors() async throws {
        try await withDatabase { database, _ in
            let error = await #expect(throws: StoreError.schema()) {
                try await database.read { try $0.query("SELECT * FROM no_such_table WHERE x = ?", ["hunter2"]) }
            }
            #expect(error?.message.contains("no_such_table") == true)
            #expect(error?.message.contains("hunter2") == false)
            await #expect(throws: StoreError.schema()) {
                try await database.write { try $0.execute("SELEKT 1", []) }
            }
        }
    }

    @Test("reads and writes after close throw closed")
    func afterClose() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try SQLiteDatabase(configuration: .init(path: directory.file("closed.sqlite")))
        try await createScratchTable(database)
        await database.close()
        await #expect(throws: StoreError.closed()) {
            try await database.read { try $0.query("SELECT 1", []) }
        }
        await #expect(throws: StoreError.closed()) {
            try await database.write { try $0.execute("INSERT INTO scratch (id) VALUES (1)", []) }
        }
        await #expect(throws: StoreError.closed()) { try await database.integrityCheck() }
    }

    @Test("work queued before close finishes; close waits for it")
    func closeDrains() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("drain.sqlite")
        let database = try SQLiteDatabase(configuration: .init(path: path))
        try await createScratchTable(database)
        let writes = (0..<20).map { index in
            Task {
                try await database.write {
                    try $0.execute("INSERT INTO scratch (id) VALUES (?)", [.integer(Int64(index))])
                }
            }
        }
        await database.close()
        var landed = 0
        for write in writes {
            switch await write.result {
            case .success: landed += 1
            case .failure(let error): #expect(StoreError.Code.closed.matches(error))
            }
        }
        let reopened = try SQLiteDatabase(configuration: .init(path: path))
        #expect(try await count("scratch", in: reopened) == Int64(landed))
        await reopened.close()
    }

    @Test("integrity check finds a damaged page")
    func integrityCheckFindsDamage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("damaged.sqlite")
        let database = try SQLiteDatabase(configuration: .init(path: path))
        try await database.write { connection in
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)", [])
            try connection.execute("CREATE INDEX t_v ON t (v)", [])
            for index in 0..<2000 {
                try connection.execute("INSERT INTO t (v) VALUES (?)", [.text("value \(index)")])
            }
        }
        let intactBefore = try await database.integrityCheck()
        #expect(intactBefore)
        // Closing the last connection checkpoints the WAL into the file, so the pages are there.
        await database.close()
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        let pageSize = 4096
        try file.seek(toOffset: UInt64(pageSize * 5 + 200))
        try file.write(contentsOf: Data(repeating: 0xEE, count: 1500))
        try file.close()
        let damaged = try SQLiteDatabase(configuration: .init(path: path))
        do {
            let intact = try await damaged.integrityCheck()
            #expect(intact == false)
        } catch let error as StoreError {
            #expect(error.code == .corrupt)
        }
        await damaged.close()
    }

    @Test("integrity check says ok for a sound database")
    func integrityCheck() async throws {
        try await withDatabase(migrated: true) { database, _ in
            let intact = try await database.integrityCheck()
            #expect(intact)
        }
    }
}

/// Which connection a pragma probe runs on.
enum ProbeConnection: CustomStringConvertible {
    case reader, writer

    var description: String { self == .reader ? "reader" : "writer" }

    func run<T: Sendable>(
        _ database: SQLiteDatabase, _ body: @escaping @Sendable (any SQLConnection) throws -> T
    ) async throws -> T {
        switch self {
        case .reader: try await database.read(body)
        case .writer: try await database.write(body)
        }
    }
}

@Suite("SQLiteDatabase health")
struct HealthTests {
    @Test("isHealthy answers false within its timeout when the store's threads are wedged")
    func healthTimesOut() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Generous enough for a loaded test machine, short against the ten-second wedge.
        let database = try SQLiteDatabase(
            configuration: .init(path: directory.file("health.sqlite"), healthCheckTimeout: .milliseconds(750)))
        #expect(await database.isHealthy())
        let wedged = await HeldWrite(on: database)
        let started = ContinuousClock.now
        let healthy = await database.isHealthy()
        let waited = ContinuousClock.now - started
        #expect(try await wedged.release())
        #expect(healthy == false)
        #expect(waited >= .milliseconds(700) && waited < .seconds(3), "waited \(waited)")
        #expect(await database.isHealthy())
        await database.close()
    }
}
