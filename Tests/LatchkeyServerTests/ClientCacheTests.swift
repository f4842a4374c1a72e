import Foundation
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The server keeps registered clients in memory (ClientCache): a change must still reach it at
/// once when the server makes it, and within about a second when another process does.
@Suite("OAuth client cache")
struct ClientCacheTests {
    static func token(_ server: TestServer, clientID: String, secret: String) async throws -> TestResponse {
        try await server.request(
            .post, "/oauth/token",
            body: Array(PercentEncoding.encodeForm(["grant_type": "client_credentials", "client_id": clientID, "client_secret": secret]).utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    @Test("S20: a secret rotated or a client removed by the server itself stops working at the token endpoint at once, though the client was cached")
    func changesInThisProcess() async throws {
        try await TestServer.with { server in
            let clients = server.application.clients
            let (client, secret) = try await clients.register(
                ClientRegistration(name: "Backend", redirectURIs: ["https://backend.example/cb"], confidential: true, scopes: ["reports"]))
            let old = try #require(secret)
            #expect(try await Self.token(server, clientID: client.id, secret: old).status == 200)

            let new = try await clients.rotateSecret(id: client.id)
            let refused = try await Self.token(server, clientID: client.id, secret: old)
            #expect(refused.status == 401, "\(refused.text)")
            #expect(try refused.wireError.error.rawValue == "invalid_client")
            #expect(try await Self.token(server, clientID: client.id, secret: new).status == 200)

            #expect(try await clients.remove(id: client.id))
            #expect(try await Self.token(server, clientID: client.id, secret: new).status == 401)
        }
    }

    @Test("S20: a secret rotated or a client removed through another connection to the database (as `latchkey clients` does) stops working at the running server within 2 s")
    func changesFromAnotherProcess() async throws {
        try await TestServer.with { server in
            let (client, secret) = try await server.application.clients.register(
                ClientRegistration(name: "Backend", redirectURIs: ["https://backend.example/cb"], confidential: true, scopes: ["reports"]))
            let old = try #require(secret)
            #expect(try await Self.token(server, clientID: client.id, secret: old).status == 200)

            // Another process's view: its own connections, its own ClientService.
            let other = try await LatchkeyApplication.openDatabase(server.application.configuration)
            let elsewhere = ClientService(database: other)
            let new = try await elsewhere.rotateSecret(id: client.id)
            #expect(try await eventually(within: .seconds(2)) { try await Self.token(server, clientID: client.id, secret: old).status == 401 })
            #expect(try await Self.token(server, clientID: client.id, secret: new).status == 200)

            #expect(try await elsewhere.remove(id: client.id))
            #expect(try await eventually(within: .seconds(2)) { try await Self.token(server, clientID: client.id, secret: new).status == 401 })
            // The page of an authorization request for it is the error page again, never a redirect.
            let page = try await server.request(
                .get, "/oauth/authorize?response_type=code&client_id=\(client.id)&redirect_uri=https%3A%2F%2Fbackend.example%2Fcb")
            #expect(page.status == 400 && page.headers["Location"] == nil)
            await other.close()
        }
    }
}
