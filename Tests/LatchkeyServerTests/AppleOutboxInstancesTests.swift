import Foundation
import LatchkeyHTTP
import LatchkeySandbox
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Synchronization
import Testing

/// The Apple revocation outbox and the daily Apple validation with two instances on one
/// PostgreSQL: both run them at once, and Apple still hears of each revocation, and of each
/// due validation, exactly once.
@Suite("Sign in with Apple: the revocation outbox and daily validation across instances")
struct AppleOutboxInstancesTests {
    /// Two instances on one fresh PostgreSQL database and one stand-in Apple, with one clock and
    /// one master key (the Apple tokens they queue and check are sealed under it).
    static func withTwoInstances(_ body: (TestServer, TestServer, AppleStandIn, TestClock) async throws -> Void) async throws {
        let cluster = try PostgreSQLCluster.shared()
        let shared = try TemporaryDirectory()
        defer { shared.remove() }
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await PostgreSQLServerTests.withDatabase(in: cluster) { url in
                let configure = { (configuration: inout Configuration) in
                    apple.configure(&configuration)
                    configuration.database = url
                    configuration.databasePasswordFile = cluster.passwordFile
                    configuration.masterKeyFile = shared.file("master.key")
                }
                try await TestServer.with(clock: clock, configure) { first in
                    try await TestServer.with(clock: clock, configure) { second in
                        try await body(first, second, apple, clock)
                    }
                }
            }
        }
    }

    /// Six passes of the background jobs at once, three on each instance.
    static func runBackgroundJobsTogether(_ first: TestServer, _ second: TestServer) async {
        await withTaskGroup(of: Void.self) { group in
            for pass in 0..<6 {
                let instance = pass % 2 == 0 ? first : second
                group.addTask { try? await instance.application.runBackgroundJobs() }
            }
        }
    }

    @Test("S9, S28 on PostgreSQL: two instances draining the outbox at once send each revocation to Apple once")
    func eachRevocationSentOnce() async throws {
        try await Self.withTwoInstances { first, second, apple, clock in
            let users = 8
            var subjects: Set<String> = []
            var accessTokens: [String] = []
            for index in 0..<users {
                let (response, credential) = try await AppleFlow.signIn(
                    first, sandbox: apple.sandbox, subject: "outbox-\(index)", email: "outbox\(index)@privaterelay.appleid.com")
                #expect(response.status == 200, "\(response.text)")
                subjects.insert(credential.subject)
                accessTokens.append(try response.tokens.accessToken)
            }
            // Apple is down while the accounts are deleted: every revocation waits in the outbox.
            apple.outage.withLock { $0 = true }
            for access in accessTokens {
                #expect(try await first.request(.delete, "/v1/me", headers: ["Authorization": "Bearer \(access)"]).status == 204)
            }
            func attempted() async throws -> Int64 {
                try await first.database.read {
                    try $0.queryOne("SELECT count(*) AS n FROM outbox WHERE kind = 'apple_revocation' AND attempts >= 1", [])!.int("n")
                }
            }
            for _ in 0..<250 where try await attempted() < users { try await Task.sleep(for: .milliseconds(20)) }
            #expect(try await attempted() == Int64(users), "each deletion tried Apple once in the background and failed")
            #expect(apple.sandbox.revocations.isEmpty)

            // Apple is back and every retry is due: both instances drain at once, three passes each.
            apple.outage.withLock { $0 = false }
            clock.advance(by: 3600)
            await Self.runBackgroundJobsTogether(first, second)
            let sent = apple.sandbox.revocations.compactMap(\.subject)
            #expect(sent.count == users, "one revocation per deleted account reached Apple: \(sent.sorted())")
            #expect(Set(sent) == subjects, "each account's token, none twice")
            #expect(try await second.database.read { try $0.queryOne("SELECT count(*) AS n FROM outbox WHERE kind = 'apple_revocation'", [])!.int("n") } == 0)
        }
    }

    @Test("S9 on PostgreSQL: two instances running the daily Apple validation at once check each due identity once")
    func eachValidationOnce() async throws {
        try await Self.withTwoInstances { first, second, apple, clock in
            let users = 12
            for index in 0..<users {
                let (response, _) = try await AppleFlow.signIn(
                    first, sandbox: apple.sandbox, subject: "validate-\(index)", email: "validate\(index)@privaterelay.appleid.com")
                #expect(response.status == 200, "\(response.text)")
            }
            let before = apple.sandbox.tokenRequests
            // A day later every identity is due once.
            clock.advance(by: 86_400 + 1)
            await Self.runBackgroundJobsTogether(first, second)
            #expect(apple.sandbox.tokenRequests - before == users, "one check per identity, whichever instance claimed it")
        }
    }
}
