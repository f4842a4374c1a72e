import Foundation
import LatchkeyCrypto
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// What every engine must do for `AuthorizationCodeRepository` (S22): a code is stored as its
/// hash with everything it is bound to, its use is a compare-and-set that exactly one exchange
/// wins even when they race, and it lives no longer than its user, its client and its expiry.
@Suite("AuthorizationCodeRepository contract")
struct AuthorizationCodeRepositoryContractTests {
    let repository = AuthorizationCodeRepository()
    let clients = ClientRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func hash(_ n: UInt8) -> [UInt8] { HashFunction.sha256.hash([n]) }

    func client(_ id: String) -> OAuthClient {
        OAuthClient(
            id: id, name: "Client \(id)", isConfidential: false, isFirstParty: false, redirectURIs: ["https://\(id).example/cb"],
            postLogoutRedirectURIs: [], grantTypes: [.authorizationCode, .refreshToken], scopes: ["openid", "email"],
            idTokenAlgorithm: "RS256", createdAt: now)
    }

    /// A code with every optional field set, as the authorization endpoint writes one.
    func code(_ n: UInt8, clientID: String = "cl_web", userID: String = "usr_1", browserSessionID: String? = "bs_1", nonce: String? = "n-0S6_WzA2Mj")
        -> AuthorizationCode
    {
        AuthorizationCode(
            hash: Self.hash(n), clientID: clientID, userID: userID, browserSessionID: browserSessionID,
            redirectURI: "https://\(clientID).example/cb?tenant=1", codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            scope: "email openid", nonce: nonce, authTime: now.addingTimeInterval(-300), amr: ["pwd", "otp", "mfa"], createdAt: now,
            expiresAt: now.addingTimeInterval(AuthorizationCode.lifetime), usedAt: nil, sessionID: nil)
    }

    func session(_ id: String, userID: String = "usr_1") -> Session {
        Session(
            id: id, userID: userID, amr: ["pwd"], createdAt: now, lastUsedAt: now, idleExpiresAt: now.addingTimeInterval(3600),
            absoluteExpiresAt: now.addingTimeInterval(86_400), userAgent: nil, ip: nil)
    }

    /// Two users, two clients, a browser session `bs_1` of `usr_1`, and code 1 (`cl_web`, `usr_1`, `bs_1`).
    func withCode<T>(_ engine: ContractEngine, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await withContractDatabase(engine) { database in
            try await database.write { connection in
                try SessionRepositoryContractTests.insertUser("usr_1", now: self.now, on: connection)
                try SessionRepositoryContractTests.insertUser("usr_2", now: self.now, on: connection)
                try self.clients.insert(self.client("cl_web"), secretHash: nil, on: connection)
                try self.clients.insert(self.client("cl_other"), secretHash: nil, on: connection)
                try BrowserSessionRepository().insert(
                    BrowserSession(id: "bs_1", userID: "usr_1", amr: ["pwd"], authTime: self.now, createdAt: self.now, expiresAt: self.now.addingTimeInterval(3600)),
                    tokenHash: Self.hash(200), ip: nil, userAgent: nil, on: connection)
                try self.repository.insert(self.code(1), on: connection)
            }
            return try await body(database)
        }
    }

    @Test("S22: a code inserted is found by its hash with every field as written, unused and with no session; the table holds the hash alone", arguments: ContractEngine.allCases)
    func s22InsertFind(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            let bare = code(2, clientID: "cl_other", userID: "usr_2", browserSessionID: nil, nonce: nil)
            let noAMR = { var code = self.code(3); code.amr = []; return code }()
            let (found, foundBare, foundNoAMR, unknown) = try await database.write { connection in
                try self.repository.insert(bare, on: connection)
                try self.repository.insert(noAMR, on: connection)
                return (
                    try self.repository.find(hash: Self.hash(1), on: connection), try self.repository.find(hash: Self.hash(2), on: connection),
                    try self.repository.find(hash: Self.hash(3), on: connection), try self.repository.find(hash: Self.hash(9), on: connection))
            }
            #expect(found == self.code(1))
            #expect(found?.amr == ["pwd", "otp", "mfa"], "amr keeps its order")
            #expect(found?.usedAt == nil && found?.sessionID == nil)
            #expect(foundBare == bare)
            #expect(foundBare?.browserSessionID == nil && foundBare?.nonce == nil)
            #expect(foundNoAMR == noAMR)
            #expect(unknown == nil)
            let stored = try await database.read {
                try $0.query("SELECT code_hash FROM oauth_codes", []).map { try $0.blob("code_hash") }
            }
            #expect(Set(stored) == [Self.hash(1), Self.hash(2), Self.hash(3)])
        }
    }

    @Test("S22: a second code with the same hash is refused, and the first stays as it was", arguments: ContractEngine.allCases)
    func s22HashIsUnique(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            await #expect(throws: (any Error).self) {
                try await database.write { try self.repository.insert(self.code(1, clientID: "cl_other", userID: "usr_2", browserSessionID: nil), on: $0) }
            }
            let found = try await database.read { try self.repository.find(hash: Self.hash(1), on: $0) }
            #expect(found == self.code(1))
        }
    }

    @Test("S22: a code is used once: the first use returns true and records when, any later use false and keeps the first time", arguments: ContractEngine.allCases)
    func s22UseOnce(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            let first = try await database.write { try self.repository.use(hash: Self.hash(1), at: self.now.addingTimeInterval(5), on: $0) }
            let second = try await database.write { try self.repository.use(hash: Self.hash(1), at: self.now.addingTimeInterval(6), on: $0) }
            let third = try await database.write { try self.repository.use(hash: Self.hash(1), at: self.now.addingTimeInterval(120), on: $0) }
            let unknown = try await database.write { try self.repository.use(hash: Self.hash(9), at: self.now, on: $0) }
            #expect(first)
            #expect(!second && !third, "a replay")
            #expect(!unknown)
            let found = try await database.read { try self.repository.find(hash: Self.hash(1), on: $0) }
            #expect(found?.usedAt == self.now.addingTimeInterval(5))
        }
    }

    @Test("S22: two uses in one transaction: the first wins, the second sees it", arguments: ContractEngine.allCases)
    func s22UseTwiceInOneTransaction(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            let (first, second) = try await database.write { connection in
                (try self.repository.use(hash: Self.hash(1), at: self.now, on: connection),
                 try self.repository.use(hash: Self.hash(1), at: self.now, on: connection))
            }
            #expect(first && !second)
        }
    }

    @Test("S22: of 20 concurrent exchanges of one code exactly one uses it", arguments: ContractEngine.allCases)
    func s22ConcurrentUsesOneWinner(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            let repository = repository
            let now = now
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<20 {
                    group.addTask {
                        try await database.write { try repository.use(hash: Self.hash(1), at: now.addingTimeInterval(TimeInterval(n)), on: $0) }
                    }
                }
                var wins = [Bool]()
                for try await won in group { wins.append(won) }
                return wins
            }
            #expect(wins.count == 20)
            #expect(wins.filter { $0 }.count == 1)
            let found = try await database.read { try self.repository.find(hash: Self.hash(1), on: $0) }
            #expect(found?.usedAt != nil)
        }
    }

    @Test("S22: the session an exchange created is attached to its code, to be revoked on a replay; it goes to that code alone", arguments: ContractEngine.allCases)
    func s22AttachSession(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            let (used, attached, other) = try await database.write { connection in
                try self.repository.insert(self.code(2), on: connection)
                try SessionRepository().insert(self.session("ses_1"), on: connection)
                let used = try self.repository.use(hash: Self.hash(1), at: self.now, on: connection)
                try self.repository.attach(sessionID: "ses_1", toCode: Self.hash(1), on: connection)
                return (used, try self.repository.find(hash: Self.hash(1), on: connection), try self.repository.find(hash: Self.hash(2), on: connection))
            }
            #expect(used)
            #expect(attached?.sessionID == "ses_1")
            #expect(attached?.usedAt == self.now)
            #expect(other?.sessionID == nil && other?.usedAt == nil)
            // A replay finds the session to revoke.
            let replay = try await database.write { connection in
                (try self.repository.use(hash: Self.hash(1), at: self.now.addingTimeInterval(1), on: connection),
                 try self.repository.find(hash: Self.hash(1), on: connection)?.sessionID)
            }
            #expect(replay.0 == false && replay.1 == "ses_1")
        }
    }

    @Test("S22: a code stays findable, used or not, until purged after its expiry: not at its expiry, gone one second after", arguments: ContractEngine.allCases)
    func s22ExpiryPurge(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            let retention = RetentionRepository()
            let expiresAt = now.addingTimeInterval(AuthorizationCode.lifetime)
            _ = try await database.write { try self.repository.use(hash: Self.hash(1), at: self.now, on: $0) }
            for purgeAt in [now, expiresAt.addingTimeInterval(-1), expiresAt] {
                try await database.write { try retention.deleteExpired(now: purgeAt, on: $0) }
                let found = try await database.read { try self.repository.find(hash: Self.hash(1), on: $0) }
                #expect(found?.usedAt == self.now, "purged at \(purgeAt.timeIntervalSince(self.now)) s: the used code is still there to detect a replay")
            }
            let deleted = try await database.write { try retention.deleteExpired(now: expiresAt.addingTimeInterval(1), on: $0) }
            #expect(deleted == 1)
            let gone = try await database.read { try self.repository.find(hash: Self.hash(1), on: $0) }
            #expect(gone == nil)
            let use = try await database.write { try self.repository.use(hash: Self.hash(1), at: expiresAt.addingTimeInterval(2), on: $0) }
            #expect(!use, "a purged code cannot be used")
        }
    }

    @Test("S22: a code goes with its user or its client; ending its browser session or session leaves the code and clears the link", arguments: ContractEngine.allCases)
    func s22ForeignKeys(engine: ContractEngine) async throws {
        try await withCode(engine) { database in
            try await database.write { connection in
                try self.repository.insert(self.code(2, clientID: "cl_other", userID: "usr_1"), on: connection)
                try self.repository.insert(self.code(3, clientID: "cl_web", userID: "usr_2", browserSessionID: nil), on: connection)
                try self.repository.insert(self.code(4, clientID: "cl_other", userID: "usr_2", browserSessionID: nil), on: connection)
                try SessionRepository().insert(self.session("ses_1"), on: connection)
                try self.repository.attach(sessionID: "ses_1", toCode: Self.hash(1), on: connection)
            }
            // Deleting the rows a code points at with ON DELETE SET NULL keeps the code.
            try await database.write { connection in
                try connection.execute("DELETE FROM sessions WHERE id = 'ses_1'", [])
                try connection.execute("DELETE FROM browser_sessions WHERE id = 'bs_1'", [])
            }
            let kept = try await database.read { try self.repository.find(hash: Self.hash(1), on: $0) }
            #expect(kept?.sessionID == nil && kept?.browserSessionID == nil)
            #expect(kept?.clientID == "cl_web" && kept?.userID == "usr_1")

            let userDeleted = try await database.write { try UserRepository(database: database).delete("usr_2", on: $0) }
            #expect(userDeleted)
            let afterUser = try await database.read { connection in
                try (1...4).map { try self.repository.find(hash: Self.hash(UInt8($0)), on: connection) != nil }
            }
            #expect(afterUser == [true, true, false, false], "usr_2's codes went with it")

            let clientDeleted = try await database.write { try self.clients.delete(id: "cl_other", on: $0) }
            #expect(clientDeleted)
            let afterClient = try await database.read { connection in
                try (1...4).map { try self.repository.find(hash: Self.hash(UInt8($0)), on: connection) != nil }
            }
            #expect(afterClient == [true, false, false, false], "cl_other's codes went with it")
        }
    }
}
