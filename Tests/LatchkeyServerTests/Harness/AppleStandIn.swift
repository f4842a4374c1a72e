import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyHTTPServer
import LatchkeyJSON
import LatchkeySandbox
import LatchkeyServer
import Synchronization

/// Apple on its own port: the sandbox served by a separate HTTP server, so a test server can be
/// configured with real `apple.*` settings (team, key file, every URL) pointing at it, exactly as
/// an operator points them at Apple.
///
/// ``outage`` makes its token and revoke endpoints answer 503 until cleared.
final class AppleStandIn: Sendable {
    let sandbox: AppleSandbox
    let keyFile: URL
    let outage = Mutex(false)
    private let server: HTTPServer

    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let clientIDs = ["com.example.app", "com.example.web"]

    private init(sandbox: AppleSandbox, keyFile: URL, server: HTTPServer) {
        self.sandbox = sandbox
        self.keyFile = keyFile
        self.server = server
    }

    var baseURL: String { "http://127.0.0.1:\(server.boundPort)" }

    /// Starts a stand-in, runs `body`, stops it.
    static func with<T>(clock: TestClock, _ body: (AppleStandIn) async throws -> T) async throws -> T {
        let key = P256.Signing.PrivateKey()
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("apple-\(UUID()).p8")
        try Data(key.pemRepresentation.utf8).write(to: keyFile)
        let sandbox = try AppleSandbox(
            developer: .init(teamID: teamID, keyID: keyID, publicKey: key.publicKey, clientIDs: clientIDs), client: EventHTTPClient(),
            clock: { clock.now }, rsaKeys: SharedRSAKeys.apple.source())
        let router = Router()
        let standIn = AppleStandIn(sandbox: sandbox, keyFile: keyFile, server: HTTPServer(configuration: {
            var configuration = HTTPServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            return configuration
        }(), responder: router))
        router.add(middleware: OutageMiddleware(standIn: standIn))
        sandbox.register(on: router, prefix: "")
        try standIn.server.start()
        defer { try? FileManager.default.removeItem(at: keyFile) }
        do {
            let result = try await body(standIn)
            await standIn.server.shutdown()
            return result
        } catch {
            await standIn.server.shutdown()
            throw error
        }
    }

    /// Points a configuration's Apple settings here.
    func configure(_ configuration: inout Configuration) {
        configuration.apple.teamID = Self.teamID
        configuration.apple.keyID = Self.keyID
        configuration.apple.privateKeyFile = keyFile.path
        configuration.apple.clientIDs = Self.clientIDs
        configuration.apple.keysURL = baseURL + "/auth/keys"
        configuration.apple.tokenURL = baseURL + "/auth/token"
        configuration.apple.revokeURL = baseURL + "/auth/revoke"
    }

    private struct OutageMiddleware: HTTPMiddleware {
        let standIn: AppleStandIn

        func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
            if standIn.outage.withLock({ $0 }), request.path != "/auth/keys" {
                return .json(["error": "temporarily_unavailable"], status: 503)
            }
            return try await next.respond(to: request)
        }
    }
}
