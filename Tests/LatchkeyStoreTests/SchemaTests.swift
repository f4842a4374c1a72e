import Foundation
import LatchkeyStore
import Testing

@Suite("Schema (migration 1)")
struct SchemaTests {
    static let tables = [
        "admin_roles", "app_attest_challenges", "app_attest_keys", "apple_identity_tokens", "apple_notifications", "audit_log", "browser_sessions", "challenges", "console_sessions",
        "device_authorizations", "device_keys", "dpop_proofs", "email_flows", "ended_refresh_tokens", "identities", "mfa_tokens", "oauth_client_assertions", "oauth_clients", "oauth_codes",
        "oauth_consents", "outbox", "passkey_ceremonies", "passkeys", "password_credentials", "provider_states", "rate_limits", "recovery_codes", "refresh_tokens", "schema_migrations", "sessions",
        "signing_keys", "totp_factors", "users",
    ]

    /// A user with one session, for the tests below.
    static func insertUserAndSession(_ connection: any SQLConnection, user: String = "u1", session: String = "s1") throws {
        try connection.execute(
            "INSERT INTO users (id, email, created_at, updated_at) VALUES (?, ?, 1, 1)", [.text(user), "a@example.com"])
        try connection.execute(
            """
            INSERT INTO sessions (id, user_id, amr, created_at, last_used_at, idle_expires_at, absolute_expires_at)
            VALUES (?, ?, '["pwd"]', 1, 1, 100, 1000)
            """, [.text(session), .text(user)])
    }

    static func hash(_ byte: UInt8) -> SQLValue { .blob([UInt8](repeating: byte, count: 32)) }

    @Test("every table exists, foreign keys check out, and the file is intact")
    func tables() async throws {
        try await withDatabase(migrated: true) { database, _ in
            let names = try await database.read { connection in
                try connection.query(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name", []
                ).map { try $0.string("name") }
            }
            #expect(names == Self.tables)
            let violations = try await database.read { try $0.query("PRAGMA foreign_key_check", []) }
            #expect(violations.isEmpty)
            let intact = try await database.integrityCheck()
            #expect(intact)
        }
    }

    @Test("S8: the partial unique index refuses a second live refresh token for a session")
    func s8OneLiveRefreshToken() async throws {
        try await withDatabase(migrated: true) { database, _ in
            try await database.write { connection in
                try Self.insertUserAndSession(connection)
                try connection.execute(
                    "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's1', 1)", [Self.hash(1)])
            }
            // A rotation that forgets to retire the old token: refused, and nothing of it stays.
            await #expect(throws: StoreError.constraint()) {
                try await database.write { connection in
                    try connection.execute(
                        "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's1', 2)",
                        [Self.hash(2)])
                }
            }
            // A proper rotation: retire, then insert the successor, in one transaction.
            try await database.write { connection in
                let retired = try connection.execute(
                    "UPDATE refresh_tokens SET retired_at = 2, replaced_by = ? WHERE token_hash = ? AND retired_at IS NULL",
                    [Self.hash(2), Self.hash(1)])
                #expect(retired == 1)
                try connection.execute(
                    "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's1', 2)", [Self.hash(2)])
            }
            let live = try await database.read {
                try $0.query("SELECT token_hash FROM refresh_tokens WHERE retired_at IS NULL", []).map { try $0.blob("token_hash") }
            }
            #expect(live == [[UInt8](repeating: 2, count: 32)])
            #expect(try await count("refresh_tokens", in: database) == 2)
        }
    }

    @Test("S8: of two concurrent rotations of one token, exactly one succeeds")
    func s8ConcurrentRotation() async throws {
        try await withDatabase(migrated: true) { database, _ in
            try await database.write { connection in
                try Self.insertUserAndSession(connection)
                try connection.execute(
                    "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's1', 1)", [Self.hash(1)])
            }
            // Each attempt retires the presented token only if it is still live, then inserts its
            // own successor; the loser finds nothing to retire and reports reuse.
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for successor in UInt8(10)..<UInt8(18) {
                    group.addTask {
                        try await database.write { connection -> Bool in
                            let retired = try connection.execute(
                                "UPDATE refresh_tokens SET retired_at = 2, replaced_by = ? WHERE token_hash = ? AND retired_at IS NULL",
                                [Self.hash(successor), Self.hash(1)])
                            guard retired == 1 else { return false }
                            try connection.execute(
                                "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's1', 2)",
                                [Self.hash(successor)])
                            return true
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            let live = try await database.read {
                try $0.queryOne("SELECT count(*) AS n FROM refresh_tokens WHERE retired_at IS NULL", [])!.int("n")
            }
            #expect(live == 1)
        }
    }

    @Test("deleting a user cascades to everything it owns; the audit log keeps its entries")
    func cascadeOnUserDelete() async throws {
        try await withDatabase(migrated: true) { database, _ in
            try await database.write { connection in
                try Self.insertUserAndSession(connection)
                try Self.insertUserAndSession(connection, user: "u2", session: "s2")
                try connection.execute(
                    "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's1', 1)", [Self.hash(1)])
                try connection.execute(
                    "INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's2', 1)", [Self.hash(2)])
                try connection.execute(
                    """
                    INSERT INTO identities (id, user_id, provider, issuer, subject, apple_refresh_token, created_at)
                    VALUES ('i1', 'u1', 'apple', 'https://appleid.apple.com', '001.abc', ?, 1)
                    """, [.blob([9, 9, 9])])
                try connection.execute(
                    "INSERT INTO password_credentials (user_id, username, password_hash, created_at, updated_at) VALUES ('u1', 'ada', '$argon2id$...', 1, 1)",
                    [])
                try connection.execute(
                    "INSERT INTO device_keys (id, user_id, public_key, label, created_at) VALUES ('d1', 'u1', ?, 'phone', 1)",
                    [.blob([4] + [UInt8](repeating: 7, count: 64))])
                try connection.execute(
                    """
                    INSERT INTO challenges (id, user_id, device_key_id, purpose, challenge_hash, created_at, expires_at)
                    VALUES ('c1', 'u1', 'd1', 'step_up', ?, 1, 121)
                    """, [Self.hash(3)])
                try connection.execute(
                    "INSERT INTO totp_factors (id, user_id, secret, created_at) VALUES ('t1', 'u1', ?, 1)", [.blob([1])])
                try connection.execute(
                    "INSERT INTO recovery_codes (code_hash, user_id, created_at) VALUES (?, 'u1', 1)", [Self.hash(4)])
                try AuditLog(database: database).record(
                    .init(time: Date(timeIntervalSince1970: 1), userID: "u1", event: AuditEvent(rawValue: "password.login"), outcome: .success),
                    on: connection)
            }
            try await database.write { try $0.execute("DELETE FROM users WHERE id = 'u1'", []) }
            for table in [
                "identities", "mfa_tokens", "password_credentials", "device_keys", "challenges", "totp_factors", "recovery_codes",
            ] {
                #expect(try await count(table, in: database) == 0, "\(table)")
            }
            // The other user's session and token are untouched.
            let sessions = try await database.read { try $0.query("SELECT id FROM sessions", []).map { try $0.string("id") } }
            #expect(sessions == ["s2"])
            #expect(try await count("refresh_tokens", in: database) == 1)
            #expect(try await AuditLog(database: database).entries(userID: "u1").count == 1)
        }
    }

    @Test("deleting a device key cascades to its challenges only")
    func cascadeOnDeviceKeyDelete() async throws {
        try await withDatabase(migrated: true) { database, _ in
            try await database.write { connection in
                try Self.insertUserAndSession(connection)
                try connection.execute(
                    "INSERT INTO device_keys (id, user_id, public_key, label, created_at) VALUES ('d1', 'u1', ?, 'phone', 1)",
                    [.blob([4, 1])])
                try connection.execute(
                    """
                    INSERT INTO challenges (id, user_id, device_key_id, purpose, challenge_hash, created_at, expires_at)
                    VALUES ('c1', 'u1', 'd1', 'step_up', ?, 1, 121), ('c2', 'u1', NULL, 'register', ?, 1, 121)
                    """, [Self.hash(1), Self.hash(2)])
                try connection.execute("DELETE FROM device_keys WHERE id = 'd1'", [])
            }
            let left = try await database.read { try $0.query("SELECT id FROM challenges", []).map { try $0.string("id") } }
            #expect(left == ["c2"])
        }
    }

    @Test("constraints: foreign keys, unique identities, unique usernames, boolean checks, one TOTP per user")
    func constraints() async throws {
        try await withDatabase(migrated: true) { database, _ in
            try await database.write { try Self.insertUserAndSession($0) }
            let refused: [String] = [
                // A session for a user that does not exist.
                """
                INSERT INTO sessions (id, user_id, created_at, last_used_at, idle_expires_at, absolute_expires_at)
                VALUES ('s9', 'nobody', 1, 1, 1, 1)
                """,
                // The same Apple account twice.
                """
                INSERT INTO identities (id, user_id, provider, issuer, subject, created_at)
                VALUES ('i1', 'u1', 'apple', 'iss', 'sub', 1), ('i2', 'u1', 'apple', 'iss', 'sub', 1)
                """,
                "INSERT INTO users (id, email_verified, created_at, updated_at) VALUES ('u9', 2, 1, 1)",
                "INSERT INTO users (id, created_at, updated_at) VALUES ('u9', NULL, 1)",
                """
                INSERT INTO totp_factors (id, user_id, secret, created_at)
                VALUES ('t1', 'u1', x'01', 1), ('t2', 'u1', x'02', 1)
                """,
                """
                INSERT INTO password_credentials (user_id, username, password_hash, created_at, updated_at)
                VALUES ('u1', 'ada', 'h', 1, 1)
                """,
            ]
            try await database.write { connection in
                try connection.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('u2', 1, 1)", [])
                try connection.execute(
                    "INSERT INTO password_credentials (user_id, username, password_hash, created_at, updated_at) VALUES ('u2', 'ada', 'h', 1, 1)",
                    [])
            }
            for sql in refused {
                await #expect(throws: StoreError.constraint(), "\(sql)") {
                    try await database.write { try $0.execute(sql, []) }
                }
            }
        }
    }

    @Test("migration 1 renders for PostgreSQL with its own types and nothing SQLite-only")
    func postgreSQLRendering() {
        let statements = LatchkeySchema.migrations[0].statements(.postgreSQL)
        let all = statements.joined(separator: "\n")
        #expect(all.contains("BYTEA"))
        #expect(all.contains("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"))
        for sqliteOnly in ["BLOB", "AUTOINCREMENT", "WITHOUT ROWID", "INSERT OR", "?"] {
            #expect(!all.contains(sqliteOnly), "\(sqliteOnly)")
        }
        #expect(statements.count == LatchkeySchema.migrations[0].statements(.sqlite).count)
    }
}
