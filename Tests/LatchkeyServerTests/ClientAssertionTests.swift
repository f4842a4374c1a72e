import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyServer
import LatchkeyStore
import Testing

/// `private_key_jwt` client authentication at the token endpoint (RFC 7523, OpenID Connect Core §9).
@Suite("OAuth clients authenticating with private_key_jwt")
struct ClientAssertionTests {
    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    static func assertion(_ signer: JWSSigner, clientID: String, audience: String, jti: String = UUID().uuidString, now: Date, lifetime: TimeInterval = 120) throws -> String {
        var claims = JWTClaims()
        claims.issuer = clientID
        claims.subject = clientID
        claims.audience = [audience]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(lifetime)
        claims.tokenID = jti
        return try signer.sign(claims)
    }

    static func token(_ server: TestServer, _ form: [String: String]) async throws -> TestResponse {
        try await server.request(
            .post, "/oauth/token", body: Array(PercentEncoding.encodeForm(form).utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    @Test("A client registered with a JWK Set authenticates with a signed assertion, once per jti; a wrong aud, another key, a secret or a long life are refused")
    func privateKeyJWT() async throws {
        try await TestServer.with { server in
            let key = P256.Signing.PrivateKey()
            let signer = JWSSigner.es256(key, keyID: "client-key-1")
            let jwks = JWKSet(keys: [try signer.publicJWK]).json.serializedString
            let clients = ClientService(database: server.database, clock: { server.clock.now })
            let (client, secret) = try await clients.register(
                ClientRegistration(name: "Example Backend", redirectURIs: ["https://backend.example/cb"], scopes: ["reports"], jwks: jwks))
            #expect(secret == nil && client.isConfidential)
            let endpoint = server.baseURL + "/oauth/token"
            let now = server.clock.now

            let good = try Self.assertion(signer, clientID: client.id, audience: endpoint, jti: "one", now: now)
            let form = ["grant_type": "client_credentials", "client_assertion_type": Self.assertionType, "client_assertion": good]
            let accepted = try await Self.token(server, form)
            #expect(accepted.status == 200, "\(accepted.text)")
            let issued = try accepted.json
            #expect(issued["scope"] == "reports" && issued["refresh_token"] == nil && issued["id_token"] == nil)

            let replayed = try await Self.token(server, form)
            #expect(try replayed.status == 401 && replayed.json["error"] == "invalid_client")
            #expect(replayed.text.contains("already used"))

            for (assertion, why) in [
                (try Self.assertion(signer, clientID: client.id, audience: "https://elsewhere.example", now: now), "aud"),
                (try Self.assertion(JWSSigner.es256(P256.Signing.PrivateKey(), keyID: "client-key-1"), clientID: client.id, audience: endpoint, now: now), "key"),
                (try Self.assertion(signer, clientID: client.id, audience: endpoint, now: now, lifetime: 3600), "lifetime"),
                (try Self.assertion(signer, clientID: client.id, audience: endpoint, now: now.addingTimeInterval(-600)), "expired"),
            ] {
                let refused = try await Self.token(server, ["grant_type": "client_credentials", "client_assertion_type": Self.assertionType, "client_assertion": assertion])
                #expect(try refused.status == 401 && refused.json["error"] == "invalid_client", "\(why): \(refused.text)")
            }
            let withSecret = try await Self.token(server, ["grant_type": "client_credentials", "client_id": client.id, "client_secret": "guess"])
            #expect(withSecret.status == 401, "a private_key_jwt client has no secret to present")
            let seen = try await server.database.read { connection in
                try connection.query("SELECT jti FROM oauth_client_assertions WHERE client_id = ?", [.text(client.id)]).map { try $0.string("jti") }
            }
            #expect(seen == ["one"])
        }
    }

    @Test("RFC 7523 §3 item 7: a used jti is kept as long as its assertion could be accepted, exp plus the 60 s leeway, housekeeping or not: a replay 30 s after exp is refused")
    func jtiKeptThroughLeeway() async throws {
        try await TestServer.with { server in
            let signer = JWSSigner.es256(P256.Signing.PrivateKey(), keyID: "client-key-1")
            let jwks = JWKSet(keys: [try signer.publicJWK]).json.serializedString
            let clients = ClientService(database: server.database, clock: { server.clock.now })
            let (client, _) = try await clients.register(
                ClientRegistration(name: "Example Backend", redirectURIs: ["https://backend.example/cb"], scopes: ["reports"], jwks: jwks))
            let endpoint = server.baseURL + "/oauth/token"
            let issued = server.clock.now
            let assertion = try Self.assertion(signer, clientID: client.id, audience: endpoint, jti: "late", now: issued, lifetime: 60)
            let form = ["grant_type": "client_credentials", "client_assertion_type": Self.assertionType, "client_assertion": assertion]
            #expect(try await Self.token(server, form).status == 200)
            let exp = Int(issued.timeIntervalSince1970) + 60
            let kept = try await server.database.read { connection in
                try connection.queryOne("SELECT expires_at FROM oauth_client_assertions WHERE client_id = ? AND jti = 'late'", [.text(client.id)])?
                    .date("expires_at")
            }
            #expect(kept.map { Int($0.timeIntervalSince1970) } == exp + 60, "remembered until exp + leeway")

            // 30 s after exp the assertion still verifies (the leeway); housekeeping has run.
            server.clock.advance(by: 90)
            try await server.application.runBackgroundJobs()
            let replayed = try await Self.token(server, form)
            #expect(try replayed.status == 401 && replayed.json["error"] == "invalid_client", "\(replayed.text)")
            #expect(replayed.text.contains("already used"))
            let count = try await server.database.read { try $0.query("SELECT jti FROM oauth_client_assertions WHERE client_id = ?", [.text(client.id)]) }.count
            #expect(count == 1)

            // Once the leeway is over the assertion is refused as expired, and housekeeping forgets its jti.
            server.clock.advance(by: 31)
            let expired = try await Self.token(server, form)
            #expect(expired.status == 401 && !expired.text.contains("already used"), "\(expired.text)")
            try await server.application.runBackgroundJobs()
            #expect(try await server.database.read { try $0.query("SELECT jti FROM oauth_client_assertions", []) }.isEmpty)
        }
    }

    @Test("Registration refuses a JWK Set with a private key or without a usable key")
    func registrationChecks() async throws {
        try await TestServer.with { server in
            let clients = ClientService(database: server.database)
            let key = P256.Signing.PrivateKey()
            var withPrivate = try JWSSigner.es256(key, keyID: "k").publicJWK.json
            if case .object(var members) = withPrivate {
                members["d"] = .string(Base64URL.encode(Array(repeating: 1, count: 32)))
                withPrivate = .object(members)
            }
            for jwks in [JSONValue.object(["keys": .array([withPrivate])]).serializedString, #"{"keys": []}"#, "not json"] {
                await #expect(throws: AuthError.self) {
                    try await clients.register(ClientRegistration(name: "Bad", redirectURIs: ["https://bad.example/cb"], jwks: jwks))
                }
            }
            #expect(try await clients.list().isEmpty)
        }
    }
}
