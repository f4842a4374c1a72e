import Foundation
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// Latchkey's OAuth provider as a relying party no one here wrote sees it: Python's authlib
/// builds the authorization request (PKCE S256, state, nonce), exchanges the code, validates the
/// ID token against the JWKS (signature, iss, aud, nonce, at_hash), calls userinfo, refreshes,
/// introspects and revokes (Fixtures/oauth_rp.py; its "browser" walks the hosted pages).
@Suite("OAuth provider with authlib as the relying party", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct OAuthRelyingPartyTests {
    static let fixtures = Fixtures(bundle: .module)
    static let password = "correct horse battery staple 7"

    /// Runs the relying party and returns what it saw.
    static func relyingParty(_ server: TestServer, client: OAuthClient, secret: String?, redirectURI: String) async throws -> JSONValue {
        let result = try await Subprocess.runDetached(
            URL(fileURLWithPath: try #require(interopPython)),
            ["-W", "ignore", try fixtures.url("oauth_rp.py").path, server.baseURL, client.id, secret ?? "-", redirectURI, "ada", password])
        #expect(result.status == 0, "\(result.error)")
        return try JSONValue(parsing: Array(result.output.utf8))
    }

    static func signUp(_ server: TestServer) async throws -> String {
        let response = try await server.request(.post, "/v1/auth/password/signup", json: ["username": "ada", "password": .string(password)])
        return try #require(response.json["user"]?["id"]?.stringValue)
    }

    @Test("A first-party public client (loopback redirect on any port): code with PKCE, RS256 ID token, userinfo, /v1 with its token, refresh, revoke")
    func publicClient() async throws {
        try await TestServer.with { server in
            let userID = try await Self.signUp(server)
            let (client, _) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example App", redirectURIs: ["http://127.0.0.1/callback"], firstParty: true))
            let seen = try await Self.relyingParty(server, client: client, secret: nil, redirectURI: "http://127.0.0.1:53682/callback")

            #expect(seen["sign_in_status"] == 200 && seen["sign_in_has_autofill"] == true && seen["frame_ancestors_none"] == true)
            #expect(seen["consent_page"] == nil, "a first-party client skips consent")
            #expect(seen["callback_iss"]?.stringValue == server.baseURL && seen["callback_state_matches"] == true)
            #expect(seen["id_token_alg"] == "RS256")
            #expect(seen["id_token"]?["sub"]?.stringValue == userID && seen["id_token"]?["azp"]?.stringValue == client.id)
            #expect(seen["id_token_has"] == ["at_hash", "auth_time", "exp", "iat", "sid"])
            #expect(seen["userinfo"]?["sub"]?.stringValue == userID)
            #expect(seen["v1_me_status"] == 200, "a first-party client's access token is for the API")
            #expect(seen["refresh_rotated"] == true && seen["revoke_status"] == 200)
            #expect(seen["refresh_after_revoke"] == [400, "invalid_grant"])

            let sessions = try await server.database.read { connection in
                try connection.query("SELECT client_id, scope, revoked_reason FROM sessions WHERE user_id = ? AND client_id IS NOT NULL", [.text(userID)])
            }
            #expect(sessions.count == 1)
            #expect(sessions.first?.optionalString("scope") == "email offline_access openid profile")
            #expect(sessions.first?.optionalString("revoked_reason") == "revoked")
            let events = try await AuditLog(database: server.database).entries(userID: userID, limit: 100).map(\.event.rawValue)
            for event in ["browser_session.started", "oauth.code_issued", "oauth.code_exchanged", "session.refreshed", "session.revoked"] {
                #expect(events.contains(event), "\(event)")
            }
        }
    }

    @Test("A third-party confidential client: consent, client_secret_basic, a token /v1 refuses, introspection before and after revocation")
    func confidentialClient() async throws {
        try await TestServer.with { server in
            let userID = try await Self.signUp(server)
            let (client, secret) = try await ClientService(database: server.database).register(
                ClientRegistration(name: "Example Photos", redirectURIs: ["http://127.0.0.1/cb"], confidential: true))
            let seen = try await Self.relyingParty(server, client: client, secret: secret, redirectURI: "http://127.0.0.1:9999/cb")

            #expect(seen["consent_page"] == true)
            #expect(seen["id_token"]?["aud"]?.stringValue == client.id && seen["id_token"]?["nonce"] == "n-0123456789abcdef")
            #expect(seen["userinfo"]?["sub"]?.stringValue == userID && seen["userinfo"]?["email"] == nil, "a username account has no e-mail address: left out, not null")
            #expect(seen["v1_me_status"] == 401, "a third-party client's token is only for userinfo")
            #expect(seen["introspect_access"]?["active"] == true && seen["introspect_access"]?["client_id"]?.stringValue == client.id)
            #expect(seen["introspect_refresh"]?["active"] == true)
            #expect(seen["introspect_after_revoke"] == false)
            let consent = try await server.database.read { connection in
                try connection.queryOne("SELECT scope FROM oauth_consents WHERE user_id = ? AND client_id = ?", [.text(userID), .text(client.id)])
            }
            #expect(consent?.optionalString("scope") == "email offline_access openid profile")
            let events = try await AuditLog(database: server.database).entries(userID: userID, limit: 100).map(\.event.rawValue)
            #expect(events.contains("consent.granted"))
        }
    }
}
