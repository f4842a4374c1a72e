import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// The contract of `dpop_proofs`: the spend of a DPoP proof's `jti`.
@Suite("Repository contract: DPoP proofs")
struct DPoPReplayRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_764_500_000)

    @Test("S41: a proof is spent once of 8 concurrent requests; the housekeeping removes it once its iat is out of the window", arguments: ContractEngine.allCases)
    func spentOnce(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let proofs = DPoPReplayRepository()
            let hash = [UInt8](repeating: 7, count: 32)
            let spent = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await database.write { try proofs.spend(proofHash: hash, expiresAt: Self.now.addingTimeInterval(61), on: $0) } }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(spent.filter { $0 }.count == 1)
            #expect(try await database.write { try RetentionRepository().deleteExpired(now: Self.now.addingTimeInterval(60), on: $0) } == 0)
            #expect(try await database.write { try RetentionRepository().deleteExpired(now: Self.now.addingTimeInterval(62), on: $0) } == 1)
            #expect(try await database.write { try proofs.spend(proofHash: hash, expiresAt: Self.now.addingTimeInterval(200), on: $0) }, "gone, the hash is free again")
        }
    }
}
