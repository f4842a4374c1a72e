import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

@Suite("Repository contract: rate limits")
struct RateLimitRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let window = LoginRateLimiter.window

    @Test("S14: N concurrent failures on one key record N, each seeing its own count", arguments: ContractEngine.allCases)
    func s14ConcurrentFailuresRecordN(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let limits = RateLimitRepository()
            let n = 24
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<n {
                    group.addTask {
                        try await db.write {
                            try limits.recordFailure(key: "login:ip:192.0.2.1", now: Self.now, windowStartedBefore: Self.now - Self.window, on: $0)
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(counts.sorted() == Array(1...n), "no increment is lost and none is counted twice")
            let next = try await db.write {
                try limits.recordFailure(key: "login:ip:192.0.2.1", now: Self.now, windowStartedBefore: Self.now - Self.window, on: $0)
            }
            #expect(next == n + 1)
        }
    }

    @Test("S14: a window restarts only once it has passed and no block runs", arguments: ContractEngine.allCases)
    func s14WindowRestart(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let limits = RateLimitRepository()
            func fail(at time: Date) async throws -> Int {
                try await db.write { try limits.recordFailure(key: "k", now: time, windowStartedBefore: time - Self.window, on: $0) }
            }
            #expect(try await fail(at: Self.now) == 1)
            #expect(try await fail(at: Self.now + 60) == 2)
            #expect(try await fail(at: Self.now + Self.window + 1) == 1, "the window passed")
            try await db.write { try limits.extendBlock(key: "k", until: Self.now + 3 * Self.window, on: $0) }
            #expect(try await fail(at: Self.now + 2 * Self.window + 2) == 2, "a running block keeps the count")
            #expect(try await fail(at: Self.now + 3 * Self.window + 1) == 1, "the block and the window are over")
        }
    }

    @Test("S14: blocks only grow, whatever order they are written in; a reset forgets count and block", arguments: ContractEngine.allCases)
    func s14BlockAndReset(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let limits = RateLimitRepository()
            #expect(try await db.read { try limits.blockedUntil(key: "k", on: $0) } == nil)
            _ = try await db.write { try limits.recordFailure(key: "k", now: Self.now, windowStartedBefore: Self.now - Self.window, on: $0) }
            #expect(try await db.read { try limits.blockedUntil(key: "k", on: $0) } == nil)
            #expect(try await db.write { try limits.extendBlock(key: "k", until: Self.now + 120, on: $0) })
            #expect(try await db.write { try limits.extendBlock(key: "k", until: Self.now + 60, on: $0) } == false, "a shorter block does not shorten")
            #expect(try await db.read { try limits.blockedUntil(key: "k", on: $0) } == Self.now + 120)
            #expect(try await db.write { try limits.extendBlock(key: "k", until: Self.now + 240, on: $0) })
            #expect(try await db.read { try limits.blockedUntil(key: "k", on: $0) } == Self.now + 240)

            #expect(try await db.write { try limits.delete(key: "k", on: $0) })
            #expect(try await db.write { try limits.delete(key: "k", on: $0) } == false)
            #expect(try await db.read { try limits.blockedUntil(key: "k", on: $0) } == nil)
            let fresh = try await db.write { try limits.recordFailure(key: "k", now: Self.now, windowStartedBefore: Self.now - Self.window, on: $0) }
            #expect(fresh == 1)
        }
    }

    @Test("S14: concurrent failures past the limit leave the longest back-off, none lost", arguments: ContractEngine.allCases)
    func s14ConcurrentBlocks(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let limiter = LoginRateLimiter(perAccount: 3, perIP: .max)
            let keys = limiter.keys(username: "ada", ip: nil)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await db.write { try limiter.recordFailure(keys, now: Self.now, on: $0) } }
                }
                try await group.waitForAll()
            }
            // Failures 3, 4, 5 and 6 block for 1, 2, 4 and 8 minutes; the 8 must win.
            let block = try #require(try await db.read { try limiter.block(keys, now: Self.now, on: $0) })
            #expect(block.scope == "account" && block.retryAfter == 8 * 60)
            #expect(try await db.write { try limiter.reset(keys[0], on: $0) })
            #expect(try await db.read { try limiter.block(keys, now: Self.now, on: $0) } == nil)
        }
    }
}
