import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// What every engine must do for `ClientRepository`: a client is found and listed as written,
/// replacing a secret is a compare-and-set, and deleting reports whether it deleted.
@Suite("ClientRepository contract")
struct ClientRepositoryContractTests {
    let clients = ClientRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A client `id` with two redirect URIs and a post-logout one; confidential ones are third-party, public ones first-party.
    static func client(_ id: String, confidential: Bool = true, now: Date) -> OAuthClient {
        OAuthClient(
            id: id, name: "Client \(id)", isConfidential: confidential, isFirstParty: !confidential,
            redirectURIs: ["https://\(id).example/cb", "http://127.0.0.1/cb"], postLogoutRedirectURIs: ["https://\(id).example/bye"],
            grantTypes: [.authorizationCode, .refreshToken], scopes: ["openid", "email"], idTokenAlgorithm: "ES256", createdAt: now)
    }

    func client(_ id: String, confidential: Bool = true) -> OAuthClient { Self.client(id, confidential: confidential, now: now) }

    @Test("a client inserted is found and listed as written; replaceSecret is a compare-and-set that leaves public clients public; delete reports once", arguments: ContractEngine.allCases)
    func clientRoundTrip(_ engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            let web = client("web")
            let app = client("app", confidential: false)
            try await database.write { connection throws in
                try self.clients.insert(web, secretHash: [1, 2, 3], on: connection)
                try self.clients.insert(app, secretHash: nil, on: connection)
            }
            // Read inside the transaction, checked outside it: an expectation on the database's
            // thread would not be told to this test.
            let seen = try await database.write { connection throws in
                (found: try self.clients.find(id: "web", on: connection),
                 webHash: try self.clients.stored(id: "web", on: connection)?.secretHash,
                 appHash: try self.clients.stored(id: "app", on: connection)?.secretHash,
                 missing: try self.clients.find(id: "nope", on: connection),
                 listed: try self.clients.list(on: connection).map(\.id),
                 replacedWeb: try self.clients.replaceSecret(id: "web", hash: [4], at: self.now, on: connection),
                 replacedApp: try self.clients.replaceSecret(id: "app", hash: [4], at: self.now, on: connection),
                 replacedNope: try self.clients.replaceSecret(id: "nope", hash: [4], at: self.now, on: connection),
                 webHashAfter: try self.clients.stored(id: "web", on: connection)?.secretHash,
                 appConfidential: try self.clients.find(id: "app", on: connection)?.isConfidential,
                 deleted: try self.clients.delete(id: "app", on: connection),
                 deletedAgain: try self.clients.delete(id: "app", on: connection),
                 listedAfter: try self.clients.list(on: connection).map(\.id))
            }
            #expect(seen.found == web)
            #expect(seen.webHash == [1, 2, 3])
            #expect(seen.appHash == nil)
            #expect(seen.missing == nil)
            #expect(seen.listed == ["app", "web"])
            #expect(seen.replacedWeb)
            #expect(!seen.replacedApp)
            #expect(!seen.replacedNope)
            #expect(seen.webHashAfter == [4])
            #expect(seen.appConfidential == false)
            #expect(seen.deleted)
            #expect(!seen.deletedAgain)
            #expect(seen.listedAfter == ["web"])
        }
    }
}
