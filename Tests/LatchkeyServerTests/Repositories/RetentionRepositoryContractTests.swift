import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

@Suite("RetentionRepository contract")
struct RetentionRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_764_500_000)

    static func count(_ table: String, on connection: any SQLConnection) throws -> Int64 {
        try connection.queryOne("SELECT count(*) AS n FROM \(table)", [])!.int("n")
    }

    /// One row past its expiry and one still live in every table that expires rows.
    static func seedExpiring(on connection: any SQLConnection) throws {
        let now = now
        try connection.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('usr_1', ?, ?)", [.time(now), .time(now)])
        try connection.execute(
            """
            INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, scopes, created_at)
            VALUES ('cl_1', 'Example', '["https://example.com/cb"]', '["authorization_code"]', '["openid"]', ?)
            """, [.time(now)])
        for (index, expires) in [now.addingTimeInterval(-1), now.addingTimeInterval(600)].enumerated() {
            let key = [UInt8](repeating: UInt8(index + 1), count: 32)
            try connection.execute("INSERT INTO apple_identity_tokens (token_key, expires_at) VALUES (?, ?)", [.blob(key), .time(expires)])
            try connection.execute(
                "INSERT INTO apple_notifications (jti, received_at, expires_at) VALUES (?, ?, ?)", [.text("jti-\(index)"), .time(now), .time(expires)])
            try connection.execute(
                "INSERT INTO ended_refresh_tokens (token_hash, reason, expires_at) VALUES (?, 'account_deleted', ?)", [.blob(key), .time(expires)])
            try connection.execute(
                "INSERT INTO challenges (id, user_id, purpose, challenge_hash, created_at, expires_at) VALUES (?, 'usr_1', 'register', ?, ?, ?)",
                [.text("chl-\(index)"), .blob(key), .time(now.addingTimeInterval(-120)), .time(expires)])
            try connection.execute(
                "INSERT INTO mfa_tokens (token_hash, user_id, first_factor, created_at, expires_at) VALUES (?, 'usr_1', 'pwd', ?, ?)",
                [.blob(key), .time(now.addingTimeInterval(-400)), .time(expires)])
            try connection.execute(
                """
                INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scope, auth_time, created_at, expires_at)
                VALUES (?, 'cl_1', 'usr_1', 'https://example.com/cb', 'challenge', 'openid', ?, ?, ?)
                """, [.blob(key), .time(now), .time(now), .time(expires)])
            try connection.execute(
                "INSERT INTO oauth_client_assertions (client_id, jti, expires_at) VALUES ('cl_1', ?, ?)", [.text("jti-\(index)"), .time(expires)])
            try connection.execute(
                """
                INSERT INTO browser_sessions (id, token_hash, user_id, auth_time, created_at, last_used_at, expires_at)
                VALUES (?, ?, 'usr_1', ?, ?, ?, ?)
                """, [.text("bs-\(index)"), .blob(key), .time(now), .time(now), .time(now), .time(expires)])
            try connection.execute(
                "INSERT INTO passkey_ceremonies (id, kind, challenge, created_at, expires_at) VALUES (?, 'sign-in', ?, ?, ?)",
                [.text("pkc-\(index)"), .blob(key), .time(now.addingTimeInterval(-300)), .time(expires)])
            _ = try ProviderStateRepository().spend(id: "state-\(index)", provider: "corp", expiresAt: expires, at: now, on: connection)
            _ = try DPoPReplayRepository().spend(proofHash: key, expiresAt: expires, on: connection)
            try DeviceAuthorizationRepository().insert(
                DeviceAuthorization(
                    id: "dva-\(index)", clientID: "cl_1", scope: "openid", status: .pending, userID: nil, browserSessionID: nil, authTime: nil,
                    amr: [], createdAt: now.addingTimeInterval(-600), expiresAt: expires),
                deviceCodeHash: key, userCodeHash: key, on: connection)
            try AppAttestRepository().insertChallenge(hash: key, createdAt: now.addingTimeInterval(-300), expiresAt: expires, on: connection)
            try connection.execute(
                "INSERT INTO console_sessions (id, token_hash, user_id, session_id, auth_time, created_at, expires_at) VALUES (?, ?, 'usr_1', 'ses_1', ?, ?, ?)",
                [.text("acs-\(index)"), .blob(key), .time(now), .time(now), .time(expires)])
        }
    }

    @Test("expired rows go and live rows stay, in every table that expires rows", arguments: ContractEngine.allCases)
    func deleteExpired(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (database: any SQLDatabase) in
            let retention = RetentionRepository()
            try await database.write { try Self.seedExpiring(on: $0) }
            let deleted = try await database.write { try retention.deleteExpired(now: Self.now, on: $0) }
            #expect(deleted == RetentionRepository.expiringTables.count)
            try await database.read { connection in
                for table in RetentionRepository.expiringTables {
                    #expect(try Self.count(table, on: connection) == 1, "\(table)")
                    let left = try connection.queryOne("SELECT expires_at FROM \(table)", [])!
                    #expect(try left.date("expires_at") > Self.now, "\(table): the live row stayed")
                }
            }
            #expect(try await database.write { try retention.deleteExpired(now: Self.now, on: $0) } == 0, "nothing more to delete")
        }
    }

    @Test("login counters go once their window is over and no block runs; a running window or block stays", arguments: ContractEngine.allCases)
    func deleteFinishedRateLimits(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (database: any SQLDatabase) in
            let now = Self.now
            let windowStart = now.addingTimeInterval(-LoginRateLimiter.window)
            try await database.write { connection in
                try connection.execute("INSERT INTO rate_limits (key, window_start, failures) VALUES ('done', ?, 3)", [.time(now.addingTimeInterval(-3600))])
                try connection.execute("INSERT INTO rate_limits (key, window_start, failures) VALUES ('window', ?, 3)", [.time(now.addingTimeInterval(-60))])
                try connection.execute(
                    "INSERT INTO rate_limits (key, window_start, failures, blocked_until) VALUES ('blocked', ?, 12, ?)",
                    [.time(now.addingTimeInterval(-3600)), .time(now.addingTimeInterval(60))])
                try connection.execute(
                    "INSERT INTO rate_limits (key, window_start, failures, blocked_until) VALUES ('block-over', ?, 12, ?)",
                    [.time(now.addingTimeInterval(-3600)), .time(now.addingTimeInterval(-60))])
            }
            let retention = RetentionRepository()
            let deleted = try await database.write { try retention.deleteFinishedRateLimits(windowStartedBefore: windowStart, now: now, on: $0) }
            #expect(deleted == 2)
            let keys = try await database.read { try $0.query("SELECT key FROM rate_limits ORDER BY key", []).map { try $0.string("key") } }
            #expect(keys == ["blocked", "window"])
        }
    }
}
