import Foundation
import LatchkeyServer
import LatchkeyStore
import Testing

@Suite("Housekeeping")
struct HousekeepingTests {
    @Test("expired rows go, live ones stay: replay records, tombstones, challenges, MFA tokens, finished login counters")
    func purge() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let now = server.clock.now
            @Sendable func at(_ offset: TimeInterval) -> SQLValue { .time(now.addingTimeInterval(offset)) }
            try await server.database.write { connection in
                for (key, expires) in [([UInt8](repeating: 1, count: 32), at(-10)), ([UInt8](repeating: 2, count: 32), at(600))] {
                    try connection.execute("INSERT INTO apple_identity_tokens (token_key, expires_at) VALUES (?, ?)", [.blob(key), expires])
                    try connection.execute("INSERT INTO ended_refresh_tokens (token_hash, reason, expires_at) VALUES (?, 'account_deleted', ?)", [.blob(key), expires])
                    try connection.execute(
                        "INSERT INTO mfa_tokens (token_hash, user_id, first_factor, created_at, expires_at) VALUES (?, ?, 'pwd', ?, ?)",
                        [.blob(key), .text(user.id), at(-400), expires])
                }
                for (id, expires) in [("c-old", at(-1)), ("c-live", at(100))] {
                    try connection.execute(
                        "INSERT INTO challenges (id, user_id, purpose, challenge_hash, created_at, expires_at) VALUES (?, ?, 'register', ?, ?, ?)",
                        [.text(id), .text(user.id), .blob([UInt8](repeating: 3, count: 32)), at(-120), expires])
                }
                // Window over and no block: the same as no row. Window running, or a block running: kept.
                try connection.execute("INSERT INTO rate_limits (key, window_start, failures) VALUES ('done', ?, 3)", [at(-3600)])
                try connection.execute("INSERT INTO rate_limits (key, window_start, failures) VALUES ('window', ?, 3)", [at(-60)])
                try connection.execute("INSERT INTO rate_limits (key, window_start, failures, blocked_until) VALUES ('blocked', ?, 12, ?)", [at(-3600), at(60)])
            }
            try await server.application.runBackgroundJobs()
            for table in ["apple_identity_tokens", "ended_refresh_tokens", "mfa_tokens", "challenges"] {
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM \(table)") == 1, "\(table)")
            }
            let keys = try await server.database.read { try $0.query("SELECT key FROM rate_limits ORDER BY key", []).map { try $0.string("key") } }
            #expect(keys == ["blocked", "window"])
        }
    }
}
