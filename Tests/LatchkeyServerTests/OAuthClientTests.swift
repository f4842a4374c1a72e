import Foundation
import LatchkeyCrypto
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Testing

/// The S20 redirect-URI rules: what registration accepts and refuses, and how a presented URI is
/// matched against a registered one.
@Suite("Redirect URIs")
struct RedirectURITests {
    /// URIs a public (native) client may register, and whether a confidential one may too.
    static let accepted: [(uri: String, confidentialToo: Bool)] = [
        ("https://app.example/callback", true),
        ("https://app.example:8443/oauth/cb?tenant=1", true),
        ("https://app.example", true),
        ("https://[2001:db8::1]/cb", true),
        ("http://127.0.0.1/callback", true),
        ("http://127.0.0.1:8080/callback", true),
        ("http://[::1]/callback", true),
        ("http://[::1]:49152/cb", true),
        ("com.example.app:/oauth/callback", false),
        ("com.example.app:/", false),
        ("com.example.app://oauth/callback", false),
    ]

    @Test("S20: https anywhere, http on 127.0.0.1 and [::1], reverse-DNS private-use schemes for public clients are accepted", arguments: accepted)
    func acceptedS20(_ example: (uri: String, confidentialToo: Bool)) throws {
        try RedirectURI.validate(example.uri, confidential: false)
        if example.confidentialToo {
            try RedirectURI.validate(example.uri, confidential: true)
        } else {
            let error = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(example.uri, confidential: true) }
            #expect(error?.message.contains("public (native) clients") == true)
        }
    }

    /// URIs no client may register, and a word the refusal must say.
    static let refused: [(uri: String, rule: String)] = [
        ("", "empty"),
        ("/callback", "absolute"),
        ("app.example/callback", "absolute"),
        ("https://app.example/cb#frag", "fragment"),
        ("https://app.example/cb#", "fragment"),
        ("https://user@app.example/cb", "userinfo"),
        ("https://user:pass@app.example/cb", "userinfo"),
        ("https://*.app.example/cb", "wildcard"),
        ("https://app.example/*", "wildcard"),
        ("http://localhost/cb", "localhost"),
        ("http://localhost:8080/cb", "localhost"),
        ("https://localhost/cb", "localhost"),
        ("https://LOCALHOST/cb", "localhost"),
        ("https://app.localhost/cb", "localhost"),
        ("https://%6Cocalhost/cb", "percent-encoding"),
        ("http://127.0.0.1%2F@evil.example/cb", "userinfo"),
        ("http://127%2E0.0.1/cb", "percent-encoding"),
        ("http://app.example/cb", "loopback"),
        ("http://127.0.0.2/cb", "loopback"),
        ("http://127.0.0.1.evil.example/cb", "loopback"),
        ("http://[::2]/cb", "loopback"),
        ("http://127.0.0.1:0/cb", "port"),
        ("http://127.0.0.1:65536/cb", "port"),
        ("http://127.0.0.1:/cb", "port"),
        ("https://app.example:abc/cb", "port"),
        ("https:/app.example/cb", "host"),
        ("https:app.example", "host"),
        ("https:///cb", "host"),
        ("myapp:/callback", "reverse-DNS"),
        ("javascript:alert(1)", "reverse-DNS"),
        ("data:text/html,hi", "reverse-DNS"),
        ("file:///etc/passwd", "reverse-DNS"),
        (".example.app:/cb", "scheme"),
        ("com..example:/cb", "reverse-DNS"),
        ("HTTPS://app.example/cb", "lowercase"),
        ("https://app.example/a b", "spaces"),
        ("https://app.example/\u{e9}", "non-ASCII"),
        ("https://app.example\\@evil.example/", "backslash"),
        ("com.example.app:", "more than a scheme"),
    ]

    @Test("S20: relative URIs, fragments, userinfo, wildcards, localhost, plain http off loopback and bare schemes are refused, naming the rule", arguments: refused)
    func refusedS20(_ example: (uri: String, rule: String)) {
        for confidential in [false, true] {
            let error = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(example.uri, confidential: confidential) }
            #expect(error?.message.contains(example.rule) == true, "\(example.uri): \(error?.message ?? "")")
        }
    }

    @Test("S20: a loopback URI registered without a port matches any port, and only that path and query (RFC 8252 §7.3)")
    func loopbackAnyPortS20() {
        for origin in ["http://127.0.0.1", "http://[::1]"] {
            let registered = origin + "/callback"
            #expect(RedirectURI.matches(registered: registered, presented: registered))
            for port in ["1", "80", "8080", "49152", "65535"] {
                #expect(RedirectURI.matches(registered: registered, presented: "\(origin):\(port)/callback"), "\(port)")
            }
            for presented in [
                "\(origin):0/callback", "\(origin):65536/callback", "\(origin):080/callback", "\(origin):/callback", "\(origin):8080/callback/",
                "\(origin):8080/Callback", "\(origin):8080/callback?x=1", "\(origin):8080@evil.example/callback", "\(origin):8080",
                "\(origin):8080/callback#x", "\(origin):8080%2Fcallback", "\(origin):-1/callback",
            ] {
                #expect(!RedirectURI.matches(registered: registered, presented: presented), "\(presented)")
            }
            #expect(RedirectURI.matches(registered: origin, presented: origin + ":5000"))
            #expect(!RedirectURI.matches(registered: origin, presented: origin + ":5000/"))
        }
        // The IPv4 and IPv6 loopbacks are not each other.
        #expect(!RedirectURI.matches(registered: "http://127.0.0.1/cb", presented: "http://[::1]:8080/cb"))
    }

    @Test("S20: a loopback URI registered with a port matches that port alone")
    func loopbackWithPortExactS20() {
        let registered = "http://127.0.0.1:8080/cb"
        #expect(RedirectURI.matches(registered: registered, presented: registered))
        #expect(!RedirectURI.matches(registered: registered, presented: "http://127.0.0.1:8081/cb"))
        #expect(!RedirectURI.matches(registered: registered, presented: "http://127.0.0.1/cb"))
        #expect(!RedirectURI.matches(registered: registered, presented: "http://127.0.0.1:8080:9090/cb"))
    }

    @Test("S20: matching is by exact string: no decoding (%2F), no trailing-slash, case, dot-segment or port folding; https never gets the any-port rule")
    func exactMatchS20() {
        let client = OAuthClient(
            id: "cl_x", name: "X", isConfidential: false, isFirstParty: false,
            redirectURIs: ["https://app.example/cb", "com.example.app:/oauth/cb"], postLogoutRedirectURIs: ["https://app.example/bye"],
            grantTypes: [.authorizationCode], scopes: ["openid"], idTokenAlgorithm: "RS256", createdAt: Date())
        #expect(client.acceptsRedirectURI("https://app.example/cb"))
        #expect(client.acceptsRedirectURI("com.example.app:/oauth/cb"))
        for presented in [
            "https://app.example/cb/", "https://app.example/CB", "https://APP.example/cb", "HTTPS://app.example/cb", "https://app.example/%63b",
            "https://app.example%2Fcb", "https://app.example/cb%2F", "https://app.example/./cb", "https://app.example/x/../cb",
            "https://app.example:443/cb", "https://app.example:8443/cb", "https://app.example/cb?x=1", "https://app.example/cb#x",
            "https://app.example/cb.evil.example", "https://app.example.evil.example/cb", "https://evil.example/?https://app.example/cb",
            "http://app.example/cb", " https://app.example/cb", "https://app.example/cb ", "com.example.app:/oauth/cb/",
            "com.example.app://oauth/cb", "COM.example.app:/oauth/cb", "", "https://app.example/bye",
        ] {
            #expect(!client.acceptsRedirectURI(presented), "\(presented)")
        }
        #expect(client.acceptsPostLogoutRedirectURI("https://app.example/bye"))
        #expect(!client.acceptsPostLogoutRedirectURI("https://app.example/bye/"))
        #expect(!client.acceptsPostLogoutRedirectURI("https://app.example/cb"))
    }
}

/// ``ClientService``: registration (S20 at the door, secrets hashed), authentication at the token
/// endpoint, rotation and removal, each change audited.
@Suite("Client service")
struct ClientServiceTests {
    /// A migrated SQLite database in a temporary directory, closed and removed afterwards.
    static func withService<T>(_ body: (ClientService, any SQLDatabase) async throws -> T) async throws -> T {
        try await withContractDatabase(.sqlite) { database in try await body(ClientService(database: database), database) }
    }

    @Test("registration defaults: public clients get authorization_code and refresh_token, confidential ones also client_credentials; scopes openid profile email offline_access; RS256")
    func registrationDefaults() async throws {
        try await Self.withService { service, _ in
            let (publicClient, noSecret) = try await service.register(ClientRegistration(name: "App", redirectURIs: ["com.example.app:/cb"]))
            #expect(noSecret == nil)
            #expect(!publicClient.isConfidential && !publicClient.isFirstParty)
            #expect(publicClient.grantTypes == [.authorizationCode, .refreshToken])
            #expect(publicClient.scopes == ["openid", "profile", "email", "offline_access"])
            #expect(publicClient.idTokenAlgorithm == "RS256")
            let (web, secret) = try await service.register(
                ClientRegistration(name: "  Web  ", redirectURIs: ["https://web.example/cb"], confidential: true, firstParty: true, idTokenAlgorithm: "ES256"))
            #expect(web.name == "Web")
            #expect(web.isConfidential && web.isFirstParty && web.idTokenAlgorithm == "ES256")
            #expect(web.grantTypes == [.authorizationCode, .refreshToken, .clientCredentials])
            // ≥ 128 bits of id and 256 bits of secret, base64url.
            #expect(web.id.hasPrefix("cl_") && web.id.count == 3 + 22)
            #expect(secret?.count == 43)
            #expect(try await service.client(id: web.id) == web)
            #expect(Set(try await service.list().map(\.id)) == [publicClient.id, web.id])
        }
    }

    @Test("S7: only the secret's SHA-256 is stored; a public client's secret_hash is NULL")
    func secretStoredHashedS7() async throws {
        try await Self.withService { service, database in
            let (web, secret) = try await service.register(ClientRegistration(name: "Web", redirectURIs: ["https://web.example/cb"], confidential: true))
            let (app, _) = try await service.register(ClientRegistration(name: "App", redirectURIs: ["http://127.0.0.1/cb"]))
            let rows = try await database.read { try $0.query("SELECT * FROM oauth_clients ORDER BY created_at, id", []) }
            let stored = try #require(rows.first { (try? $0.string("id")) == web.id })
            #expect(try stored.blob("secret_hash") == HashFunction.sha256.hash(Array(try #require(secret).utf8)))
            #expect(rows.first { (try? $0.string("id")) == app.id }?.optionalBlob("secret_hash") == nil)
            #expect(!"\(rows)".contains(try #require(secret)))
        }
    }

    @Test("S20: a registration with a bad redirect URI, post-logout URI, scope, algorithm or grant is refused and writes nothing")
    func refusedRegistrationWritesNothingS20() async throws {
        try await Self.withService { service, database in
            let bad: [ClientRegistration] = [
                ClientRegistration(name: "A", redirectURIs: ["https://web.example/cb", "http://localhost/cb"]),
                ClientRegistration(name: "A", redirectURIs: ["com.example.app:/cb"], confidential: true),
                ClientRegistration(name: "A", redirectURIs: ["https://web.example/cb"], postLogoutRedirectURIs: ["https://web.example/#x"]),
                ClientRegistration(name: "A", redirectURIs: []),
                ClientRegistration(name: " ", redirectURIs: ["https://web.example/cb"]),
                ClientRegistration(name: "A", redirectURIs: ["https://web.example/cb"], scopes: ["open id"]),
                ClientRegistration(name: "A", redirectURIs: ["https://web.example/cb"], idTokenAlgorithm: "HS256"),
                ClientRegistration(name: "A", redirectURIs: ["https://web.example/cb"], grantTypes: [.clientCredentials]),
                ClientRegistration(name: "A", redirectURIs: ["https://web.example/cb"], grantTypes: []),
            ]
            for registration in bad {
                await #expect(throws: AuthError.invalidRequest(""), "\(registration)") { try await service.register(registration) }
            }
            #expect(try await service.list().isEmpty)
            #expect(try await AuditLog(database: database).entries().isEmpty)
            // A confidential client of client_credentials alone needs no redirect URI.
            let (machine, secret) = try await service.register(
                ClientRegistration(name: "Cron", redirectURIs: [], confidential: true, grantTypes: [.clientCredentials]))
            #expect(machine.redirectURIs.isEmpty && secret != nil)
        }
    }

    @Test("authenticate: the right secret passes; a wrong, missing or other client's secret, an unknown id and a public client sending one are invalid_client")
    func authenticate() async throws {
        try await Self.withService { service, _ in
            let (web, secret) = try await service.register(ClientRegistration(name: "Web", redirectURIs: ["https://web.example/cb"], confidential: true))
            let (other, otherSecret) = try await service.register(ClientRegistration(name: "Other", redirectURIs: ["https://o.example/cb"], confidential: true))
            let (app, _) = try await service.register(ClientRegistration(name: "App", redirectURIs: ["com.example.app:/cb"]))
            #expect(try await service.authenticate(id: web.id, secret: secret) == web)
            #expect(try await service.authenticate(id: other.id, secret: otherSecret) == other)
            #expect(try await service.authenticate(id: app.id, secret: nil) == app)
            let refusals: [(String, String?)] = [
                (web.id, nil), (web.id, ""), (web.id, "wrong"), (web.id, otherSecret), (web.id, String(try #require(secret).dropLast())),
                (web.id, try #require(secret) + "x"), (app.id, "anything"), (app.id, ""), ("cl_unknown", nil), ("cl_unknown", secret),
            ]
            for (id, presented) in refusals {
                let error = await #expect(throws: AuthError(.invalidClient, "")) { try await service.authenticate(id: id, secret: presented) }
                #expect(error?.status == 401 && error?.errorCode == "invalid_client")
                // The message never repeats what was sent.
                if let presented, !presented.isEmpty { #expect(error?.message.contains(presented) == false) }
            }
        }
    }

    @Test("rotate-secret: the new secret works and the old one stops; a public client is refused, an unknown one not found; remove deletes once; all audited")
    func rotateAndRemoveAudited() async throws {
        try await Self.withService { service, database in
            let (web, old) = try await service.register(ClientRegistration(name: "Web", redirectURIs: ["https://web.example/cb"], confidential: true))
            let (app, _) = try await service.register(ClientRegistration(name: "App", redirectURIs: ["com.example.app:/cb"]))
            let new = try await service.rotateSecret(id: web.id)
            #expect(new != old)
            #expect(try await service.authenticate(id: web.id, secret: new) == web)
            await #expect(throws: AuthError(.invalidClient, "")) { try await service.authenticate(id: web.id, secret: old) }
            await #expect(throws: AuthError.invalidRequest("")) { try await service.rotateSecret(id: app.id) }
            #expect(try await service.authenticate(id: app.id, secret: nil) == app)
            await #expect(throws: AuthError.notFound()) { try await service.rotateSecret(id: "cl_unknown") }
            #expect(try await service.remove(id: app.id))
            #expect(try await !service.remove(id: app.id))
            #expect(try await service.client(id: app.id) == nil)

            let entries = try await AuditLog(database: database).entries()
            #expect(entries.map(\.event.rawValue) == ["client.removed", "client.secret_rotated", "client.registered", "client.registered"])
            #expect(entries.allSatisfy { $0.outcome == .success && $0.userID == nil })
            #expect(entries[0].details == ["client_id": app.id])
            #expect(entries[1].details == ["client_id": web.id])
            #expect(entries[3].details == ["client_id": web.id, "name": "Web", "confidential": "true", "first_party": "false"])
            #expect(!"\(entries)".contains(try #require(old)) && !"\(entries)".contains(new))
        }
    }
}

/// `latchkey clients …` run as the operator runs it: a subprocess on a deployment's database.
@Suite("Clients command")
struct ClientCommandTests {
    /// A deployment whose database exists (as after the server's first start).
    static func deployment() throws -> BackupTests.Deployment {
        let deployment = try BackupTests.Deployment()
        let migrated = try deployment.latchkey(["migrate"])
        #expect(migrated.status == 0, "\(migrated.error)")
        return deployment
    }

    /// The JSON a successful command printed.
    static func json(_ deployment: BackupTests.Deployment, _ arguments: [String]) throws -> JSONValue {
        let result = try deployment.latchkey(arguments)
        #expect(result.status == 0, "\(arguments): \(result.error)")
        return try JSONValue(parsing: Array(result.output.utf8))
    }

    static func auditEvents(_ deployment: BackupTests.Deployment) throws -> [JSONValue] {
        let result = try deployment.latchkey(["audit", "--json"])
        #expect(result.status == 0, "\(result.error)")
        return try result.output.split(separator: "\n").map { try JSONValue(parsing: Array($0.utf8)) }
    }

    @Test("S20: clients add/list/show/rotate-secret/remove end to end with --json: the secret printed once and stored hashed, each change audited")
    func endToEndS20() async throws {
        let deployment = try Self.deployment()
        defer { deployment.remove() }

        let web = try Self.json(deployment, [
            "clients", "add", "--name", "Example Web", "--redirect-uri", "https://web.example/cb", "--redirect-uri", "http://127.0.0.1/cb",
            "--confidential", "--post-logout-redirect-uri", "https://web.example/bye", "--scope", "openid", "--scope", "email",
            "--id-token-alg", "ES256", "--json",
        ])
        let webID = try #require(web["client_id"]?.stringValue)
        let secret = try #require(web["client_secret"]?.stringValue)
        #expect(web.objectValue?.count == 2)
        let app = try Self.json(deployment, ["clients", "add", "--name", "Example App", "--redirect-uri", "com.example.app:/oauth/cb", "--first-party", "--json"])
        let appID = try #require(app["client_id"]?.stringValue)
        #expect(app["client_secret"] == nil, "a public client has no secret")

        // Without --json: the id and, for a confidential client, the secret, once.
        let plain = try deployment.latchkey(["clients", "add", "--name", "Plain", "--redirect-uri", "https://plain.example/cb"])
        #expect(plain.status == 0)
        #expect(plain.output.hasPrefix("client_id      cl_") && !plain.output.contains("client_secret"))
        let plainID = String(plain.output.split(separator: "\n")[0].split(separator: " ").last ?? "")

        let shown = try Self.json(deployment, ["clients", "show", webID, "--json"])
        #expect(shown == .object([
            "client_id": .string(webID), "name": "Example Web", "confidential": true, "first_party": false,
            "redirect_uris": ["https://web.example/cb", "http://127.0.0.1/cb"], "post_logout_redirect_uris": ["https://web.example/bye"],
            "grant_types": ["authorization_code", "client_credentials", "refresh_token"], "scopes": ["email", "openid"],
            "id_token_algorithm": "ES256", "created_at": try #require(shown["created_at"]), "require_dpop": false,
        ]))
        let listed = try Self.json(deployment, ["clients", "list", "--json"])
        #expect(Set(listed["clients"]?.arrayValue?.compactMap { $0["client_id"]?.stringValue } ?? []) == [webID, appID, plainID])
        let table = try deployment.latchkey(["clients", "list"])
        #expect(table.output.contains(webID) && table.output.contains("confidential") && table.output.contains("public, first-party"))
        let human = try deployment.latchkey(["clients", "show", appID])
        #expect(human.status == 0 && human.output.contains("com.example.app:/oauth/cb"))

        // Only the secret's hash is in the database.
        let database = try SQLiteDatabase(configuration: .init(path: deployment.database.path))
        let hash = try await database.read { try $0.queryOne("SELECT secret_hash FROM oauth_clients WHERE id = ?", [.text(webID)])?.blob("secret_hash") }
        await database.close()
        #expect(hash == HashFunction.sha256.hash(Array(secret.utf8)))

        let rotated = try Self.json(deployment, ["clients", "rotate-secret", webID, "--json"])
        #expect(rotated["client_id"]?.stringValue == webID)
        let newSecret = try #require(rotated["client_secret"]?.stringValue)
        #expect(newSecret != secret)
        let refusedRotation = try deployment.latchkey(["clients", "rotate-secret", appID])
        #expect(refusedRotation.status == 1 && refusedRotation.error.contains("public"))

        #expect(try deployment.latchkey(["clients", "remove", appID]).output == "removed \(appID)\n")
        let again = try deployment.latchkey(["clients", "remove", appID])
        #expect(again.status == 1 && again.error == "latchkey: no client \(appID)\n")
        #expect(try deployment.latchkey(["clients", "show", appID]).status == 1)

        let entries = try Self.auditEvents(deployment)
        #expect(entries.prefix(5).map { $0["event"]?.stringValue ?? "" } == [
            "client.removed", "client.secret_rotated", "client.registered", "client.registered", "client.registered",
        ])
        #expect(entries[0]["details"] == ["client_id": .string(appID)])
        #expect(entries[1]["details"] == ["client_id": .string(webID)])
        // No secret in any output of the log.
        let log = try deployment.latchkey(["audit", "--json"]).output
        #expect(!log.contains(secret) && !log.contains(newSecret))
    }

    @Test("S20: a bad redirect URI is one clear line on standard error, exit status 1, nothing written", arguments: [
        ["--redirect-uri", "http://localhost:8080/cb"],
        ["--redirect-uri", "https://web.example/cb#x"],
        ["--redirect-uri", "https://web.example/cb", "--redirect-uri", "https://*.example/cb"],
        ["--redirect-uri", "com.example.app:/cb", "--confidential"],
        ["--redirect-uri", "https://web.example/cb", "--post-logout-redirect-uri", "http://web.example/bye"],
    ])
    func badRedirectURIS20(_ uris: [String]) throws {
        let deployment = try Self.deployment()
        defer { deployment.remove() }
        let result = try deployment.latchkey(["clients", "add", "--name", "Bad"] + uris)
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.error.hasPrefix("latchkey: ") && result.error.hasSuffix("\n") && result.error.split(separator: "\n").count == 1, "\(result.error)")
        #expect(result.error.contains("redirect URI"))
        #expect(try Self.json(deployment, ["clients", "list", "--json"]) == ["clients": []])
        #expect(try Self.auditEvents(deployment).isEmpty)
    }

    @Test("clients add without --name is a usage error (exit 2); without --redirect-uri it is refused (exit 1) unless the only grant is device_code")
    func usage() throws {
        let deployment = try Self.deployment()
        defer { deployment.remove() }
        let noRedirect = try deployment.latchkey(["clients", "add", "--name", "X"])
        #expect(noRedirect.status == 1 && noRedirect.error.contains("needs at least one redirect URI"), "\(noRedirect.error)")
        #expect(try deployment.latchkey(["clients", "add", "--redirect-uri", "https://a.example/cb"]).status == 2)
        let help = try Subprocess.run(Executables.latchkey, ["clients", "add", "--help"])
        #expect(help.output.contains("[--redirect-uri URI ...]") && help.output.contains("[--grant G ...]"), "\(help.output)")
    }
}
