import Foundation
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// ``DatabaseCopy`` from a real SQLite file to a real PostgreSQL database.
@Suite("DatabaseCopy: SQLite to PostgreSQL")
struct DatabaseCopyTests {
    /// A user, a session with a retired and a live refresh token, and five audit entries of
    /// which the last is deleted again (so the highest id is not the row count).
    static func seed(_ database: SQLiteDatabase) async throws {
        try await database.write { connection in
            try connection.execute(
                "INSERT INTO users (id, email, email_verified, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                ["usr_1", "ada@example.com", true, 1_800_000_000, 1_800_000_001])
            try connection.execute(
                "INSERT INTO users (id, email, created_at, updated_at) VALUES (?, ?, ?, ?)", ["usr_2", nil, 1_800_000_002, 1_800_000_002])
            try connection.execute(
                """
                INSERT INTO sessions (id, user_id, amr, created_at, last_used_at, idle_expires_at, absolute_expires_at, user_agent)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, ["ses_1", "usr_1", "[\"pwd\"]", 1_800_000_000, 1_800_000_100, 1_802_592_000, 1_807_776_000, "Tëst/1.0 \u{1F511}"])
            try connection.execute(
                "INSERT INTO refresh_tokens (token_hash, session_id, created_at, retired_at, replaced_by) VALUES (?, ?, ?, ?, ?)",
                [.blob([0, 1, 2, 255]), "ses_1", 1_800_000_000, 1_800_000_100, .blob([9, 9])])
            try connection.execute(
                "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)", [.blob([9, 9]), "ses_1", 1_800_000_100])
            for index in 1...5 {
                try connection.execute(
                    "INSERT INTO audit_log (time, user_id, event, outcome, details) VALUES (?, ?, ?, ?, ?)",
                    [.integer(1_800_000_000 + Int64(index)), "usr_1", "session.refreshed", "success", .text("{\"n\":\"\(index)\"}")])
            }
            try connection.execute("DELETE FROM audit_log WHERE id = ?", [5])
        }
    }

    /// Every row of `table`, ordered by all its columns, as comparable values.
    static func rows(_ table: String, _ columns: [String], in database: any SQLDatabase) async throws -> [[SQLValue]] {
        let list = columns.joined(separator: ", ")
        return try await database.read { try $0.query("SELECT \(list) FROM \(table) ORDER BY \(list)", []).map(\.values) }
    }

    @Test("every value arrives unchanged (blobs, NULLs, integers, non-ASCII text) and new audit ids continue past the highest copied one")
    func valuesAndSequence() async throws {
        try await withDatabase(migrated: true) { source, _ in
            try await Self.seed(source)
            try await withPostgreSQL { target, _ in
                let report = try await DatabaseCopy.copy(from: source, to: target)
                #expect(report.allMatch)
                #expect(report.schemaVersion == LatchkeySchema.migrations.last!.version)
                let counts = Dictionary(uniqueKeysWithValues: report.tables.map { ($0.table, $0.target) })
                #expect(counts["users"] == 2 && counts["sessions"] == 1 && counts["refresh_tokens"] == 2 && counts["audit_log"] == 4)
                // Parents before children.
                let order = report.tables.map(\.table)
                #expect(order.firstIndex(of: "users")! < order.firstIndex(of: "sessions")!)
                #expect(order.firstIndex(of: "sessions")! < order.firstIndex(of: "refresh_tokens")!)
                #expect(order.firstIndex(of: "mfa_tokens")! < order.firstIndex(of: "challenges")!)

                let tables: [(String, [String])] = [
                    ("users", ["id", "email", "email_verified", "is_private_email", "given_name", "created_at", "updated_at"]),
                    ("sessions", ["id", "user_id", "amr", "created_at", "last_used_at", "idle_expires_at", "absolute_expires_at", "revoked_at", "user_agent", "ip"]),
                    ("refresh_tokens", ["token_hash", "session_id", "created_at", "retired_at", "replaced_by", "successor_sealed"]),
                    ("audit_log", ["id", "time", "user_id", "event", "outcome", "ip", "details"]),
                ]
                for (table, columns) in tables {
                    let copied = try await Self.rows(table, columns, in: target)
                    #expect(copied == (try await Self.rows(table, columns, in: source)), "\(table)")
                }
                let next = try await target.write { connection in
                    try connection.queryOne(
                        "INSERT INTO audit_log (time, event, outcome) VALUES (?, ?, ?) RETURNING id", [1_800_000_010, "session.created", "success"]
                    )?.int("id")
                }
                #expect(next == 5, "one past the highest copied id (4)")
            }
        }
    }

    @Test("a source at an older schema version is refused before the target is touched")
    func olderSource() async throws {
        try await withDatabase { source, _ in
            try await Migrator.migrate(source, migrations: Array(LatchkeySchema.migrations.dropLast()))
            try await withPostgreSQL { target, _ in
                await #expect(throws: DatabaseCopyError.schemaMismatch()) { try await DatabaseCopy.copy(from: source, to: target) }
                do {
                    _ = try await DatabaseCopy.copy(from: source, to: target)
                } catch let error as DatabaseCopyError {
                    #expect(error.message.contains("migrate the source first"), "\(error.message)")
                }
                #expect(try await Migrator.appliedVersions(target).isEmpty)
            }
        }
    }

    @Test("a target that holds rows is refused and left exactly as it was")
    func nonEmptyTarget() async throws {
        try await withDatabase(migrated: true) { source, _ in
            try await Self.seed(source)
            try await withPostgreSQL(migrated: true) { target, _ in
                try await target.write { connection in
                    try connection.execute(
                        "INSERT INTO users (id, created_at, updated_at) VALUES (?, ?, ?)", ["usr_other", 1_800_000_000, 1_800_000_000])
                }
                do {
                    _ = try await DatabaseCopy.copy(from: source, to: target)
                    Issue.record("a non-empty target was filled")
                } catch let error as DatabaseCopyError {
                    #expect(error.code == .targetNotEmpty)
                    #expect(error.message.hasPrefix("the target already holds rows in users (1);"), "\(error.message)")
                }
                #expect(try await count("users", in: target) == 1)
                #expect(try await count("audit_log", in: target) == 0)
            }
        }
    }
}
