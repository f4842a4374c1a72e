import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

@Suite("Repository contract: users")
struct UserRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("users: create, find, update, list, lock and delete; a deletion tells whether it deleted", arguments: ContractEngine.allCases)
    func crud(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let users = UserRepository(database: db)
            let ada = try await db.write { try users.create(email: "ada@example.com", givenName: "Ada", now: Self.now, on: $0) }
            let grace = try await db.write {
                try users.create(email: nil, isPrivateEmail: true, familyName: "Hopper", now: Self.now.addingTimeInterval(60), on: $0)
            }
            #expect(try await users.find(ada.id) == ada)
            #expect(try await users.find("usr_nobody") == nil)
            #expect(try await users.list().map(\.id) == [grace.id, ada.id], "newest first")
            #expect(try await users.list(limit: 1).map(\.id) == [grace.id])

            var renamed = ada
            renamed.givenName = nil
            renamed.familyName = "Lovelace"
            renamed.emailVerified = true
            try await db.write { [renamed] in try users.update(renamed, now: Self.now.addingTimeInterval(120), on: $0) }
            #expect(try await users.find(ada.id) == renamed)

            #expect(try await db.write { try users.lock(ada.id, now: Self.now, on: $0) })
            #expect(try await db.write { try users.lock("usr_nobody", now: Self.now, on: $0) } == false)
            #expect(try await db.write { try users.delete(ada.id, on: $0) })
            #expect(try await db.write { try users.delete(ada.id, on: $0) } == false, "a second deletion finds nothing")
            #expect(try await db.write { try users.lock(ada.id, now: Self.now, on: $0) } == false)
            #expect(try await users.find(ada.id) == nil)
            #expect(try await users.find(grace.id) == grace)
        }
    }

    @Test("users: of concurrent deletions of one user exactly one deletes it", arguments: ContractEngine.allCases)
    func concurrentDeletion(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let users = UserRepository(database: db)
            let ada = try await db.write { try users.create(email: "ada@example.com", now: Self.now, on: $0) }
            let deleted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await db.write { connection in
                            guard try users.lock(ada.id, now: Self.now, on: connection) else { return false }
                            return try users.delete(ada.id, on: connection)
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(deleted.filter { $0 }.count == 1)
        }
    }
}
