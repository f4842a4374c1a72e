import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Testing

@Suite("Account profile: GET and PATCH /v1/me")
struct AccountProfileTests {
    @Test("GET /v1/me names a password account's username and lists its password identity")
    func passwordIdentity() async throws {
        try await TestServer.with { server in
            let signUp = try await PasswordAccountTests.signUp(server, "Grace.Hopper", "correct horse battery")
            let me = try await server.request(.get, "/v1/me", headers: try PasswordAccountTests.bearer(signUp)).decode(WireAccount.self)
            #expect(me.username == "grace.hopper")
            // WireIdentity requires created_at as an RFC 3339 timestamp: the decode checks it is there.
            let identities = me.identities
            #expect(identities.count == 1)
            #expect(identities.first?.provider == "password" && identities.first?.username == "grace.hopper")

            // An Apple-only account has no username and no password identity.
            let user = try await server.createUser(email: "ada@example.com")
            let session = try await server.startSession(for: user, amr: ["apple"])
            let apple = try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(session.accessToken)"]).decode(WireAccount.self)
            #expect(apple.username == nil)
            #expect(!apple.identities.contains { $0.provider == "password" })
        }
    }

    @Test("GET /v1/me reads as the wire account: the user, the password identity and a device key among the factors")
    func meAsWireAccount() async throws {
        try await TestServer.with { server in
            let signUp = try await PasswordAccountTests.signUp(server, "ada@example.com", "correct horse battery", extra: ["given_name": "Ada"])
            let bearer = try PasswordAccountTests.bearer(signUp)
            #expect(try await SoftwareDevice().register(on: server, bearer: bearer).status == 201)
            let me = try await server.request(.get, "/v1/me", headers: bearer)
            #expect(me.status == 200)
            let account = try me.decode(WireAccount.self)
            #expect(account.user == (try signUp.tokens).user)
            #expect(account.username == "ada@example.com")
            #expect(account.identities.map(\.provider) == ["password"])
            #expect(account.identities.first?.username == "ada@example.com" && account.identities.first?.email == "ada@example.com")
            #expect(account.factors.map(\.type) == [.deviceKey])
            #expect(account.factors.first?.label == "Ada's iPhone" && account.factors.first?.id != nil)
        }
    }

    @Test("S27: PATCH /v1/me sets, keeps and clears names, stores them and audits the fields (not the values)")
    func patchNames() async throws {
        try await TestServer.with { server in
            let signUp = try await PasswordAccountTests.signUp(server, "ada@example.com", "correct horse battery", extra: ["given_name": "Ada"])
            let bearer = try PasswordAccountTests.bearer(signUp)
            let userID = try signUp.tokens.user.id

            let renamed = try await server.request(.patch, "/v1/me", json: ["family_name": "  Lovelace "], headers: bearer)
            #expect(renamed.status == 200)
            let renamedUser = try renamed.decode(WireAccountUpdateResponse.self).user
            #expect(renamedUser.givenName == "Ada", "an absent field is left alone")
            #expect(renamedUser.familyName == "Lovelace", "surrounding whitespace is trimmed")
            let stored = try #require(try await UserRepository(database: server.database).find(userID))
            #expect(stored.givenName == "Ada" && stored.familyName == "Lovelace")
            #expect(try await server.request(.get, "/v1/me", headers: bearer).decode(WireAccount.self).user.familyName == "Lovelace")

            let cleared = try await server.request(.patch, "/v1/me", json: ["given_name": .null, "family_name": ""], headers: bearer)
            let clearedUser = try cleared.decode(WireAccountUpdateResponse.self).user
            #expect(clearedUser.givenName == nil && clearedUser.familyName == nil)
            let after = try #require(try await UserRepository(database: server.database).find(userID))
            #expect(after.givenName == nil && after.familyName == nil)

            let entries = try await AuditLog(database: server.database).entries(userID: userID, event: "account.updated", limit: 10)
            #expect(entries.map(\.details) == [["fields": "given_name,family_name"], ["fields": "family_name"]])
            #expect(entries.allSatisfy { $0.outcome == .success && $0.ip == "127.0.0.1" })
            #expect(!entries.contains { $0.details.values.contains { $0.contains("Lovelace") } }, "names are personal data")

            // Nothing changed: 200 with the user, and no audit entry.
            #expect(try await server.request(.patch, "/v1/me", json: [:], headers: bearer).status == 200)
            #expect(try await AuditLog(database: server.database).entries(userID: userID, event: "account.updated", limit: 10).count == 2)
        }
    }

    @Test("S24: PATCH /v1/me refuses wrong types, unknown fields and long names with invalid_request, changing nothing")
    func patchRefusals() async throws {
        try await TestServer.with { server in
            let signUp = try await PasswordAccountTests.signUp(server, "ada@example.com", "correct horse battery", extra: ["given_name": "Ada"])
            let bearer = try PasswordAccountTests.bearer(signUp)
            let userID = try signUp.tokens.user.id
            let bodies: [JSONValue] = [
                ["given_name": 42], ["given_name": "Grace", "givenName": "Grace"], ["email": "mallory@example.com"],
                ["given_name": .string(String(repeating: "é", count: 129))], ["given_name": ["Grace"]], "Grace",
            ]
            for body in bodies {
                let response = try await server.request(.patch, "/v1/me", json: body, headers: bearer)
                #expect(response.status == 400, "\(body)")
                #expect(try response.wireError.error == .invalidRequest)
            }
            #expect(try await UserRepository(database: server.database).find(userID)?.givenName == "Ada")
            #expect(try await AuditLog(database: server.database).entries(userID: userID, event: "account.updated", limit: 10).isEmpty)

            let anonymous = try await server.request(.patch, "/v1/me", json: ["given_name": "Eve"])
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["WWW-Authenticate"]?.contains("invalid_token") == true)
        }
    }
}
