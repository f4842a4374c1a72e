import Foundation
@testable import LatchkeyServer
import Testing

/// The pure rules of client registration (``ClientService``'s static checks; docs/reference.md,
/// `clients add`): defaults, names, grants, redirect URIs, scope tokens (RFC 6749 §3.3) and the
/// ID-token algorithm, without a database.
@Suite("Client registration rules")
struct ClientRegistrationRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("default grants: authorization_code and refresh_token, and client_credentials for confidential clients", arguments: [
        (false, Set<OAuthClient.GrantType>([.authorizationCode, .refreshToken])),
        (true, Set<OAuthClient.GrantType>([.authorizationCode, .refreshToken, .clientCredentials])),
    ])
    func defaultGrants(_ confidential: Bool, _ expected: Set<OAuthClient.GrantType>) throws {
        #expect(ClientService.defaultGrantTypes(confidential: confidential) == expected)
        let client = try ClientService.client(
            for: ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], confidential: confidential), id: "cl_a", at: Self.now)
        #expect(client.grantTypes == expected)
        #expect(client.scopes == ["openid", "profile", "email", "offline_access"])
        #expect(client.idTokenAlgorithm == "RS256")
        #expect(client.isConfidential == confidential && !client.isFirstParty)
        #expect(client.id == "cl_a" && client.createdAt == Self.now)
    }

    static let scopeTokens: [(scope: String, valid: Bool)] = [
        ("openid", true),
        ("read:reports", true),
        ("https://api.example/reports.read", true),
        ("!", true),
        ("~#$%&'()*+,-./;<=>?@[]^_`{|}", true),
        (String(repeating: "s", count: 128), true),
        (String(repeating: "s", count: 129), false),
        ("", false),
        ("open id", false),
        ("a\"b", false),
        ("a\\b", false),
        ("a\tb", false),
        ("a\u{7F}", false),
        ("caf\u{e9}", false),
        ("a\nb", false),
    ]

    @Test("RFC 6749 §3.3: a scope token is 1 to 128 printable ASCII characters but space, \" and \\", arguments: scopeTokens)
    func scopeToken(_ row: (scope: String, valid: Bool)) {
        #expect(ClientService.isScopeToken(row.scope) == row.valid)
    }

    /// A registration and the words its refusal says (`nil`: accepted).
    static let registrations: [(name: String, registration: ClientRegistration, refusal: String?)] = [
        ("a name trimmed to nothing", ClientRegistration(name: " \t\n ", redirectURIs: ["https://a.example/cb"]), "needs a name"),
        ("a name of 201 characters", ClientRegistration(name: String(repeating: "n", count: 201), redirectURIs: ["https://a.example/cb"]), "longer than 200"),
        ("a name of 200 characters", ClientRegistration(name: String(repeating: "n", count: 200), redirectURIs: ["https://a.example/cb"]), nil),
        ("a name of 200 emoji", ClientRegistration(name: String(repeating: "\u{1F44D}", count: 200), redirectURIs: ["https://a.example/cb"]), nil),
        ("a name with a bell", ClientRegistration(name: "Bad\u{7}App", redirectURIs: ["https://a.example/cb"]), "control characters"),
        ("a name with a line break inside", ClientRegistration(name: "Bad\nApp", redirectURIs: ["https://a.example/cb"]), "control characters"),
        ("no grant types", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], grantTypes: []), "at least one grant type"),
        ("client_credentials for a public client", ClientRegistration(name: "A", redirectURIs: [], grantTypes: [.clientCredentials]), "confidential clients only"),
        ("the authorization code grant without a redirect URI", ClientRegistration(name: "A", redirectURIs: [], confidential: true), "at least one redirect URI"),
        ("client_credentials alone without a redirect URI", ClientRegistration(name: "A", redirectURIs: [], confidential: true, grantTypes: [.clientCredentials]), nil),
        ("a bad redirect URI after a good one", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb", "http://a.example/cb"]), "loopback"),
        ("a private-use redirect URI for a confidential client", ClientRegistration(name: "A", redirectURIs: ["com.example.app:/cb"], confidential: true), "public (native)"),
        ("a bad post-logout redirect URI", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], postLogoutRedirectURIs: ["https://a.example/#bye"]),
            "post-logout redirect URI"),
        ("a scope with a space", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], scopes: ["openid", "read reports"]), "not a scope token"),
        ("an empty scope", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], scopes: [""]), "not a scope token"),
        ("HS256 ID tokens", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], idTokenAlgorithm: "HS256"), "RS256 or ES256"),
        ("rs256 in lowercase", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], idTokenAlgorithm: "rs256"), "RS256 or ES256"),
        ("none as the algorithm", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], idTokenAlgorithm: "none"), "RS256 or ES256"),
        ("ES256 ID tokens", ClientRegistration(name: "A", redirectURIs: ["https://a.example/cb"], idTokenAlgorithm: "ES256"), nil),
    ]

    @Test("a registration is refused with invalid_request naming what is wrong, or accepted", arguments: registrations)
    func registration(_ row: (name: String, registration: ClientRegistration, refusal: String?)) throws {
        if let refusal = row.refusal {
            let error = #expect(throws: AuthError.invalidRequest(""), "\(row.name)") {
                try ClientService.client(for: row.registration, id: "cl_a", at: Self.now)
            }
            #expect(error?.message.contains(refusal) == true, "\(row.name): \(error?.message ?? "")")
        } else {
            let client = try ClientService.client(for: row.registration, id: "cl_a", at: Self.now)
            #expect(client.redirectURIs == row.registration.redirectURIs)
            #expect(client.scopes == row.registration.scopes ?? ClientService.defaultScopes)
            #expect(client.idTokenAlgorithm == row.registration.idTokenAlgorithm)
        }
    }

    @Test("the name is trimmed of surrounding white space only; repeated URIs are kept once, in their order")
    func trimmedAndUnique() throws {
        let client = try ClientService.client(
            for: ClientRegistration(
                name: "\n\t Example  App \u{3000}", redirectURIs: ["https://b.example/cb", "http://127.0.0.1/cb", "https://b.example/cb", "https://a.example/cb"],
                postLogoutRedirectURIs: ["https://b.example/bye", "https://b.example/bye"], firstParty: true),
            id: "cl_a", at: Self.now)
        #expect(client.name == "Example  App")
        #expect(client.redirectURIs == ["https://b.example/cb", "http://127.0.0.1/cb", "https://a.example/cb"])
        #expect(client.postLogoutRedirectURIs == ["https://b.example/bye"])
        #expect(client.isFirstParty)
    }
}
