import Foundation
import LatchkeyStore
import Testing

@testable import LatchkeyServer

/// The contract of the outbox (`outbox`), which holds Apple revocations and mail, run on every
/// engine. Concurrent claims run each contender in its own transaction, so they prove the
/// compare-and-set, not a single writer.
@Suite("Repository contract: the outbox")
struct OutboxRepositoryContractTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func item(due: Date) -> OutboxItem {
        OutboxItem(
            id: Identifiers.make("rvk"), kind: "apple_revocation", payload: [7, 7], userID: "usr_gone", label: "com.example.app", createdAt: due,
            attempts: 0, nextAttemptAt: due, giveUpAt: due.addingTimeInterval(86_400), lastError: nil)
    }

    @Test("S28: of N concurrent claims of one due item exactly one wins; only the claimer deletes it", arguments: ContractEngine.allCases)
    func outboxClaimDelete(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let items = OutboxRepository()
            let queued = Self.item(due: Self.start)
            try await database.write { try items.insert(queued, on: $0) }
            let now = Self.start.addingTimeInterval(1)
            let due = try await database.read { try items.due(kind: "apple_revocation", at: now, limit: 10, on: $0) }
            #expect(due == [queued])
            let claims = try await withThrowingTaskGroup(of: Date?.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await database.write { try items.claim(id: queued.id, dueAt: now, until: now.addingTimeInterval(60), on: $0) } }
                }
                return try await group.reduce(into: [Date]()) { if let claim = $1 { $0.append(claim) } }
            }
            #expect(claims.count == 1)
            let claim = try #require(claims.first)
            try await database.write { connection throws in
                #expect(try items.due(kind: "apple_revocation", at: now, limit: 10, on: connection).isEmpty, "leased")
                #expect(try items.delete(id: queued.id, claim: claim.addingTimeInterval(-60), on: connection) == false, "not the claim")
                #expect(try items.release(id: queued.id, claim: now, retryAt: now, error: "x", on: connection) == false)
                #expect(try items.count(kind: "apple_revocation", userID: "usr_gone", on: connection) == 1)
                #expect(try items.delete(id: queued.id, claim: claim, on: connection))
                #expect(try items.delete(id: queued.id, claim: claim, on: connection) == false, "once")
                #expect(try items.count(kind: "apple_revocation", userID: "usr_gone", on: connection) == 0)
            }
        }
    }

    @Test("S28: a failed delivery is released by its claimer with the error and the retry time; a lease that ran out is claimed again and the old claim loses", arguments: ContractEngine.allCases)
    func outboxReleaseAndLease(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let items = OutboxRepository()
            let queued = Self.item(due: Self.start)
            try await database.write { try items.insert(queued, on: $0) }
            let retry = Self.start.addingTimeInterval(30)
            try await database.write { connection throws in
                let claim = try #require(try items.claim(id: queued.id, dueAt: Self.start, until: Self.start.addingTimeInterval(60), on: connection))
                #expect(try items.release(id: queued.id, claim: claim, retryAt: retry, error: "Apple answered 503", on: connection))
                let row = try #require(try items.due(kind: "apple_revocation", at: retry, limit: 10, on: connection).first)
                #expect(row.attempts == 1 && row.lastError == "Apple answered 503" && row.nextAttemptAt == retry)
                #expect(try items.claim(id: queued.id, dueAt: retry.addingTimeInterval(-1), until: retry.addingTimeInterval(59), on: connection) == nil, "not due yet")

                // A sender whose lease ran out loses the row to the next claimer.
                let first = try #require(try items.claim(id: queued.id, dueAt: retry, until: retry.addingTimeInterval(60), on: connection))
                let later = retry.addingTimeInterval(61)
                let second = try #require(try items.claim(id: queued.id, dueAt: later, until: later.addingTimeInterval(60), on: connection))
                #expect(second > first)
                #expect(try items.delete(id: queued.id, claim: first, on: connection) == false)
                #expect(try items.release(id: queued.id, claim: first, retryAt: later, error: "late", on: connection) == false)
                #expect(try items.delete(id: queued.id, claim: second, on: connection))
            }
        }
    }

    @Test("items of another kind are neither due nor counted for a sender", arguments: ContractEngine.allCases)
    func kindsStayApart(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let items = OutboxRepository()
            let mail = { var item = Self.item(due: Self.start); item.kind = "mail"; return item }()
            try await database.write { try items.insert(mail, on: $0) }
            try await database.read { connection throws in
                #expect(try items.due(kind: "apple_revocation", at: Self.start, limit: 10, on: connection).isEmpty)
                #expect(try items.due(kind: "mail", at: Self.start, limit: 10, on: connection) == [mail])
                #expect(try items.count(kind: "apple_revocation", on: connection) == 0 && items.count(kind: "mail", on: connection) == 1)
            }
        }
    }
}
