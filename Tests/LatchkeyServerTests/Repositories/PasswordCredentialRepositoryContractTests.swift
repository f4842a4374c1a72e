import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

@Suite("Repository contract: password credentials")
struct PasswordCredentialRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"

    static func user(_ db: any SQLDatabase, _ email: String? = nil) async throws -> User {
        try await db.write { try UserRepository(database: db).create(email: email, now: Self.now, on: $0) }
    }

    @Test("S11: a credential is stored, found by username and by user, and goes with its user", arguments: ContractEngine.allCases)
    func s11InsertFind(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let credentials = PasswordCredentialRepository()
            let ada = try await Self.user(db)
            try await db.write { try credentials.insert(userID: ada.id, username: "ada", hash: Self.hash, now: Self.now, on: $0) }
            let expected = PasswordCredential(userID: ada.id, username: "ada", hash: Self.hash, createdAt: Self.now)
            #expect(try await db.read { try credentials.find(username: "ada", on: $0) } == expected)
            #expect(try await db.read { try credentials.find(userID: ada.id, on: $0) } == expected)
            #expect(try await db.read { try credentials.usernameExists("ada", on: $0) })
            #expect(try await db.read { try credentials.find(username: "ADA", on: $0) } == nil, "usernames are stored normalised; lookups do not fold")
            #expect(try await db.read { try credentials.usernameExists("grace", on: $0) } == false)

            try await db.write { try UserRepository(database: db).delete(ada.id, on: $0) }
            #expect(try await db.read { try credentials.find(username: "ada", on: $0) } == nil)
        }
    }

    @Test("S11: a taken username surfaces as the store's constraint error, on insert and on an operator's reset", arguments: ContractEngine.allCases)
    func s11UsernameUniqueness(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let credentials = PasswordCredentialRepository()
            let ada = try await Self.user(db)
            let grace = try await Self.user(db)
            try await db.write { try credentials.insert(userID: ada.id, username: "ada", hash: Self.hash, now: Self.now, on: $0) }
            try await db.write { try credentials.insert(userID: grace.id, username: "grace", hash: Self.hash, now: Self.now, on: $0) }
            await #expect(throws: StoreError.self) {
                try await db.write { try credentials.insert(userID: grace.id, username: "ada", hash: Self.hash, now: Self.now, on: $0) }
            }
            do {
                _ = try await db.write { try credentials.replace(userID: grace.id, username: "ada", hash: Self.hash, now: Self.now, on: $0) }
                Issue.record("a reset took a taken username")
            } catch let error as StoreError {
                #expect(error.code == .constraint)
            }
            #expect(try await db.read { try credentials.find(userID: grace.id, on: $0)?.username } == "grace", "nothing changed")
            #expect(try await db.write { try credentials.replace(userID: grace.id, username: "grace.h", hash: "other", now: Self.now, on: $0) })
            #expect(try await db.read { try credentials.find(userID: grace.id, on: $0) }?.hash == "other")
            #expect(try await db.write { try credentials.replace(userID: "usr_nobody", username: "x", hash: "y", now: Self.now, on: $0) } == false)
        }
    }

    @Test("S11: the hash is replaced only while it is the verified one; of concurrent changes exactly one wins", arguments: ContractEngine.allCases)
    func s11CompareAndSetHash(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let credentials = PasswordCredentialRepository()
            let ada = try await Self.user(db)
            try await db.write { try credentials.insert(userID: ada.id, username: "ada", hash: "h0", now: Self.now, on: $0) }
            #expect(try await db.write { try credentials.holds(userID: ada.id, hash: "h0", on: $0) })
            #expect(try await db.write { try credentials.replaceHash(userID: ada.id, expected: "h0", with: "h1", now: Self.now, on: $0) })
            #expect(try await db.write { try credentials.replaceHash(userID: ada.id, expected: "h0", with: "h2", now: Self.now, on: $0) } == false)
            #expect(try await db.write { try credentials.holds(userID: ada.id, hash: "h0", on: $0) } == false)
            #expect(try await db.read { try credentials.find(userID: ada.id, on: $0)?.hash } == "h1")

            let winners = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let hash = "concurrent-\(index)"
                        let replaced = try await db.write {
                            try credentials.replaceHash(userID: ada.id, expected: "h1", with: hash, now: Self.now, on: $0)
                        }
                        return replaced ? hash : nil
                    }
                }
                return try await group.reduce(into: [String]()) { if let hash = $1 { $0.append(hash) } }
            }
            #expect(winners.count == 1)
            #expect(try await db.read { try credentials.find(userID: ada.id, on: $0)?.hash } == winners.first)
        }
    }
}
