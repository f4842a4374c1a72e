import Foundation
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Two server processes' worth of state on one SQLite file: a key rotated through one reaches
/// the other through `PRAGMA data_version`, within seconds rather than the 30-second re-read.
/// PostgreSQLServerTests proves the same over `NOTIFY`/`LISTEN`.
@Suite("Signing keys: a rotation reaches every instance on SQLite")
struct SigningKeyChangeFeedTests {
    @Test("S10 on SQLite: a key rotated through one instance is in the other's JWKS within 2 s")
    func rotationReachesOtherInstance() async throws {
        let shared = try TemporaryDirectory()
        defer { shared.remove() }
        let configure = { (configuration: inout Configuration) in
            configuration.database = "sqlite:" + shared.file("latchkey.sqlite")
            configuration.masterKeyFile = shared.file("master.key")
        }
        try await TestServer.with(configure) { first in
            try await TestServer.with(configure) { second in
                // The first poll of data_version sets the baseline.
                try await Task.sleep(for: .milliseconds(1200))
                let rotated = try await second.application.signingKeys.rotate(activationDelay: 900, now: second.clock.now)
                let published = try await eventually(within: .seconds(2)) {
                    try await first.request(.get, "/.well-known/jwks.json").text.contains(rotated.id)
                }
                #expect(published, "the rotated key is in the other instance's JWKS within 2 s")
            }
        }
    }
}
