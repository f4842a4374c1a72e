import Foundation
import LatchkeyServer
import Testing

@Suite("Upstream provider configuration")
struct ProviderConfigurationTests {
    static func load(_ providers: String, environment: [String: String] = [:], dev: Bool = false) throws(ConfigurationError) -> Configuration {
        try ConfigurationLoader.load(file: nil, environment: environment.merging(["LATCHKEY_PROVIDERS": providers]) { $1 }, dev: dev)
    }

    static func problems(_ providers: String, environment: [String: String] = [:]) -> String {
        do {
            _ = try load(providers, environment: environment)
            return ""
        } catch {
            return error.description
        }
    }

    @Test("an OpenID provider and GitHub: defaults, secrets from a file and from LATCHKEY_PROVIDER_<ID>_SECRET")
    func entries() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID())")
        try "file-secret\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try Self.load(
            """
            [{"id": "google", "kind": "oidc", "issuer": "https://accounts.google.com", "client_id": "g", "client_secret_file": "\(file.path)",
              "display_name": "Google"},
             {"id": "corp-sso", "kind": "oidc", "issuer": "https://sso.example.com", "client_id": "c", "link_by_email": false, "algorithms": ["PS256"]},
             {"id": "github", "kind": "github", "client_id": "h"}]
            """, environment: ["LATCHKEY_PROVIDER_GITHUB_SECRET": "env-secret"])
        let (google, corp, github) = (configuration.providers[0], configuration.providers[1], configuration.providers[2])
        #expect(google.clientSecret?.value == "file-secret")
        #expect(google.scopes == ["openid", "email", "profile"] && google.linkByEmail && google.algorithms == ["RS256", "ES256"])
        #expect(corp.clientSecret == nil && !corp.linkByEmail && corp.algorithms == ["PS256"] && corp.displayName == "Corp-Sso")
        #expect(github.clientSecret?.value == "env-secret" && github.displayName == "GitHub" && github.scopes == ["read:user", "user:email"])
        #expect(github.apiURL == "https://api.github.com" && github.tokenURL == "https://github.com/login/oauth/access_token")
        // A secret never shows in a description.
        #expect(!"\(configuration)".contains("env-secret") && !"\(configuration)".contains("file-secret"))
    }

    @Test("each bad entry stops the server with a problem naming the entry and the setting, and never the secret")
    func badEntries() {
        let problems = Self.problems(
            """
            [{"id": "Google!", "kind": "oidc"},
             {"id": "a", "kind": "saml", "client_id": "x"},
             {"id": "b", "kind": "oidc", "client_id": "x"},
             {"id": "c", "kind": "oidc", "client_id": "x", "issuer": "http://sso.example.com", "algorithms": ["none", "HS256"]},
             {"id": "d", "kind": "github", "client_id": "x", "api_url": "ftp://x", "secret": "s3cret-value"},
             {"id": "apple", "kind": "github", "client_id": "x"},
             {"id": "e", "kind": "oidc", "client_id": "x", "issuer": "https://e.example.com", "client_secret_file": "/nonexistent/secret"},
             {"id": "e", "kind": "oidc", "client_id": "x", "issuer": "https://e.example.com", "scopes": ["email"]}]
            """)
        #expect(problems.contains("providers[0] (Google!).id: must be 1 to 32 of a-z, 0-9 and -"))
        #expect(problems.contains("providers[1] (a).kind: must be oidc or github"))
        #expect(problems.contains("providers[2] (b).issuer: required for kind oidc"))
        #expect(problems.contains("providers[3] (c).issuer: must be https"))
        #expect(problems.contains("providers[3] (c).algorithms: must list some of ES256, PS256, RS256"))
        #expect(problems.contains("providers[4] (d).api_url: "))
        #expect(problems.contains("providers[4] (d).secret: unknown setting"))
        #expect(problems.contains("providers[4] (d).client_secret_file: GitHub needs"))
        #expect(problems.contains("providers[5] (apple).id: apple is reserved"))
        #expect(problems.contains("providers[6] (e).client_secret_file: /nonexistent/secret cannot be read"))
        #expect(problems.contains("providers[7] (e).id: another entry has this id"))
        #expect(problems.contains("providers[7] (e).scopes: must include openid"))
        #expect(!problems.contains("s3cret-value"))
        #expect(Self.problems("{}").contains("providers: must be an array"))
        #expect(Self.problems("[nope").contains("LATCHKEY_PROVIDERS: not valid JSON"))
    }

    @Test("development mode adds the sandbox upstream with a secret of its own process, unless one is configured")
    func sandbox() throws {
        let dev = try ConfigurationLoader.load(file: nil, environment: [:], dev: true)
        let sandbox = try #require(dev.providers.first { $0.id == "sandbox" })
        #expect(sandbox.isSandbox && sandbox.kind == .oidc && sandbox.displayName == "Sandbox" && (sandbox.clientSecret?.value.count ?? 0) >= 43)
        #expect(try ConfigurationLoader.load(file: nil, environment: [:]).providers.isEmpty)
        let own = try Self.load(#"[{"id": "sandbox", "kind": "oidc", "issuer": "https://idp.example.com", "client_id": "x"}]"#, dev: true)
        #expect(own.providers.count == 1 && !own.providers[0].isSandbox)
    }

    @Test("LATCHKEY_PROVIDER_SANDBOX_SECRET sets the sandbox upstream's secret, so another server can use it")
    func sandboxSecret() throws {
        let given = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_PROVIDER_SANDBOX_SECRET": "bench-secret"], dev: true)
        #expect(given.providers.first { $0.id == "sandbox" }?.clientSecret?.value == "bench-secret")
        #expect(!"\(given)".contains("bench-secret"))
        let empty = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_PROVIDER_SANDBOX_SECRET": ""], dev: true)
        #expect((empty.providers.first { $0.id == "sandbox" }?.clientSecret?.value.count ?? 0) >= 43)
    }

    @Test("providers in the configuration file are read too")
    func file() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(UUID()).json")
        try #"{"providers": [{"id": "corp", "kind": "oidc", "issuer": "https://sso.example.com", "client_id": "c"}], "dev": false}"#
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try ConfigurationLoader.load(file: file.path, environment: [:])
        #expect(configuration.providers.map(\.id) == ["corp"])
    }
}
