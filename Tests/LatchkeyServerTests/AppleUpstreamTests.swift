import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeySandbox
import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Synchronization
import Testing

/// Latchkey configured like production, with every `apple.*` setting pointing at an Apple
/// stand-in on its own port: keys, code exchange, revocation, outages.
@Suite("Sign in with Apple: talking to Apple")
struct AppleUpstreamTests {
    @Test("every apple URL in the configuration is honoured: keys, code exchange and revocation reach the configured server")
    func configuredURLs() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await TestServer.with(clock: clock, { apple.configure(&$0) }) { server in
                let (response, credential) = try await AppleFlow.signIn(server, sandbox: apple.sandbox, names: ("Ada", "Lovelace"))
                #expect(response.status == 200)
                #expect(apple.sandbox.keyRequests == 1)
                #expect(apple.sandbox.tokenRequests == 1, "the code was exchanged at token_url")
                let access = try response.tokens.accessToken
                let deleted = try await server.request(.delete, "/v1/me", headers: ["Authorization": "Bearer \(access)"])
                #expect(deleted.status == 204)
                // The deletion sends its revocation in the background at once; wait for it.
                for _ in 0..<100 where apple.sandbox.revocations.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
                #expect(apple.sandbox.revocations.map(\.subject) == [credential.subject], "revoked at revoke_url")
                #expect(apple.sandbox.revocations.first?.clientID == "com.example.app")
            }
        }
    }

    @Test("outside development mode the sandbox is not mounted: its paths are 404")
    func sandboxOnlyInDevelopment() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await TestServer.with(clock: clock, { configuration in
                apple.configure(&configuration)
                configuration.dev = false
                try? Data(SecureRandom.bytes(count: 32)).write(to: URL(fileURLWithPath: configuration.masterKeyFile))
                chmod(configuration.masterKeyFile, 0o600)
            }) { server in
                #expect(server.application.sandbox == nil)
                for (method, path) in [(HTTPMethod.get, "/sandbox/apple/auth/keys"), (.post, "/sandbox/apple/authorize"), (.post, "/sandbox/apple/notify")] {
                    let response = try await server.request(method, path, json: method == .get ? nil : [:])
                    #expect(response.status == 404, "\(path)")
                }
                #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox).response.status == 200, "the configured Apple still works")
            }
        }
    }

    @Test("S6: Apple rotates its keys mid-run and sign-ins keep working; an unknown kid refetches at most once a minute")
    func s6KeyRotation() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await TestServer.with(clock: clock, { apple.configure(&$0) }) { server in
                #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response.status == 200)
                #expect(apple.sandbox.keyRequests == 1)

                // A new key signs from now on. Within the minute, its kid is unknown and no refetch happens.
                try apple.sandbox.rotateKeys()
                let early = try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response
                #expect(early.status == 401)
                #expect(try early.wireError.errorDescription.hasPrefix("kid:"))
                #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response.status == 401)
                #expect(apple.sandbox.keyRequests == 1, "S6: no refetch within a minute of the last")

                // A minute later, one refetch finds it; later tokens need none.
                clock.advance(by: 61)
                for _ in 0..<3 {
                    #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response.status == 200)
                }
                #expect(apple.sandbox.keyRequests == 2)

                // The old key leaves Apple's set; tokens signed with the new one still pass.
                try apple.sandbox.rotateKeys(dropOldest: true)
                clock.advance(by: 61)
                #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response.status == 200)
                #expect(apple.sandbox.keyRequests == 3)
            }
        }
    }

    @Test("S28: when Apple fails or times out during the code exchange, the answer is a clear 503 and nothing is created")
    func s28AppleDown() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await TestServer.with(clock: clock, { apple.configure(&$0) }) { server in
                apple.outage.withLock { $0 = true }
                let (down, _) = try await AppleFlow.signIn(server, sandbox: apple.sandbox)
                #expect(down.status == 503)
                #expect(try down.wireError.error == .appleUnavailable)
                #expect(down.headers["Retry-After"] != nil)
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM sessions") == 0)
                apple.outage.withLock { $0 = false }

                // A code Apple refuses (already used) is the app's problem: invalid_grant.
                let (first, credential) = try await AppleFlow.signIn(server, sandbox: apple.sandbox)
                #expect(first.status == 200)
                let nonce = AppleFlow.nonce()
                let again = try apple.sandbox.authorize(.init(subject: credential.subject, nonce: nonce.hashed))
                let used = try await server.request(.post, "/v1/auth/apple", json: [
                    "identity_token": .string(again.identityToken), "authorization_code": .string(credential.authorizationCode),
                    "nonce": .string(nonce.raw),
                ])
                #expect(used.status == 400)
                #expect(try used.wireError.error == .invalidGrant)
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM sessions") == 1, "only the first sign-in's")
            }
            // Apple that never answers: the configured timeout ends the wait.
            try await TestServer.with(clock: clock, appleTimeout: .milliseconds(500), { configuration in
                apple.configure(&configuration)
                configuration.apple.tokenURL = "http://127.0.0.1:\(Self.silentPort)/auth/token"
            }) { server in
                let started = ContinuousClock.now
                let (response, _) = try await AppleFlow.signIn(server, sandbox: apple.sandbox)
                #expect(response.status == 503)
                #expect(ContinuousClock.now - started < .seconds(5))
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
            }
        }
    }

    @Test("S28: an authorization code on a server with no Apple team key is 503 apple_unavailable with Retry-After, and nothing is created")
    func s28CodeExchangeNotConfigured() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await TestServer.with(clock: clock, { configuration in
                apple.configure(&configuration)
                configuration.dev = false
                configuration.apple.teamID = ""
                configuration.apple.keyID = ""
                configuration.apple.privateKeyFile = ""
                try? Data(SecureRandom.bytes(count: 32)).write(to: URL(fileURLWithPath: configuration.masterKeyFile))
                chmod(configuration.masterKeyFile, 0o600)
            }) { server in
                let (response, _) = try await AppleFlow.signIn(server, sandbox: apple.sandbox)
                #expect(response.status == 503)
                #expect(try response.wireError.error == .appleUnavailable)
                #expect(try response.wireError.errorDescription.contains("apple.team_id"))
                #expect(response.headers["Retry-After"].flatMap { Int($0) }.map { $0 > 0 } == true)
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
                #expect(apple.sandbox.tokenRequests == 0, "nothing was sent to Apple")
                // Without a code there is nothing to exchange, and the sign-in works.
                #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response.status == 200)
            }
        }
    }

    /// A port that accepts connections and never answers: a listening socket nobody reads.
    static let silentPort: Int = {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(socket, $0, length) }
        }
        _ = listen(socket, 16)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }()

    @Test("S9: account deletion survives an Apple outage and a restart; the revocation is sent once Apple is back")
    func s9DeletionOutbox() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-outbox-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = TestServer.configuration(in: directory)
            apple.configure(&configuration)

            // First life: sign in, then delete while Apple is down.
            let first = try await LatchkeyApplication.open(configuration: configuration, accessLog: false, clock: { clock.now })
            try first.start()
            let subject: String
            do {
                let server = TestServer.attached(first, clock: clock, directory: directory)
                let (response, credential) = try await AppleFlow.signIn(server, sandbox: apple.sandbox)
                subject = credential.subject
                let tokens = try response.tokens
                let access = tokens.accessToken
                let userID = tokens.user.id
                apple.outage.withLock { $0 = true }
                #expect(try await server.request(.delete, "/v1/me", headers: ["Authorization": "Bearer \(access)"]).status == 204)
                #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(access)"]).status == 401, "ended at once")
                // The deletion tries Apple at once in the background; wait for that attempt.
                var row = try await first.database.read { try $0.queryOne("SELECT attempts, last_error FROM outbox WHERE kind = 'apple_revocation'", [])! }
                for _ in 0..<100 where try row.int("attempts") == 0 {
                    try await Task.sleep(for: .milliseconds(20))
                    row = try await first.database.read { try $0.queryOne("SELECT attempts, last_error FROM outbox WHERE kind = 'apple_revocation'", [])! }
                }
                #expect(try row.int("attempts") >= 1)
                #expect(row.optionalString("last_error")?.contains("503") == true)
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
                #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM identities") == 0)
                let entries = try await AuditLog(database: first.database).entries(userID: userID, limit: 100)
                #expect(entries.contains { $0.event.rawValue == "account.deleted" })
                #expect(entries.allSatisfy { $0.ip == nil && $0.details.isEmpty || $0.event.rawValue == "account.deleted" }, "personal data gone from the audit log")
            }
            await first.shutdown()
            #expect(apple.sandbox.revocations.isEmpty)

            // Second life: Apple is back; the outbox row survived and is sent.
            apple.outage.withLock { $0 = false }
            clock.advance(by: 3600)
            let second = try await LatchkeyApplication.open(configuration: configuration, accessLog: false, clock: { clock.now })
            try second.start()
            try await second.runBackgroundJobs()
            #expect(apple.sandbox.revocations.map(\.subject) == [subject])
            #expect(try await second.database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox WHERE kind = 'apple_revocation'", [])!.int("n") } == 0)
            await second.shutdown()
        }
    }
}
