import Foundation
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// What every engine must do for `ConsentRepository`: consent is the union of the scopes
/// granted, kept per user and client, withdrawn once, and removed with its client.
@Suite("ConsentRepository contract")
struct ConsentRepositoryContractTests {
    let clients = ClientRepository()
    let consents = ConsentRepository()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func client(_ id: String) -> OAuthClient { ClientRepositoryContractTests.client(id, now: now) }

    @Test("consent is remembered as the union of what was granted, sorted; listed per user; withdrawn once; removed with its client", arguments: ContractEngine.allCases)
    func consentRoundTrip(_ engine: ContractEngine) async throws {
        try await withContractDatabase(engine) { database in
            try await database.write { connection throws in
                for user in ["usr_1", "usr_2"] { try SessionRepositoryContractTests.insertUser(user, now: self.now, on: connection) }
                try self.clients.insert(self.client("web"), secretHash: [1], on: connection)
                try self.clients.insert(self.client("other"), secretHash: [1], on: connection)
            }
            let later = now.addingTimeInterval(60)
            // Read inside the transactions, checked outside them: an expectation on the
            // database's thread would not be told to this test.
            let before = try await database.write { connection throws in
                let before = try self.consents.scopes(userID: "usr_1", clientID: "web", on: connection)
                try self.consents.remember(userID: "usr_1", clientID: "web", scopes: ["openid", "email"], at: self.now, on: connection)
                try self.consents.remember(userID: "usr_1", clientID: "web", scopes: ["profile", "openid"], at: later, on: connection)
                try self.consents.remember(userID: "usr_1", clientID: "other", scopes: ["openid"], at: later, on: connection)
                try self.consents.remember(userID: "usr_2", clientID: "web", scopes: ["openid"], at: self.now, on: connection)
                return before
            }
            #expect(before == nil)
            let seen = try await database.write { connection throws in
                let list = try self.consents.list(userID: "usr_1", on: connection)
                return (
                    scopes: try self.consents.scopes(userID: "usr_1", clientID: "web", on: connection),
                    stored: try connection.queryOne("SELECT scope FROM oauth_consents WHERE user_id = ? AND client_id = ?", [.text("usr_1"), .text("web")])?
                        .string("scope"),
                    listed: list.map(\.clientID), grantedAt: list.first?.grantedAt, updatedAt: list.first?.updatedAt,
                    withdrawn: try self.consents.delete(userID: "usr_1", clientID: "web", at: later, on: connection),
                    withdrawnAgain: try self.consents.delete(userID: "usr_1", clientID: "web", at: later, on: connection),
                    otherUser: try self.consents.scopes(userID: "usr_2", clientID: "web", on: connection),
                    clientDeleted: try self.clients.delete(id: "web", on: connection),
                    otherUserAfter: try self.consents.list(userID: "usr_2", on: connection).map(\.clientID),
                    listedAfter: try self.consents.list(userID: "usr_1", on: connection).map(\.clientID))
            }
            #expect(seen.scopes == ["email", "openid", "profile"])
            #expect(seen.stored == "email openid profile")
            #expect(seen.listed == ["web", "other"])
            #expect(seen.grantedAt == self.now && seen.updatedAt == later)
            #expect(seen.withdrawn)
            #expect(!seen.withdrawnAgain)
            #expect(seen.otherUser == ["openid"])
            #expect(seen.clientDeleted)
            #expect(seen.otherUserAfter.isEmpty)
            #expect(seen.listedAfter == ["other"])
        }
    }
}
