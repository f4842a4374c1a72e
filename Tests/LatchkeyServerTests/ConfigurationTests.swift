import Foundation
import LatchkeyCrypto
import LatchkeyServer
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    static func withFile(_ json: String, _ body: (String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-config-\(UUID()).json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    @Test("no file and no environment gives docs/reference.md's defaults")
    func defaults() throws {
        let configuration = try ConfigurationLoader.load(file: nil, environment: [:])
        #expect(configuration == Configuration())
        #expect(configuration.listenAddress.port == 8080)
        #expect(configuration.password.argon2.memoryKiB == 19_456)
        #expect(configuration.apple.clientIDs.isEmpty)
    }

    @Test("file values apply and LATCHKEY_ variables override them")
    func fileAndEnvironment() throws {
        try Self.withFile(#"{"listen":"127.0.0.1:9000","apple":{"team_id":"FILE","client_ids":["a.b"]},"password":{"argon2":{"iterations":3}},"audience":null}"#) { path in
            let configuration = try ConfigurationLoader.load(
                file: path,
                environment: ["LATCHKEY_APPLE_TEAM_ID": "ENV1234567", "LATCHKEY_APPLE_CLIENT_IDS": "com.a.app, com.b.app", "LATCHKEY_DEV": "true", "LATCHKEY_PASSWORD_ARGON2_MEMORY_KIB": "65536"])
            #expect(configuration.listen == "127.0.0.1:9000")
            #expect(configuration.apple.teamID == "ENV1234567")
            #expect(configuration.apple.clientIDs == ["com.a.app", "com.b.app"])
            #expect(configuration.password.argon2.iterations == 3)
            #expect(configuration.password.argon2.memoryKiB == 65_536)
            #expect(configuration.dev)
        }
    }

    @Test("S33: a plain-text SMTP relay on another machine warns at start; one on this machine, or with TLS, does not")
    func plainRelayWarning() {
        func warnings(_ url: String) -> [String] {
            var configuration = Configuration()
            configuration.email.smtpURL = url
            return ConfigurationLoader.mailWarnings(configuration)
        }
        #expect(warnings("smtp+plain://127.0.0.1:25").isEmpty)
        #expect(warnings("smtp+plain://localhost").isEmpty)
        #expect(warnings("smtp+plain://relay.example.com").count == 1)
        #expect(warnings("smtp://relay.example.com").isEmpty)
    }

    @Test("every bad setting is reported at once, one line each, naming the setting")
    func allProblems() throws {
        try Self.withFile(#"{"listen":"nowhere","apple":{"team":"x","keys_url":"http://appleid.apple.com/auth/keys"},"password":{"min_length":4},"dev":"yes","extra":1}"#) { path in
            #expect {
                try ConfigurationLoader.load(file: path, environment: ["LATCHKEY_ACCESS_TOKEN_TTL": "soon"])
            } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                let text = error.description
                return error.problems.count >= 6 && text.contains("apple.team: unknown setting") && text.contains("extra: unknown setting")
                    && text.contains("dev: must be true or false") && text.contains("password.min_length: must be between 8 and 64")
                    && text.contains("LATCHKEY_ACCESS_TOKEN_TTL: must be a whole number") && text.contains("listen: must be host:port")
            }
        }
    }

    @Test("outbound URLs must be https except on loopback")
    func outboundURLs() throws {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_APPLE_TOKEN_URL": "http://appleid.apple.com/auth/token"])
        }
        let local = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_APPLE_TOKEN_URL": "http://127.0.0.1:9/auth/token"])
        #expect(local.apple.tokenURL == "http://127.0.0.1:9/auth/token")
    }

    @Test("development mode refuses a non-loopback listen address and trusts the sandbox client id")
    func devMode() throws {
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: nil, environment: [:], dev: true, listen: "0.0.0.0:8080") }
        let dev = try ConfigurationLoader.load(file: nil, environment: [:], dev: true)
        #expect(dev.apple.clientIDs == ["com.example.app"])
    }

    @Test("an unreadable file, bad JSON and an unreadable Apple key each stop start-up with one line")
    func unreadable() throws {
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: "/nonexistent/latchkey.json", environment: [:]) }
        try Self.withFile("{\"listen\": ") { path in
            #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(file: path, environment: [:]) }
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_APPLE_PRIVATE_KEY_FILE": "/nonexistent/AuthKey.p8"])
        }
    }

    @Test("associated domains must be app ids")
    func appIDs() throws {
        let good = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_ASSOCIATED_DOMAINS_WEBCREDENTIALS": "ABCDE12345.com.example.app"])
        #expect(good.associatedDomains.webcredentials == ["ABCDE12345.com.example.app"])
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_ASSOCIATED_DOMAINS_APPLINKS": "com.example.app"])
        }
    }

    @Test("trusted proxies are addresses or networks, from the file or the environment; anything else is named")
    func trustedProxies() throws {
        try ConfigurationTests.withFile(#"{"trusted_proxies": ["10.0.0.0/8", "::1"]}"#) { path in
            let loaded = try ConfigurationLoader.load(file: path)
            #expect(loaded.trustedProxies == ["10.0.0.0/8", "::1"])
        }
        let fromEnvironment = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_TRUSTED_PROXIES": "127.0.0.1, 192.168.0.0/16"])
        #expect(fromEnvironment.trustedProxies == ["127.0.0.1", "192.168.0.0/16"])
        do {
            _ = try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal"])
            Issue.record("a host name was accepted as a trusted proxy")
        } catch {
            #expect(error.problems == ["trusted_proxies: proxy.internal is not an IP address or a network such as 10.0.0.0/8"])
        }
    }
}

@Suite("Master key")
struct MasterKeyTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-mk-\(UUID())/master.key").path
    }

    @Test("S10: development mode creates the key file with mode 0600, then reads the same key")
    func s10CreatedPrivate() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let (key, created) = try MasterKey.load(path: path, createIfMissing: true)
        #expect(created)
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let sealed = try key.seal(Array("secret".utf8), context: "t/1")
        let (again, createdAgain) = try MasterKey.load(path: path, createIfMissing: true)
        #expect(!createdAgain)
        #expect(try again.unseal(sealed, context: "t/1") == Array("secret".utf8))
    }

    @Test("S10: outside development mode a missing or group-readable key file stops start-up")
    func s10Required() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        #expect(throws: ConfigurationError.self) { try MasterKey.load(path: path, createIfMissing: false) }
        _ = try MasterKey.load(path: path, createIfMissing: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: ConfigurationError.self) { try MasterKey.load(path: path, createIfMissing: false) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        _ = try MasterKey.load(path: path, createIfMissing: false)
        try Data("too short".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigurationError.self) { try MasterKey.load(path: path, createIfMissing: false) }
    }

    @Test("S10: a sealed secret opens only with its own context and is never the plaintext")
    func s10Sealing() throws {
        let key = try MasterKey(bytes: Array(repeating: 7, count: 32))
        let secret = Array("apple-refresh-token".utf8)
        let sealed = try key.seal(secret, context: "identities/1")
        #expect(!sealed.contains(subsequence: secret))
        #expect(try key.unseal(sealed, context: "identities/1") == secret)
        #expect(throws: (any Error).self) { try key.unseal(sealed, context: "identities/2") }
        #expect(throws: (any Error).self) { try MasterKey(bytes: Array(repeating: 8, count: 32)).unseal(sealed, context: "identities/1") }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
