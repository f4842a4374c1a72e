import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// The contract of `device_authorizations`: deciding and redeeming are compare-and-set updates
/// that hold when several transactions (several instances) race, on every engine.
@Suite("Repository contract: device authorizations")
struct DeviceAuthorizationRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_764_500_000)
    static let deviceCodeHash = [UInt8](repeating: 7, count: 32)

    /// A user, a device client and one pending authorization `dva_1` expiring in ten minutes.
    static func seed(on connection: any SQLConnection) throws {
        try connection.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('usr_1', ?, ?)", [.time(now), .time(now)])
        try connection.execute(
            """
            INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, scopes, created_at)
            VALUES ('cl_tv', 'TV', '[]', '["urn:ietf:params:oauth:grant-type:device_code"]', '["openid"]', ?)
            """, [.time(now)])
        try connection.execute(
            """
            INSERT INTO browser_sessions (id, token_hash, user_id, auth_time, created_at, last_used_at, expires_at)
            VALUES ('bs_1', ?, 'usr_1', ?, ?, ?, ?)
            """, [.blob([UInt8](repeating: 1, count: 32)), .time(now), .time(now), .time(now), .time(now.addingTimeInterval(3600))])
        try DeviceAuthorizationRepository().insert(
            DeviceAuthorization(
                id: "dva_1", clientID: "cl_tv", scope: "openid", status: .pending, userID: nil, browserSessionID: nil, authTime: nil, amr: [],
                createdAt: now, expiresAt: now.addingTimeInterval(600)),
            deviceCodeHash: deviceCodeHash, userCodeHash: [UInt8](repeating: 8, count: 32), on: connection)
    }

    /// Runs `change` in 8 concurrent write transactions; returns how many changed the row.
    static func race(_ database: any SQLDatabase, _ change: @escaping @Sendable (Int, any SQLConnection) throws -> Bool) async throws -> Int {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 { group.addTask { try await database.write { try change(index, $0) } } }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
    }

    @Test("S46 S44: of 8 concurrent answers one decides; of 8 concurrent redemptions of the approval one redeems", arguments: ContractEngine.allCases)
    func compareAndSet(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let repository = DeviceAuthorizationRepository()
            try await database.write { try Self.seed(on: $0) }
            #expect(try await database.write { try repository.redeem(deviceCodeHash: Self.deviceCodeHash, now: Self.now, on: $0) } == false, "pending")

            let decided = try await Self.race(database) { index, connection in
                try repository.decide(
                    id: "dva_1", approve: index != 3, userID: "usr_1", browserSessionID: "bs_1", authTime: Self.now, amr: ["pwd", "otp", "mfa"],
                    now: Self.now, on: connection)
            }
            #expect(decided == 1)
            let stored = try #require(try await database.read { try repository.find(id: "dva_1", on: $0) })
            #expect([.approved, .denied].contains(stored.status) && stored.userID == "usr_1" && stored.amr == ["pwd", "otp", "mfa"])
            // Whichever answer won, the row now says it; redemption needs an approval.
            if stored.status == .denied {
                try await database.write { try $0.execute("UPDATE device_authorizations SET status = 'approved' WHERE id = 'dva_1'", []) }
            }

            let redeemed = try await Self.race(database) { _, connection in
                try repository.redeem(deviceCodeHash: Self.deviceCodeHash, now: Self.now.addingTimeInterval(5), on: connection)
            }
            #expect(redeemed == 1)
            #expect(try await database.read { try repository.find(deviceCodeHash: Self.deviceCodeHash, on: $0) }?.status == .redeemed)
        }
    }

    @Test("S44: an expired authorization can be neither decided nor redeemed", arguments: ContractEngine.allCases)
    func expired(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let repository = DeviceAuthorizationRepository()
            try await database.write { try Self.seed(on: $0) }
            let late = Self.now.addingTimeInterval(600)
            #expect(try await database.write {
                try repository.decide(id: "dva_1", approve: true, userID: "usr_1", browserSessionID: "bs_1", authTime: late, amr: ["pwd"], now: late, on: $0)
            } == false)
            #expect(try await database.write {
                try repository.decide(
                    id: "dva_1", approve: true, userID: "usr_1", browserSessionID: "bs_1", authTime: Self.now, amr: ["pwd"], now: late.addingTimeInterval(-1),
                    on: $0)
            })
            #expect(try await database.write { try repository.redeem(deviceCodeHash: Self.deviceCodeHash, now: late, on: $0) } == false)
            #expect(try await database.read { try repository.find(id: "dva_1", on: $0) }?.status == .approved)
        }
    }
}
