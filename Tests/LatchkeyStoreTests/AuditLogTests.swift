import Foundation
import LatchkeyStore
import Testing

@Suite("AuditLog")
struct AuditLogTests {
    struct Boom: Error {}

    static func entry(
        _ second: TimeInterval, user: String? = "u1", event: String = "sign_in.password", outcome: String = "success",
        details: [String: String] = [:]
    ) -> AuditLog.Entry {
        AuditLog.Entry(
            time: Date(timeIntervalSince1970: 1_800_000_000 + second), userID: user, event: AuditEvent(rawValue: event), outcome: AuditOutcome(rawValue: outcome),
            ip: "203.0.113.7", requestID: "req-\(Int(second))", details: details)
    }

    @Test("S27: entries record time, user, event, outcome, IP, request and details, and read back newest first")
    func s27RecordAndQuery() async throws {
        try await withDatabase(migrated: true) { database, _ in
            let log = AuditLog(database: database)
            let recorded = [
                Self.entry(1, details: ["method": "password"]),
                Self.entry(2, event: "sign_in.password", outcome: "failure", details: ["reason": "wrong_password"]),
                Self.entry(3, user: "u2", event: "refresh.reuse", outcome: "session_revoked", details: ["session": "s1"]),
                Self.entry(4, user: nil, event: "sign_in.password", outcome: "unknown_user"),
                Self.entry(5, event: "device.added", details: ["quote": "it's \"fine\"", "unicode": "日本 🔐", "path": "/a/b", "control": "a\u{1}b\tc\\d\n"]),
            ]
            for entry in recorded {
                try await log.record(entry)
            }
            #expect(try await log.entries() == recorded.reversed())
            #expect(try await log.entries(userID: "u1") == [recorded[4], recorded[1], recorded[0]])
            #expect(try await log.entries(event: "sign_in.password") == [recorded[3], recorded[1], recorded[0]])
            #expect(try await log.entries(userID: "u1", event: "sign_in.password", limit: 1) == [recorded[1]])
            #expect(try await log.entries(limit: 0).isEmpty)
            await #expect(throws: StoreError.misuse()) { try await log.entries(limit: -1) }
        }
    }

    @Test("S27, S28: an entry recorded inside a write that then throws is rolled back with it")
    func s27s28RolledBackWithTheChange() async throws {
        try await withDatabase(migrated: true) { database, _ in
            let log = AuditLog(database: database)
            await #expect(throws: Boom.self) {
                try await database.write { connection in
                    try connection.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('u1', 1, 1)", [])
                    try log.record(Self.entry(1, event: "account.created"), on: connection)
                    throw Boom()
                }
            }
            #expect(try await log.entries().isEmpty)
            #expect(try await count("users", in: database) == 0)
            // And when the change commits, its entry commits with it.
            try await database.write { connection in
                try connection.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('u1', 1, 1)", [])
                try log.record(Self.entry(2, event: "account.created"), on: connection)
            }
            #expect(try await log.entries().map(\.event.rawValue) == ["account.created"])
        }
    }

    @Test("entries with equal times come back in the order they were recorded, newest first")
    func sameSecond() async throws {
        try await withDatabase(migrated: true) { database, _ in
            let log = AuditLog(database: database)
            for outcome in ["first", "second", "third"] {
                try await log.record(Self.entry(0, outcome: outcome))
            }
            #expect(try await log.entries().map(\.outcome.rawValue) == ["third", "second", "first"])
        }
    }

    @Test("details that are not a JSON object of strings are reported, not guessed at")
    func brokenDetails() async throws {
        try await withDatabase(migrated: true) { database, _ in
            try await database.write {
                try $0.execute(
                    "INSERT INTO audit_log (time, event, outcome, details) VALUES (1, 'x', 'y', '[1, 2]')", [])
            }
            await #expect(throws: StoreError.typeMismatch()) { try await AuditLog(database: database).entries() }
        }
    }
}
