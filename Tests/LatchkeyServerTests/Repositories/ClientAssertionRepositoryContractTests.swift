import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// What every engine must do for `ClientAssertionRepository`, the `jti` replay store of
/// `private_key_jwt` client authentication (RFC 7523 §3, OpenID Connect Core §9;
/// docs/reference.md, `POST /oauth/token`: "each `jti` once"): a client's `jti` is remembered
/// once, even when two requests race, independently of other clients', and until the
/// assertion it came with can no longer authenticate.
@Suite("ClientAssertionRepository contract")
struct ClientAssertionRepositoryContractTests {
    let repository = ClientAssertionRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func client(_ id: String) -> OAuthClient {
        OAuthClient(
            id: id, name: "Backend \(id)", isConfidential: true, isFirstParty: false, redirectURIs: [], postLogoutRedirectURIs: [],
            grantTypes: [.clientCredentials], scopes: ["reports"], idTokenAlgorithm: "RS256", createdAt: now)
    }

    /// Two clients, `cl_a` and `cl_b`.
    func withClients<T>(_ engine: ContractEngine, jwks: String? = nil, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await withContractDatabase(engine) { database in
            try await database.write { connection in
                try ClientRepository().insert(self.client("cl_a"), secretHash: nil, jwks: jwks, on: connection)
                try ClientRepository().insert(self.client("cl_b"), secretHash: nil, jwks: jwks, on: connection)
            }
            return try await body(database)
        }
    }

    func remember(_ clientID: String, _ jti: String, expiresAt: Date? = nil, in database: any SQLDatabase) async throws -> Bool {
        let expiresAt = expiresAt ?? now.addingTimeInterval(120)
        return try await database.write { try self.repository.remember(clientID: clientID, jti: jti, until: expiresAt, on: $0) }
    }

    func remembered(in database: any SQLDatabase) async throws -> [String] {
        try await database.read { connection in
            try connection.query("SELECT client_id, jti FROM oauth_client_assertions ORDER BY client_id, jti", []).map {
                "\(try $0.string("client_id"))/\(try $0.string("jti"))"
            }
        }
    }

    @Test("private_key_jwt: a jti is remembered once; the same client's second one is a replay, even with another expiry", arguments: ContractEngine.allCases)
    func jtiOnce(engine: ContractEngine) async throws {
        try await withClients(engine) { database in
            let first = try await remember("cl_a", "jti-1", in: database)
            let second = try await remember("cl_a", "jti-1", in: database)
            let later = try await remember("cl_a", "jti-1", expiresAt: now.addingTimeInterval(300), in: database)
            let other = try await remember("cl_a", "jti-2", in: database)
            #expect(first && other)
            #expect(!second && !later, "a replay")
            #expect(try await remembered(in: database) == ["cl_a/jti-1", "cl_a/jti-2"])
            let expiry = try await database.read {
                try $0.queryOne("SELECT expires_at FROM oauth_client_assertions WHERE jti = 'jti-1'", [])?.date("expires_at")
            }
            #expect(expiry == now.addingTimeInterval(120), "a replay does not extend or shorten the first record")
        }
    }

    @Test("private_key_jwt: jtis are compared exactly: case, spaces, a prefix and another Unicode form make another jti", arguments: ContractEngine.allCases)
    func jtiExact(engine: ContractEngine) async throws {
        try await withClients(engine) { database in
            var results = [Bool]()
            for jti in ["Abc", "abc", "abc ", "ab", "abc\u{301}", "ab\u{107}"] {
                results.append(try await remember("cl_a", jti, in: database))
            }
            #expect(results == [true, true, true, true, true, true])
            #expect(try await remember("cl_a", "abc", in: database) == false)
        }
    }

    @Test("private_key_jwt: equal jtis of different clients are independent", arguments: ContractEngine.allCases)
    func jtiPerClient(engine: ContractEngine) async throws {
        try await withClients(engine) { database in
            let a = try await remember("cl_a", "shared", in: database)
            let b = try await remember("cl_b", "shared", in: database)
            let aAgain = try await remember("cl_a", "shared", in: database)
            let bAgain = try await remember("cl_b", "shared", in: database)
            #expect(a && b)
            #expect(!aAgain && !bAgain)
            #expect(try await remembered(in: database) == ["cl_a/shared", "cl_b/shared"])
        }
    }

    @Test("private_key_jwt: of 20 concurrent uses of one jti exactly one is fresh", arguments: ContractEngine.allCases)
    func concurrentJTIOneWinner(engine: ContractEngine) async throws {
        try await withClients(engine) { database in
            let repository = repository
            let expiresAt = now.addingTimeInterval(120)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await database.write { try repository.remember(clientID: "cl_a", jti: "raced", until: expiresAt, on: $0) }
                    }
                }
                var wins = [Bool]()
                for try await won in group { wins.append(won) }
                return wins
            }
            #expect(wins.count == 20)
            #expect(wins.filter { $0 }.count == 1)
            #expect(try await remembered(in: database) == ["cl_a/raced"])
        }
    }

    @Test("private_key_jwt: a jti is not forgotten before the time it was stored for: purges up to that second keep it, one after drops it", arguments: ContractEngine.allCases)
    func purgeNotBeforeExpiry(engine: ContractEngine) async throws {
        try await withClients(engine) { database in
            let retention = RetentionRepository()
            let expiresAt = now.addingTimeInterval(120)
            #expect(try await remember("cl_a", "jti-1", expiresAt: expiresAt, in: database))
            #expect(try await remember("cl_b", "jti-1", expiresAt: expiresAt.addingTimeInterval(60), in: database))
            for purgeAt in [now, expiresAt.addingTimeInterval(-1), expiresAt] {
                try await database.write { try retention.deleteExpired(now: purgeAt, on: $0) }
                #expect(try await remember("cl_a", "jti-1", in: database) == false, "purged at +\(purgeAt.timeIntervalSince(now)) s: still a replay")
            }
            let deleted = try await database.write { try retention.deleteExpired(now: expiresAt.addingTimeInterval(1), on: $0) }
            #expect(deleted == 1, "cl_a's jti alone: cl_b's lives a minute longer")
            #expect(try await remembered(in: database) == ["cl_b/jti-1"])
            #expect(try await remember("cl_b", "jti-1", in: database) == false)
        }
    }

    @Test("private_key_jwt: a client's jtis go with the client, and no other's", arguments: ContractEngine.allCases)
    func removedWithClient(engine: ContractEngine) async throws {
        try await withClients(engine) { database in
            _ = try await remember("cl_a", "one", in: database)
            _ = try await remember("cl_a", "two", in: database)
            _ = try await remember("cl_b", "one", in: database)
            let deleted = try await database.write { try ClientRepository().delete(id: "cl_a", on: $0) }
            #expect(deleted)
            #expect(try await remembered(in: database) == ["cl_b/one"])
        }
    }

    @Test("private_key_jwt: an assertion that still verifies is still a replay after housekeeping: its jti is kept as long as the assertion verifies", arguments: ContractEngine.allCases)
    func jtiOutlivesVerification(engine: ContractEngine) async throws {
        let signer = JWSSigner.es256(P256.Signing.PrivateKey(), keyID: "k1")
        let jwks = JWKSet(keys: [try signer.publicJWK]).json.serializedString
        let audience = "https://auth.example/oauth/token"
        let assertion = try ClientAssertionTests.assertion(signer, clientID: "cl_a", audience: audience, jti: "late", now: now, lifetime: 120)
        let exp = now.addingTimeInterval(120)
        func verify(at time: Date) -> ClientAssertion.Checked? {
            try? ClientAssertion.verify(assertion, clientID: "cl_a", jwks: jwks, audiences: [audience], now: time)
        }
        try await withClients(engine, jwks: jwks) { database in
            // First use, at once: verified and remembered for the expiry the rule returns.
            let first = try #require(verify(at: now))
            #expect(first.jti == "late" && first.rememberUntil == exp.addingTimeInterval(ClientAssertion.leeway))
            #expect(try await remember("cl_a", first.jti, expiresAt: first.rememberUntil, in: database))
            // Well before exp, housekeeping keeps it and the replay is refused.
            try await database.write { try RetentionRepository().deleteExpired(now: exp.addingTimeInterval(-30), on: $0) }
            #expect(try await remember("cl_a", "late", expiresAt: exp, in: database) == false)
            // Long after exp plus any clock leeway the assertion no longer verifies at all.
            #expect(verify(at: exp.addingTimeInterval(600)) == nil)

            // Past exp, within the verifier's clock leeway, housekeeping runs and the same
            // assertion comes back. Either it no longer verifies, or its jti must still be there.
            let late = exp.addingTimeInterval(30)
            try await database.write { try RetentionRepository().deleteExpired(now: late, on: $0) }
            let replayed = verify(at: late)
            let replayFresh: Bool
            if let replayed {
                replayFresh = try await remember("cl_a", replayed.jti, expiresAt: replayed.rememberUntil, in: database)
            } else {
                replayFresh = false
            }
            #expect(replayed == nil || replayed!.rememberUntil >= late, "the jti is kept at least as long as the assertion verifies")
            #expect(!replayFresh, "the replayed assertion authenticated a second time")
        }
    }
}
