import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyStore
@testable import LatchkeyServer
import Testing

/// What every engine must do for `SigningKeyRepository` (S10): keys read back as written, and
/// retiring the newest key is a compare-and-set, so two concurrent rotations cannot both retire it.
@Suite("SigningKeyRepository contract")
struct SigningKeyRepositoryContractTests {
    let repository = SigningKeyRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func key(_ id: String, activatesAt: Date) -> SigningKeyRing.Key {
        SigningKeyRing.Key(id: id, publicJWK: JWK(P256.Signing.PrivateKey().publicKey, keyID: id), createdAt: now, activatesAt: activatesAt)
    }

    @Test("S10: keys read back as written, oldest activation first, the private part still sealed", arguments: ContractEngine.allCases)
    func s10InsertAndList(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let later = key("kid_b", activatesAt: now.addingTimeInterval(600))
            let first = key("kid_a", activatesAt: now)
            let stored = try await database.write { connection in
                try self.repository.insert(later, sealedPrivateKey: [1, 2, 3], on: connection)
                try self.repository.insert(first, sealedPrivateKey: [4, 5, 6], on: connection)
                return try self.repository.all(on: connection)
            }
            #expect(stored.map(\.key) == [first, later])
            #expect(stored.map(\.sealedPrivateKey) == [[4, 5, 6], [1, 2, 3]])
        }
    }

    @Test("S10: a key is active from its activation until its retirement", arguments: ContractEngine.allCases)
    func s10Active(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let answers = try await database.write { connection in
                let empty = try self.repository.hasActiveKey(at: self.now, on: connection)
                try self.repository.insert(self.key("kid_a", activatesAt: self.now.addingTimeInterval(10)), sealedPrivateKey: [1], on: connection)
                let pending = try self.repository.hasActiveKey(at: self.now, on: connection)
                let active = try self.repository.hasActiveKey(at: self.now.addingTimeInterval(10), on: connection)
                _ = try self.repository.retireUnretired(at: self.now.addingTimeInterval(20), expiresAt: self.now.addingTimeInterval(30), on: connection)
                let retired = try self.repository.hasActiveKey(at: self.now.addingTimeInterval(20), on: connection)
                return [empty, pending, active, retired]
            }
            #expect(answers == [false, false, true, false])
        }
    }

    @Test("S10: retiring the unretired keys reports how many it retired; again at once, none", arguments: ContractEngine.allCases)
    func s10RetireCompareAndSet(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let (first, second, keys) = try await database.write { connection in
                try self.repository.insert(self.key("kid_a", activatesAt: self.now), sealedPrivateKey: [1], on: connection)
                let first = try self.repository.retireUnretired(
                    at: self.now.addingTimeInterval(600), expiresAt: self.now.addingTimeInterval(1560), on: connection)
                let second = try self.repository.retireUnretired(
                    at: self.now.addingTimeInterval(900), expiresAt: self.now.addingTimeInterval(1860), on: connection)
                return (first, second, try self.repository.all(on: connection).map(\.key))
            }
            #expect(first == 1 && second == 0)
            #expect(keys.first?.retiresAt == now.addingTimeInterval(600) && keys.first?.expiresAt == now.addingTimeInterval(1560), "the first retirement stays")
        }
    }

    @Test("S10: each algorithm is active and retires on its own, and a key reads back with its algorithm", arguments: ContractEngine.allCases)
    func s10PerAlgorithm(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let rsaID = "kid_rsa"
            let rsa = SigningKeyRing.Key(
                id: rsaID, publicJWK: JWK(try RSA.Signing.PrivateKey(keySize: 2048).publicKey, algorithm: .rs256, keyID: rsaID),
                createdAt: now, activatesAt: now)
            let (answers, retired, stored) = try await database.write { connection in
                try self.repository.insert(self.key("kid_ec", activatesAt: self.now), sealedPrivateKey: [1], on: connection)
                let onlyES256 = [
                    try self.repository.hasActiveKey(.es256, at: self.now, on: connection),
                    try self.repository.hasActiveKey(.rs256, at: self.now, on: connection),
                ]
                try self.repository.insert(rsa, sealedPrivateKey: [2], on: connection)
                let retired = try self.repository.retireUnretired(
                    .rs256, at: self.now.addingTimeInterval(10), expiresAt: self.now.addingTimeInterval(20), on: connection)
                let afterRetiring = [
                    try self.repository.hasActiveKey(.es256, at: self.now.addingTimeInterval(10), on: connection),
                    try self.repository.hasActiveKey(.rs256, at: self.now.addingTimeInterval(10), on: connection),
                ]
                return (onlyES256 + afterRetiring, retired, try self.repository.all(on: connection))
            }
            #expect(answers == [true, false, true, false])
            #expect(retired == 1, "only the RS256 key")
            #expect(stored.map(\.algorithm) == [.es256, .rs256] && stored.map(\.key.algorithm) == [.es256, .rs256])
            #expect(stored.first?.key.retiresAt == nil)
        }
    }

    @Test("S10: 20 concurrent rotations leave exactly one unretired key, and only winners add one", arguments: ContractEngine.allCases)
    func s10ConcurrentRotationsOneWinner(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let repository = repository
            let now = now
            try await database.write { try repository.insert(self.key("kid_0", activatesAt: now), sealedPrivateKey: [0], on: $0) }
            let newKeys = (1...20).map { key("kid_\($0)", activatesAt: now.addingTimeInterval(600)) }
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for newKey in newKeys {
                    group.addTask {
                        try await database.write { connection in
                            guard try repository.retireUnretired(
                                at: newKey.activatesAt, expiresAt: newKey.activatesAt.addingTimeInterval(960), on: connection) > 0
                            else { return false }
                            try repository.insert(newKey, sealedPrivateKey: [1], on: connection)
                            return true
                        }
                    }
                }
                var wins = [Bool]()
                for try await won in group { wins.append(won) }
                return wins
            }
            // Under a single writer each rotation retires the previous one's key, so every one
            // wins in turn; with concurrent writers a rotation that finds the newest key retired
            // first loses and adds nothing. Either way exactly one key is left unretired.
            let stored = try await database.read { try repository.all(on: $0) }
            #expect(stored.filter { $0.key.retiresAt == nil }.count == 1)
            #expect(stored.count == 1 + wins.filter { $0 }.count)
        }
    }
}
