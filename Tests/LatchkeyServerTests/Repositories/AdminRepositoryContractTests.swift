import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

@Suite("Repository contract: admin roles, user search, audit pages")
struct AdminRepositoryContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let repository = AdminRepository()

    @Test("roles: grant replaces, revoke tells the role it took, the role goes with its account; only admin and support are stored", arguments: ContractEngine.allCases)
    func roles(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let users = UserRepository(database: db)
            let ada = try await db.write { try users.create(email: "ada@example.com", givenName: "Ada", now: Self.now, on: $0) }
            try await db.write { try Self.repository.grant(userID: ada.id, role: .support, at: Self.now, on: $0) }
            try await db.write { try Self.repository.grant(userID: ada.id, role: .admin, at: Self.now, on: $0) }
            #expect(try await db.read { try Self.repository.role(userID: ada.id, on: $0) } == .admin)
            #expect(try await db.read { try Self.repository.grants(on: $0) }.map(\.role) == [.admin])
            #expect(try await db.write { try Self.repository.revoke(userID: ada.id, on: $0) } == .admin)
            #expect(try await db.write { try Self.repository.revoke(userID: ada.id, on: $0) } == nil)
            await #expect(throws: StoreError.self) {
                try await db.write {
                    try $0.execute("INSERT INTO admin_roles (user_id, role, granted_at) VALUES (?, 'owner', 1)", [.text(ada.id)])
                }
            }
            try await db.write { try Self.repository.grant(userID: ada.id, role: .support, at: Self.now, on: $0) }
            #expect(try await db.write { try users.delete(ada.id, on: $0) })
            #expect(try await db.read { try Self.repository.grants(on: $0) }.isEmpty, "ON DELETE CASCADE")
        }
    }

    @Test("S57: the search finds by prefix over email, names and username, bytewise on lowercased values; keyset pages walk every row once, ties broken by id", arguments: ContractEngine.allCases)
    func searchAndPages(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let users = UserRepository(database: db)
            var created: [User] = []
            for (index, email) in ["Ada@Example.com", "adam@example.com", "bob@example.com", "ADELE@example.com", "zed@example.com"].enumerated() {
                // Pairs share a second, so the id decides their order.
                created.append(try await db.write { try users.create(email: email, givenName: nil, now: Self.now.addingTimeInterval(Double(index / 2)), on: $0) })
            }
            let made = created
            try await db.write { connection in
                try connection.execute(
                    "INSERT INTO password_credentials (user_id, username, password_hash, created_at, updated_at) VALUES (?, 'adasworld', 'x', 1, 1)",
                    [.text(made[2].id)])
            }
            let found = try await db.read { try Self.repository.users(matching: ("ada", "ada"), after: nil, limit: 10, on: $0) }
            #expect(Set(found.map(\.user.id)) == [made[0].id, made[1].id, made[2].id])
            let byID = try await db.read { try Self.repository.users(matching: (made[4].id.lowercased(), made[4].id), after: nil, limit: 10, on: $0) }
            #expect(byID.map(\.user.id) == [made[4].id])

            var walked: [String] = []
            var cursor: AdminCursor?
            while walked.count < 10 {
                let page = try await db.read { [cursor] in try Self.repository.users(matching: nil, after: cursor, limit: 2, on: $0) }
                walked += page.map(\.user.id)
                guard page.count == 2, let last = page.last else { break }
                cursor = AdminCursor(time: last.user.createdAt, id: last.user.id)
            }
            #expect(walked.count == 5 && Set(walked) == Set(made.map(\.id)))
            let expected = made.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.map(\.id)
            #expect(walked == expected, "newest first, then the greater id")
        }
    }

    @Test("a listed user carries its username, methods, factors, last sign-in and disabled_at, read with the page in one statement", arguments: ContractEngine.allCases)
    func summaries(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let users = UserRepository(database: db)
            let ada = try await db.write { try users.create(email: "ada@example.com", givenName: "Ada", now: Self.now, on: $0) }
            let bob = try await db.write { try users.create(email: "bob@example.com", givenName: nil, now: Self.now.addingTimeInterval(1), on: $0) }
            try await db.write { connection in
                let (ada, byte) = (SQLValue.text(ada.id), SQLValue.blob([1]))
                let identity = "INSERT INTO identities (id, user_id, provider, issuer, subject, created_at) VALUES (?, ?, ?, 'https://issuer', ?, 1)"
                let session = "INSERT INTO sessions (id, user_id, created_at, last_used_at, idle_expires_at, absolute_expires_at) VALUES (?, ?, ?, 1, 1, 1)"
                for (statement, bindings) in [
                    ("INSERT INTO password_credentials (user_id, username, password_hash, created_at, updated_at) VALUES (?, 'ada', 'x', 1, 1)", [ada]),
                    (identity, [.text("idn_1"), ada, .text("sandbox"), .text("1")]),
                    (identity, [.text("idn_2"), ada, .text("sandbox"), .text("2")]),
                    (identity, [.text("idn_3"), ada, .text("apple"), .text("3")]),
                    (
                        """
                        INSERT INTO passkeys (id, user_id, credential_id, public_key, algorithm, backup_eligible, backed_up, aaguid, attestation, name, created_at)
                        VALUES ('pk_1', ?, ?, ?, -7, 0, 0, ?, 'none', 'key', 1)
                        """, [ada, byte, byte, byte]
                    ),
                    ("INSERT INTO totp_factors (id, user_id, secret, confirmed_at, created_at) VALUES ('totp_1', ?, ?, 1, 1)", [ada, byte]),
                    ("INSERT INTO recovery_codes (code_hash, user_id, created_at) VALUES (?, ?, 1)", [byte, ada]),
                    (session, [.text("ses_1"), ada, .integer(100)]),
                    (session, [.text("ses_2"), ada, .integer(200)]),
                    ("UPDATE users SET disabled_at = 300 WHERE id = ?", [ada]),
                ] as [(String, [SQLValue])] {
                    try connection.execute(statement, bindings)
                }
            }
            let page = try await db.read { try Self.repository.users(matching: nil, after: nil, limit: 10, on: $0) }
            #expect(page.map(\.user.id) == [bob.id, ada.id])
            #expect(page[0].methods.isEmpty && page[0].factors.isEmpty && page[0].username == nil && page[0].lastSignInAt == nil && page[0].disabledAt == nil)
            #expect(page[1].username == "ada")
            #expect(page[1].methods == ["password", "apple", "sandbox", "passkey"])
            #expect(page[1].factors == ["passkey", "recovery_code", "totp"])
            #expect(page[1].lastSignInAt == Date(timeIntervalSince1970: 200))
            #expect(page[1].disabledAt == Date(timeIntervalSince1970: 300))
            #expect(try await db.read { try Self.repository.user(id: ada.id, on: $0) } == page[1])
            #expect(try await db.read { try Self.repository.user(id: "usr_none", on: $0) } == nil)
        }
    }

    @Test("S57: the first page, a search and a page after a cursor are answered from the indexes, the lookups of each row too, with no sort", arguments: ContractEngine.allCases)
    func queriesUseTheIndexes(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let cursor = AdminCursor(time: Self.now, id: "usr_x")
            let search = Self.repository.usersQuery(matching: ("ada", "ada"), after: cursor, limit: 50)
            let first = Self.repository.usersQuery(matching: nil, after: nil, limit: 50)
            let later = Self.repository.usersQuery(matching: nil, after: cursor, limit: 50)
            let plans = try await db.write { connection -> [String] in
                let explain: String
                switch engine {
                case .sqlite: explain = "EXPLAIN QUERY PLAN "
                case .postgres:
                    // An empty table is cheapest to scan; the question is whether the index can answer.
                    _ = try connection.queryOne("SELECT set_config('enable_seqscan', 'off', true) AS s", [])
                    explain = "EXPLAIN "
                }
                return try [search, first, later].map { query in
                    try connection.query(explain + query.sql, query.bindings).map { row in
                        row.optionalString("detail") ?? row.optionalString("QUERY PLAN") ?? ""
                    }.joined(separator: "\n")
                }
            }
            for index in ["users_email_search", "users_given_name_search", "users_family_name_search", "password_credentials_username_search"] {
                #expect(plans[0].contains(index), "\(engine): \(index) in\n\(plans[0])")
            }
            for plan in plans[1...] {
                #expect(plan.contains("users_created_at_id"), "\(engine):\n\(plan)")
                #expect(!plan.lowercased().contains("sort") && !plan.contains("TEMP B-TREE"), "\(engine): the page reads the index in order\n\(plan)")
            }
            for plan in plans {
                for index in ["sessions_user_id", "identities_user_id", "passkeys_user_id", "recovery_codes_user_id"] {
                    #expect(plan.contains(index), "\(engine): each row's lookups are index probes, \(index) in\n\(plan)")
                }
            }
            switch engine {
            case .sqlite:
                #expect(plans[2].contains("users_created_at_id ((created_at,id)<(?,?))"), "the cursor is a range of the index, not a filter\n\(plans[2])")
                let tableScan = { (line: Substring) in line.contains("SCAN ") && !line.contains("USING") && !line.contains("SCAN page") && !line.contains("CONSTANT") }
                for plan in plans { #expect(!plan.split(separator: "\n").contains(where: tableScan), "no table is scanned\n\(plan)") }
            case .postgres:
                #expect(plans[2].contains("Index Cond: (ROW(created_at, id) <"), "the cursor is a range of the index, not a filter\n\(plans[2])")
            }
        }
    }
}
