import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import Testing

/// The discovery documents: RFC 8414 at `/.well-known/oauth-authorization-server`, OpenID
/// Connect Discovery 1.0 at `/.well-known/openid-configuration`.
@Suite("Provider discovery")
struct DiscoveryTests {
    static let paths = ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]

    static func strings(_ value: JSONValue?) -> [String]? { value?.arrayValue?.compactMap(\.stringValue) }

    @Test("both documents hold every member, the issuer is the access tokens' iss, and each endpoint is under it")
    func documentMembers() async throws {
        try await TestServer.with { server in
            let session = try await server.startSession(for: try await server.createUser())
            let iss = try #require(try Insecure.unverifiedContents(of: session.accessToken).claims["iss"]?.stringValue)
            for path in Self.paths {
                let response = try await server.request(.get, path)
                #expect(response.status == 200, "\(path)")
                #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
                // Raw JSON: RFC 8414's format, not a /v1 body LatchkeyWire models.
                let document = try response.json
                #expect(document["issuer"]?.stringValue == iss)
                #expect(document["issuer"]?.stringValue == server.baseURL)
                let endpoints = [
                    "authorization_endpoint": "/oauth/authorize", "token_endpoint": "/oauth/token", "userinfo_endpoint": "/oauth/userinfo",
                    "revocation_endpoint": "/oauth/revoke", "introspection_endpoint": "/oauth/introspect",
                    "end_session_endpoint": "/oauth/logout", "jwks_uri": "/.well-known/jwks.json",
                    "device_authorization_endpoint": "/oauth/device_authorization",
                ]
                for (member, endpoint) in endpoints {
                    #expect(document[member]?.stringValue == iss + endpoint, "\(path) \(member)")
                }
                #expect(Self.strings(document["response_types_supported"]) == ["code"])
                #expect(Self.strings(document["response_modes_supported"]) == ["query", "form_post"])
                #expect(
                    Set(Self.strings(document["grant_types_supported"]) ?? [])
                        == ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"])
                #expect(Self.strings(document["subject_types_supported"]) == ["public"])
                #expect(Self.strings(document["id_token_signing_alg_values_supported"]) == ["RS256", "ES256"])
                #expect(
                    Set(Self.strings(document["token_endpoint_auth_methods_supported"]) ?? [])
                        == ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
                #expect(Self.strings(document["token_endpoint_auth_signing_alg_values_supported"])?.isEmpty == false, "required with private_key_jwt")
                #expect(Self.strings(document["code_challenge_methods_supported"]) == ["S256"], "S21: no plain")
                #expect(Self.strings(document["scopes_supported"]) == ["openid", "profile", "email", "offline_access"])
                let claims = Set(Self.strings(document["claims_supported"]) ?? [])
                #expect(claims.isSuperset(of: ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "sid", "azp", "at_hash", "email"]))
                #expect(Self.strings(document["prompt_values_supported"]) == ["none", "login", "consent", "create"])
                #expect(document["authorization_response_iss_parameter_supported"] == .bool(true))
                #expect(document["request_parameter_supported"] == .bool(false))
                #expect(document["request_uri_parameter_supported"] == .bool(false))
                #expect(document["claims_parameter_supported"] == .bool(false))
            }
        }
    }

    @Test("the two documents are identical and cacheable, and the answer is built once")
    func documentsIdenticalAndCached() async throws {
        try await TestServer.with { server in
            let openID = try await server.request(.get, Self.paths[0])
            let oauth = try await server.request(.get, Self.paths[1])
            #expect(openID.body == oauth.body, "RFC 8414 takes its members from OpenID Discovery: one document serves both")
            for response in [openID, oauth] {
                #expect(response.headers["Cache-Control"] == "public, max-age=\(DiscoveryRoutes.maxAge)")
            }
            #expect(try await server.request(.get, Self.paths[0]).body == openID.body)

            let responder = DiscoveryResponder(accessTokens: server.application.services.accessTokens, mounted: .all)
            #expect(responder.response.body == openID.body)
            server.application.services.accessTokens.setPublicURL("https://changed.example", audience: nil)
            #expect(responder.response.body == openID.body, "kept, not rebuilt per request")
        }
    }

    @Test("before the issuer is known the answer is 503 and not kept")
    func noIssuerYet() async throws {
        try await TestServer.with { server in
            let accessTokens = server.application.services.accessTokens
            let issuer = accessTokens.issuer
            accessTokens.setPublicURL("", audience: nil)
            let responder = DiscoveryResponder(accessTokens: accessTokens, mounted: .all)
            #expect(responder.response.status == 503)
            accessTokens.setPublicURL(issuer, audience: nil)
            let response = responder.response
            #expect(response.status == 200)
            let document = try JSONValue(parsing: response.body)
            #expect(document["issuer"]?.stringValue == issuer)
        }
    }

    @Test("RFC 8414 §2: introspection does not advertise none (it refuses public clients); introspection and revocation list their private_key_jwt algorithms")
    func endpointAuthMethods() async throws {
        try await TestServer.with { server in
            let document = try await server.request(.get, Self.paths[1]).json
            let methods = Set(Self.strings(document["introspection_endpoint_auth_methods_supported"]) ?? [])
            #expect(methods == ["client_secret_basic", "client_secret_post", "private_key_jwt"])
            #expect(Set(Self.strings(document["revocation_endpoint_auth_methods_supported"]) ?? []).contains("none"), "public clients revoke their tokens")
            let tokenAlgorithms = try #require(Self.strings(document["token_endpoint_auth_signing_alg_values_supported"]))
            for member in ["introspection_endpoint_auth_signing_alg_values_supported", "revocation_endpoint_auth_signing_alg_values_supported"] {
                #expect(Self.strings(document[member]) == tokenAlgorithms, "\(member)")
            }
        }
    }

    @Test("only mounted endpoints are listed")
    func onlyMountedEndpoints() throws {
        let metadata = ProviderMetadata(issuer: "https://id.example.com", mounted: [.token, .jwks])
        #expect(metadata.tokenEndpoint == "https://id.example.com/oauth/token")
        #expect(metadata.jwksURI == "https://id.example.com/.well-known/jwks.json")
        let document = metadata.json
        for absent in ["authorization_endpoint", "userinfo_endpoint", "revocation_endpoint", "introspection_endpoint", "end_session_endpoint",
                       "revocation_endpoint_auth_methods_supported", "introspection_endpoint_auth_methods_supported"] {
            #expect(document[absent] == nil, "\(absent)")
        }
        #expect(document["token_endpoint"]?.stringValue == "https://id.example.com/oauth/token")
        #expect(document["issuer"]?.stringValue == "https://id.example.com")
        #expect(ProviderMetadata(issuer: "https://id.example.com", mounted: .all).json["revocation_endpoint_auth_methods_supported"] != nil)
    }
}
