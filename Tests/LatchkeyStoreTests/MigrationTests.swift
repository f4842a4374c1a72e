import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("migrate applies every migration once, records it, and a second run applies nothing")
    func idempotent() async throws {
        try await withDatabase { database, _ in
            #expect(try await Migrator.appliedVersions(database) == [])
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let applied = try await Migrator.migrate(database, now: now)
            #expect(applied.map(\.version) == LatchkeySchema.migrations.map(\.version))
            #expect(try await Migrator.appliedVersions(database) == LatchkeySchema.migrations.map(\.version))
            let record = try await database.read {
                try $0.queryOne("SELECT name, applied_at FROM schema_migrations WHERE version = 1", [])
            }
            #expect(try record?.string("name") == "initial schema")
            #expect(try record?.int("applied_at") == 1_800_000_000)
            #expect(try await Migrator.migrate(database).isEmpty)
            #expect(try await Migrator.appliedVersions(database) == LatchkeySchema.migrations.map(\.version))
        }
    }

    @Test("migration 6 moves queued Apple revocations into the outbox, sealed token, client and attempts kept, retried for as long as it takes")
    func revocationsMoveToTheOutbox() async throws {
        try await withDatabase { database, _ in
            try await Migrator.migrate(database, migrations: Array(LatchkeySchema.migrations.prefix { $0.version < 6 }))
            try await database.write { connection in
                _ = try connection.execute(
                    """
                    INSERT INTO apple_revocations (id, user_id, client_id, token, created_at, attempts, next_attempt_at, last_error)
                    VALUES ('rvk_1', 'usr_gone', 'com.example.app', ?, 1800000000, 3, 1800000600, 'Apple answered 503')
                    """, [.blob([1, 2, 3])])
            }
            #expect(try await Migrator.migrate(database, migrations: Array(LatchkeySchema.migrations.prefix { $0.version <= 6 })).map(\.version) == [6])
            let row = try #require(try await database.read { try $0.queryOne("SELECT * FROM outbox", []) })
            #expect(try row.string("id") == "rvk_1" && row.string("kind") == "apple_revocation" && row.blob("payload") == [1, 2, 3])
            #expect(row.optionalString("user_id") == "usr_gone" && row.optionalString("label") == "com.example.app")
            #expect(try row.int("attempts") == 3 && row.int("next_attempt_at") == 1_800_000_600 && row.optionalString("last_error") == "Apple answered 503")
            #expect(try row.int("give_up_at") > 1_800_000_000 + 50 * 365 * 86_400)
            #expect(try await database.read { try $0.queryOne("SELECT name FROM sqlite_master WHERE name = 'apple_revocations'", []) } == nil)
        }
    }

    @Test("later migrations apply on top, in order, each recorded")
    func incremental() async throws {
        try await withDatabase { database, _ in
            try await Migrator.migrate(database)
            let shipped = LatchkeySchema.migrations.map(\.version)
            let next = shipped.last! + 1
            let extra =
                LatchkeySchema.migrations + [
                    Migration(version: next, name: "widgets") { dialect in
                        ["CREATE TABLE widgets (id TEXT PRIMARY KEY, body \(dialect.blobType))"]
                    },
                    Migration(version: next + 1, name: "widget index") { _ in
                        ["CREATE INDEX widgets_body ON widgets (body)"]
                    },
                ]
            let applied = try await Migrator.migrate(database, migrations: extra)
            #expect(applied.map(\.version) == [next, next + 1])
            #expect(try await Migrator.appliedVersions(database) == shipped + [next, next + 1])
        }
    }

    @Test("a database newer than the code is refused with a clear schema error")
    func newerDatabaseRefused() async throws {
        try await withDatabase { database, _ in
            let future = LatchkeySchema.migrations + [Migration(version: 99, name: "from the future") { _ in [] }]
            try await Migrator.migrate(database, migrations: future)
            let error = await #expect(throws: StoreError.schema()) {
                try await Migrator.migrate(database)
            }
            #expect(error?.message.contains("99") == true)
            #expect(error?.message.contains("newer") == true)
        }
    }

    @Test("a failing migration rolls back entirely and is not recorded; the earlier ones stay")
    func failingMigration() async throws {
        try await withDatabase { database, _ in
            let shipped = LatchkeySchema.migrations.map(\.version)
            let broken =
                LatchkeySchema.migrations + [
                    Migration(version: shipped.last! + 1, name: "half") { _ in
                        ["CREATE TABLE half_done (id INTEGER)", "CREATE TABLE users (id TEXT)"]
                    }
                ]
            await #expect(throws: StoreError.schema()) { try await Migrator.migrate(database, migrations: broken) }
            let versions = try await Migrator.appliedVersions(database)
            #expect(versions == shipped)
            await #expect(throws: StoreError.schema()) {
                try await database.read { try $0.query("SELECT * FROM half_done", []) }
            }
        }
    }

    @Test("migration lists out of order are misuse")
    func outOfOrder() async throws {
        try await withDatabase { database, _ in
            let swapped = [
                Migration(version: 2, name: "b") { _ in [] }, Migration(version: 1, name: "a") { _ in [] },
            ]
            await #expect(throws: StoreError.misuse()) { try await Migrator.migrate(database, migrations: swapped) }
            let duplicate = [
                Migration(version: 1, name: "a") { _ in [] }, Migration(version: 1, name: "b") { _ in [] },
            ]
            await #expect(throws: StoreError.misuse()) { try await Migrator.migrate(database, migrations: duplicate) }
        }
    }

    @Test("two databases on one file migrating at once apply each migration exactly once")
    func concurrentMigrators() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("race.sqlite")
        let first = try SQLiteDatabase(configuration: .init(path: path))
        let second = try SQLiteDatabase(configuration: .init(path: path))
        async let a = Migrator.migrate(first)
        async let b = Migrator.migrate(second)
        let (appliedByFirst, appliedBySecond) = try await (a, b)
        #expect(appliedByFirst.count + appliedBySecond.count == LatchkeySchema.migrations.count)
        #expect(try await Migrator.appliedVersions(first) == LatchkeySchema.migrations.map(\.version))
        await first.close()
        await second.close()
    }
}
