import Foundation
import LatchkeyStore
import Testing

@testable import LatchkeyServer

/// The contract of the passkey tables (`passkeys`, `passkey_ceremonies`, `users.passkey_user_handle`),
/// run on every engine. Concurrent contenders each run in a transaction of their own, so the
/// tests prove the compare-and-sets, not a single writer.
@Suite("Repository contract: passkeys")
struct PasskeyRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func user(_ database: any SQLDatabase, _ email: String) async throws -> String {
        try await database.write { try UserRepository(database: database).create(email: email, now: now, on: $0).id }
    }

    static func passkey(userID: String, credentialID: [UInt8] = Array(repeating: 7, count: 32), signCount: UInt32 = 0) -> Passkey {
        Passkey(
            id: Identifiers.make("pk"), userID: userID, credentialID: credentialID, publicKey: [0xA5, 1, 2], algorithm: -7, signCount: signCount,
            backupEligible: true, backedUp: true, transports: ["internal", "hybrid"], aaguid: Array(repeating: 0, count: 16), attestation: "none",
            name: "iPhone", createdAt: now, lastUsedAt: nil)
    }

    @Test("a passkey reads back as stored; a credential id is registered once, to one account; deleting the account deletes its passkeys", arguments: ContractEngine.allCases)
    func storeAndFind(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let passkeys = PasskeyRepository()
            let ada = try await Self.user(database, "ada@example.com")
            let grace = try await Self.user(database, "grace@example.com")
            let stored = Self.passkey(userID: ada)
            try await database.write { try passkeys.insert(stored, on: $0) }
            #expect(try await database.read { try passkeys.find(credentialID: stored.credentialID, on: $0) } == stored)
            await #expect(throws: StoreError.self) { try await database.write { try passkeys.insert(Self.passkey(userID: grace), on: $0) } }
            try await database.write { connection throws in
                #expect(try passkeys.list(userID: ada, on: connection).map(\.id) == [stored.id])
                #expect(try passkeys.rename(id: stored.id, userID: grace, to: "stolen", on: connection) == false, "only the owner's")
                #expect(try passkeys.rename(id: stored.id, userID: ada, to: "Ada's iPhone", on: connection))
                #expect(try passkeys.delete(id: stored.id, userID: grace, on: connection) == false)
                #expect(try passkeys.count(userID: ada, on: connection) == 1)
                _ = try connection.execute("DELETE FROM users WHERE id = ?", [.text(ada)])
                #expect(try passkeys.count(userID: ada, on: connection) == 0)
            }
        }
    }

    @Test("S28: of 8 concurrent uses verified against one counter exactly one records its use", arguments: ContractEngine.allCases)
    func useIsCompareAndSet(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let passkeys = PasskeyRepository()
            let stored = Self.passkey(userID: try await Self.user(database, "ada@example.com"), signCount: 41)
            try await database.write { try passkeys.insert(stored, on: $0) }
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await database.write {
                            try passkeys.recordUse(id: stored.id, verifiedAgainst: 41, signCount: 42, backedUp: false, at: Self.now, on: $0)
                        }
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(wins == 1)
            let used = try #require(try await database.read { try passkeys.find(credentialID: stored.credentialID, on: $0) })
            #expect(used.signCount == 42 && used.backedUp == false && used.lastUsedAt == Self.now)
        }
    }

    @Test("S28: an account gets one user handle, whichever of several concurrent requests gives it, and is found by it", arguments: ContractEngine.allCases)
    func userHandleOnce(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let passkeys = PasskeyRepository()
            let ada = try await Self.user(database, "ada@example.com")
            #expect(try await database.read { try passkeys.userHandle(userID: ada, on: $0) } == nil)
            let handles = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await database.write { try passkeys.assignUserHandle(Array(repeating: UInt8(index), count: 64), userID: ada, on: $0) }
                    }
                }
                return try await group.reduce(into: [[UInt8]?]()) { $0.append($1) }
            }
            let handle = try #require(handles.first ?? nil)
            #expect(Set(handles.map { $0 ?? [] }) == [handle], "every request reads the one handle given")
            #expect(try await database.read { try passkeys.userID(handle: handle, on: $0) } == ada)
            #expect(try await database.read { try passkeys.userID(handle: Array(repeating: 9, count: 64), on: $0) } == nil)
        }
    }

    @Test("S28: a flow is spent once of 8 concurrent answers; the housekeeping removes it once it would have expired", arguments: ContractEngine.allCases)
    func ceremonyOnce(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let ceremonies = PasskeyCeremonyRepository()
            let ceremony = PasskeyCeremony(
                id: Identifiers.make("pkc"), kind: .signup, challenge: Array(repeating: 3, count: 32), userID: nil, userHandle: Array(repeating: 4, count: 64),
                username: "ada@example.com", givenName: "Ada", familyName: nil, conditional: false, createdAt: Self.now,
                expiresAt: Self.now.addingTimeInterval(300))
            let spent = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await database.write { try ceremonies.spend(ceremony, at: Self.now, on: $0) } } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(spent.filter { $0 }.count == 1)
            #expect(try await database.write { try RetentionRepository().deleteExpired(now: Self.now.addingTimeInterval(299), on: $0) } == 0)
            #expect(try await database.write { try RetentionRepository().deleteExpired(now: Self.now.addingTimeInterval(301), on: $0) } == 1)
        }
    }

    @Test("S35: a ceremony travels sealed in its flow_id: it opens under the same master key only, and a changed byte opens nothing")
    func sealedFlowID() throws {
        let key = try MasterKey(bytes: Array(repeating: 7, count: 32))
        let ceremony = PasskeyCeremony(
            id: Identifiers.make("pkc"), kind: .registration, challenge: Array(repeating: 3, count: 32), userID: "usr_1",
            userHandle: Array(repeating: 4, count: 64), username: "ada@example.com", givenName: "Ada", familyName: "Lovelace", conditional: true,
            createdAt: Self.now, expiresAt: Self.now.addingTimeInterval(300))
        let flowID = try ceremony.flowID(sealedWith: key)
        #expect(flowID.hasPrefix("pkf_") && flowID.utf8.count <= PasskeyCeremony.maxFlowIDLength)
        #expect(PasskeyCeremony(flowID: flowID, masterKey: key) == ceremony)
        #expect(PasskeyCeremony(flowID: flowID, masterKey: try MasterKey(bytes: Array(repeating: 8, count: 32))) == nil)
        var bytes = Array(flowID.utf8)
        bytes[bytes.count / 2] = bytes[bytes.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(PasskeyCeremony(flowID: String(decoding: bytes, as: UTF8.self), masterKey: key) == nil)
        #expect(PasskeyCeremony(flowID: "pkf_", masterKey: key) == nil)
    }
}
