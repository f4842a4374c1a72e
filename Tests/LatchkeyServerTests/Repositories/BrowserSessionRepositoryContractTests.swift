import Foundation
import LatchkeyCrypto
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// What every engine must do for `BrowserSessionRepository`: a session is found by its token's
/// hash only while live, and ending one, or all of a user's, is a compare-and-set that holds
/// with concurrent writers (S29).
@Suite("BrowserSessionRepository contract")
struct BrowserSessionRepositoryContractTests {
    let repository = BrowserSessionRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func session(_ id: String, userID: String = "usr_1") -> BrowserSession {
        BrowserSession(id: id, userID: userID, amr: ["pwd", "otp", "mfa"], authTime: now, createdAt: now, expiresAt: now.addingTimeInterval(3600))
    }

    static func hash(_ n: UInt8) -> [UInt8] { HashFunction.sha256.hash([n]) }

    /// Two users; `usr_1` has `bs_1` (token hash 1) and `bs_2` (hash 2), `usr_2` has `bs_3` (hash 3).
    func withSessions<T>(_ engine: ContractEngine, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await withContractDatabase(engine) { database in
            try await database.write { connection in
                try SessionRepositoryContractTests.insertUser("usr_1", now: self.now, on: connection)
                try SessionRepositoryContractTests.insertUser("usr_2", now: self.now, on: connection)
                try self.repository.insert(self.session("bs_1"), tokenHash: Self.hash(1), ip: "192.0.2.1", userAgent: "Browser/1", on: connection)
                try self.repository.insert(self.session("bs_2"), tokenHash: Self.hash(2), ip: nil, userAgent: nil, on: connection)
                try self.repository.insert(self.session("bs_3", userID: "usr_2"), tokenHash: Self.hash(3), ip: nil, userAgent: nil, on: connection)
            }
            return try await body(database)
        }
    }

    @Test("S29: a session is found by its token's hash as written, only before it expires; the table holds the hash alone", arguments: ContractEngine.allCases)
    func s29LiveByHash(engine: ContractEngine) async throws {
        try await withSessions(engine) { database in
            let (found, unknown, atExpiry) = try await database.read { connection in
                (try self.repository.live(tokenHash: Self.hash(1), at: self.now, on: connection),
                 try self.repository.live(tokenHash: Self.hash(9), at: self.now, on: connection),
                 try self.repository.live(tokenHash: Self.hash(1), at: self.now.addingTimeInterval(3600), on: connection))
            }
            #expect(found == self.session("bs_1"))
            #expect(unknown == nil && atExpiry == nil)
            let stored = try await database.read {
                try $0.query("SELECT token_hash FROM browser_sessions ORDER BY id", []).map { try $0.blob("token_hash") }
            }
            #expect(stored == [Self.hash(1), Self.hash(2), Self.hash(3)])
        }
    }

    @Test("S29: ending succeeds once; a second end reports nil and keeps the first reason; an ended session is not live", arguments: ContractEngine.allCases)
    func s29EndCompareAndSet(engine: ContractEngine) async throws {
        try await withSessions(engine) { database in
            let first = try await database.write { try self.repository.end(tokenHash: Self.hash(1), reason: "logout", at: self.now, on: $0) }
            let second = try await database.write { try self.repository.end(tokenHash: Self.hash(1), reason: "other", at: self.now, on: $0) }
            let unknown = try await database.write { try self.repository.end(tokenHash: Self.hash(9), reason: "logout", at: self.now, on: $0) }
            #expect(first == self.session("bs_1"))
            #expect(second == nil && unknown == nil)
            let (live, reason) = try await database.read { connection in
                (try self.repository.live(tokenHash: Self.hash(1), at: self.now, on: connection),
                 try connection.queryOne("SELECT ended_reason FROM browser_sessions WHERE id = 'bs_1'", [])?.optionalString("ended_reason"))
            }
            #expect(live == nil && reason == "logout")
            // A touch after the end changes nothing.
            try await database.write { try self.repository.touch(id: "bs_1", at: self.now.addingTimeInterval(5), on: $0) }
            let used = try await database.read { try $0.queryOne("SELECT last_used_at FROM browser_sessions WHERE id = 'bs_1'", [])?.date("last_used_at") }
            #expect(used == self.now)
        }
    }

    @Test("S29: of 20 concurrent ends of one session exactly one ends it", arguments: ContractEngine.allCases)
    func s29ConcurrentEndsOneWinner(engine: ContractEngine) async throws {
        try await withSessions(engine) { database in
            let repository = repository
            let now = now
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await database.write { try repository.end(tokenHash: Self.hash(1), reason: "logout", at: now, on: $0) } != nil
                    }
                }
                var wins = [Bool]()
                for try await won in group { wins.append(won) }
                return wins
            }
            #expect(wins.filter { $0 }.count == 1)
        }
    }

    @Test("S29: endAll ends the user's sessions that had not ended, and no one else's; again, it ends none", arguments: ContractEngine.allCases)
    func s29EndAll(engine: ContractEngine) async throws {
        try await withSessions(engine) { database in
            _ = try await database.write { try self.repository.end(tokenHash: Self.hash(2), reason: "logout", at: self.now, on: $0) }
            let ended = try await database.write { try self.repository.endAll(userID: "usr_1", reason: "password_changed", at: self.now, on: $0) }
            let again = try await database.write { try self.repository.endAll(userID: "usr_1", reason: "password_changed", at: self.now, on: $0) }
            #expect(ended == ["bs_1"])
            #expect(again.isEmpty)
            let reasons = try await database.read {
                try $0.query("SELECT id, ended_reason FROM browser_sessions ORDER BY id", []).map { ($0.optionalString("id"), $0.optionalString("ended_reason")) }
            }
            #expect(reasons.map(\.1) == ["password_changed", "logout", nil])
        }
    }
}
