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
            #expect(Set(found.map(\.id)) == [made[0].id, made[1].id, made[2].id])
            let byID = try await db.read { try Self.repository.users(matching: (made[4].id.lowercased(), made[4].id), after: nil, limit: 10, on: $0) }
            #expect(byID.map(\.id) == [made[4].id])

            var walked: [String] = []
            var cursor: AdminCursor?
            while walked.count < 10 {
                let page = try await db.read { [cursor] in try Self.repository.users(matching: nil, after: cursor, limit: 2, on: $0) }
                walked += page.map(\.id)
                guard page.count == 2, let last = page.last else { break }
                cursor = AdminCursor(time: last.createdAt, id: last.id)
            }
            #expect(walked.count == 5 && Set(walked) == Set(made.map(\.id)))
            let expected = made.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.map(\.id)
            #expect(walked == expected, "newest first, then the greater id")
        }
    }

    @Test("S57: the search and the pages are answered from the indexes of migration 13, not by scanning users", arguments: ContractEngine.allCases)
    func queriesUseTheIndexes(engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { (db: any SQLDatabase) in
            let cursor = AdminCursor(time: Self.now, id: "usr_x")
            let search = Self.repository.usersQuery(matching: ("ada", "ada"), after: cursor, limit: 50)
            let page = Self.repository.usersQuery(matching: nil, after: cursor, limit: 50)
            let plans = try await db.write { connection -> [String] in
                let explain: String
                switch engine {
                case .sqlite: explain = "EXPLAIN QUERY PLAN "
                case .postgres:
                    // An empty table is cheapest to scan; the question is whether the index can answer.
                    _ = try connection.queryOne("SELECT set_config('enable_seqscan', 'off', true) AS s", [])
                    explain = "EXPLAIN "
                }
                return try [search, page].map { query in
                    try connection.query(explain + query.sql, query.bindings).map { row in
                        row.optionalString("detail") ?? row.optionalString("QUERY PLAN") ?? ""
                    }.joined(separator: "\n")
                }
            }
            for index in ["users_email_search", "users_given_name_search", "users_family_name_search", "password_credentials_username_search"] {
                #expect(plans[0].contains(index), "\(engine): \(index) in\n\(plans[0])")
            }
            #expect(plans[1].contains("users_created_at_id"), "\(engine):\n\(plans[1])")
            #expect(!plans[1].lowercased().contains("sort"), "\(engine): the page reads the index in order\n\(plans[1])")
        }
    }
}
