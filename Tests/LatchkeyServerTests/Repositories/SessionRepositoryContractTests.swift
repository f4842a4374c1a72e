import Foundation
import LatchkeyCrypto
import LatchkeyStore
@testable import LatchkeyServer
import Testing

/// What every engine must do for `SessionRepository`: the compare-and-sets that S8 (one live
/// refresh token, reuse detection) and revocation rest on hold with concurrent writers, not only
/// under SQLite's single writer.
@Suite("SessionRepository contract")
struct SessionRepositoryContractTests {
    let repository = SessionRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A user row for sessions to belong to.
    static func insertUser(_ id: String, now: Date, on connection: any SQLConnection) throws {
        try connection.execute("INSERT INTO users (id, created_at, updated_at) VALUES (?, ?, ?)", [.text(id), .time(now), .time(now)])
    }

    func session(_ id: String, userID: String = "usr_1", createdAt: Date? = nil) -> Session {
        let created = createdAt ?? now
        return Session(
            id: id, userID: userID, amr: ["pwd", "hwk"], createdAt: created, lastUsedAt: created, idleExpiresAt: created.addingTimeInterval(3600),
            absoluteExpiresAt: created.addingTimeInterval(86_400), userAgent: "Tests/1", ip: "127.0.0.1")
    }

    /// A database with one user and one session `ses_1` whose live token hashes to `hash(1)`.
    func withSession<T>(_ engine: ContractEngine, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await withContractDatabase(engine) { database in
            try await database.write { connection in
                try Self.insertUser("usr_1", now: self.now, on: connection)
                try self.repository.insert(self.session("ses_1"), on: connection)
                try self.repository.insertToken(hash: Self.hash(1), sessionID: "ses_1", at: self.now, on: connection)
            }
            return try await body(database)
        }
    }

    static func hash(_ n: UInt8) -> [UInt8] { HashFunction.sha256.hash([n]) }

    @Test("a session inserted is found as it was written, and listed among the user's unrevoked ones newest first", arguments: ContractEngine.allCases)
    func insertFindList(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let (found, listed, missing) = try await database.write { connection in
                try self.repository.insert(self.session("ses_2", createdAt: self.now.addingTimeInterval(10)), on: connection)
                try Self.insertUser("usr_2", now: self.now, on: connection)
                try self.repository.insert(self.session("ses_3", userID: "usr_2"), on: connection)
                return (
                    try self.repository.find(id: "ses_1", on: connection), try self.repository.unrevoked(userID: "usr_1", on: connection),
                    try self.repository.find(id: "ses_nope", on: connection))
            }
            #expect(found == self.session("ses_1"))
            #expect(listed.map(\.id) == ["ses_2", "ses_1"])
            #expect(missing == nil)
        }
    }

    @Test("S7: a presented token is found by its hash with its session, and the table holds the hash alone", arguments: ContractEngine.allCases)
    func s7PresentedToken(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let (presented, unknown, sessionID) = try await database.read { connection in
                (try self.repository.presentedToken(hash: Self.hash(1), on: connection),
                 try self.repository.presentedToken(hash: Self.hash(9), on: connection),
                 try self.repository.sessionID(tokenHash: Self.hash(1), on: connection))
            }
            #expect(presented?.session.id == "ses_1" && presented?.retired == false)
            #expect(unknown == nil)
            #expect(sessionID == "ses_1")
            let stored = try await database.read { try $0.query("SELECT token_hash FROM refresh_tokens", []).map { try $0.blob("token_hash") } }
            #expect(stored == [Self.hash(1)])
        }
    }

    @Test("S8: retiring a live token succeeds once; retiring it again reports false and changes nothing", arguments: ContractEngine.allCases)
    func s8RetireCompareAndSet(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let first = try await database.write { connection in
                try self.repository.retire(tokenHash: Self.hash(1), replacedBy: Self.hash(2), at: self.now, on: connection)
            }
            let second = try await database.write { connection in
                try self.repository.retire(tokenHash: Self.hash(1), replacedBy: Self.hash(3), at: self.now.addingTimeInterval(1), on: connection)
            }
            let unknown = try await database.write { connection in
                try self.repository.retire(tokenHash: Self.hash(9), replacedBy: Self.hash(3), at: self.now, on: connection)
            }
            #expect(first && !second && !unknown)
            let row = try await database.read { try $0.queryOne("SELECT retired_at, replaced_by FROM refresh_tokens WHERE token_hash = ?", [.blob(Self.hash(1))]) }
            #expect(row?.optionalBlob("replaced_by") == Self.hash(2), "the winner's successor stays recorded")
            #expect(row?.optionalDate("retired_at") == self.now)
            let presented = try await database.read { try self.repository.presentedToken(hash: Self.hash(1), on: $0) }
            #expect(presented?.retired == true)
        }
    }

    @Test("S8: of 20 concurrent rotations of one token exactly one wins", arguments: ContractEngine.allCases)
    func s8ConcurrentRotationsOneWinner(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let repository = repository
            let now = now
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<20 {
                    group.addTask {
                        try await database.write { connection in
                            let successor = Self.hash(UInt8(100 + n))
                            guard try repository.retire(tokenHash: Self.hash(1), replacedBy: successor, at: now, on: connection) else { return false }
                            try repository.insertToken(hash: successor, sessionID: "ses_1", at: now, on: connection)
                            return true
                        }
                    }
                }
                var wins = [Bool]()
                for try await won in group { wins.append(won) }
                return wins
            }
            #expect(wins.filter { $0 }.count == 1)
            let live = try await database.read { try $0.query("SELECT token_hash FROM refresh_tokens WHERE retired_at IS NULL", []) }
            #expect(live.count == 1, "one live token per session")
        }
    }

    @Test("S8: a step-up retires the session's live token once; with none live it reports false", arguments: ContractEngine.allCases)
    func s8RetireLiveToken(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let (first, second) = try await database.write { connection in
                (try self.repository.retireLiveToken(sessionID: "ses_1", replacedBy: Self.hash(2), at: self.now, on: connection),
                 try self.repository.retireLiveToken(sessionID: "ses_1", replacedBy: Self.hash(3), at: self.now, on: connection))
            }
            #expect(first && !second)
        }
    }

    @Test("S9: revoking succeeds once; a second revoke reports false and keeps the first reason", arguments: ContractEngine.allCases)
    func s9RevokeCompareAndSet(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let (first, second, unknown) = try await database.write { connection in
                (try self.repository.revoke(sessionID: "ses_1", reason: "logout", at: self.now, on: connection),
                 try self.repository.revoke(sessionID: "ses_1", reason: "reused", at: self.now.addingTimeInterval(5), on: connection),
                 try self.repository.revoke(sessionID: "ses_nope", reason: "logout", at: self.now, on: connection))
            }
            #expect(first && !second && !unknown)
            let (found, listed) = try await database.read { connection in
                (try self.repository.find(id: "ses_1", on: connection), try self.repository.unrevoked(userID: "usr_1", on: connection))
            }
            #expect(found?.revokedAt == self.now && found?.revokedReason == "logout")
            #expect(listed.isEmpty)
        }
    }

    @Test("S9: of 20 concurrent revocations of one session exactly one revokes it", arguments: ContractEngine.allCases)
    func s9ConcurrentRevocationsOneWinner(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let repository = repository
            let now = now
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await database.write { try repository.revoke(sessionID: "ses_1", reason: "logout", at: now, on: $0) }
                    }
                }
                var wins = [Bool]()
                for try await won in group { wins.append(won) }
                return wins
            }
            #expect(wins.filter { $0 }.count == 1)
        }
    }

    @Test("a use moves last_used_at and the idle expiry", arguments: ContractEngine.allCases)
    func touch(engine: ContractEngine) async throws {
        try await withSession(engine) { database in
            let later = now.addingTimeInterval(60)
            let found = try await database.write { connection in
                try self.repository.touch(sessionID: "ses_1", at: later, idleExpiresAt: later.addingTimeInterval(3600), on: connection)
                return try self.repository.find(id: "ses_1", on: connection)
            }
            #expect(found?.lastUsedAt == later && found?.idleExpiresAt == later.addingTimeInterval(3600))
        }
    }

    @Test("S7: a tombstone names why a deleted account's token ended; other hashes have none", arguments: ContractEngine.allCases)
    func s7Tombstones(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let (ended, other) = try await database.write { connection in
                try connection.execute(
                    "INSERT INTO ended_refresh_tokens (token_hash, reason, expires_at) VALUES (?, 'account_deleted', ?)",
                    [.blob(Self.hash(7)), .time(self.now.addingTimeInterval(3600))])
                return (try self.repository.endedReason(tokenHash: Self.hash(7), on: connection),
                        try self.repository.endedReason(tokenHash: Self.hash(8), on: connection))
            }
            #expect(ended == "account_deleted")
            #expect(other == nil)
        }
    }
}
