import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// The contract of `provider_states`: the spend of an upstream sign-in's state.
@Suite("Repository contract: upstream sign-in states")
struct ProviderStateRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_764_500_000)

    @Test("S38: a state is spent once of 8 concurrent callbacks; the housekeeping removes it once it would have expired", arguments: ContractEngine.allCases)
    func spentOnce(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let states = ProviderStateRepository()
            let spent = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await database.write { try states.spend(id: "state-1", provider: "corp", expiresAt: Self.now.addingTimeInterval(600), at: Self.now, on: $0) }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(spent.filter { $0 }.count == 1)
            #expect(try await database.write { try states.spend(id: "state-2", provider: "corp", expiresAt: Self.now.addingTimeInterval(600), at: Self.now, on: $0) })
            #expect(try await database.write { try RetentionRepository().deleteExpired(now: Self.now.addingTimeInterval(599), on: $0) } == 0)
            #expect(try await database.write { try RetentionRepository().deleteExpired(now: Self.now.addingTimeInterval(601), on: $0) } == 2)
        }
    }
}
