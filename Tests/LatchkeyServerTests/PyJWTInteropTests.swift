import Foundation
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// The Python with PyJWT that `make test` prepared.
let interopPython = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"]

/// Another service verifying our access tokens offline, with PyJWT against our JWKS URL.
@Suite("Access tokens in PyJWT", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct PyJWTInteropTests {
    static let fixtures = Fixtures(bundle: .module)

    static func verify(_ server: TestServer, _ token: String, audience: String? = nil) throws -> Subprocess.Result {
        try Subprocess.run(
            URL(fileURLWithPath: try #require(interopPython)),
            [try fixtures.url("verify_access_token.py").path, server.baseURL + "/.well-known/jwks.json", token, server.baseURL, audience ?? server.baseURL])
    }

    @Test("PyJWT verifies our access token against the JWKS, refuses a wrong aud and a key that left the JWKS")
    func pyjwt() async throws {
        try await TestServer.with({ $0.accessTokenTTL = 600 }) { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let accepted = try Self.verify(server, token.accessToken)
            #expect(accepted.status == 0, "\(accepted.output)")
            #expect(accepted.output.contains(user.id))

            let wrongAudience = try Self.verify(server, token.accessToken, audience: "https://other.example")
            #expect(wrongAudience.status == 1)
            #expect(wrongAudience.output.contains("InvalidAudience"))

            // Rotate, let the old key retire and leave the JWKS: its tokens no longer verify.
            let keys = server.application.signingKeys
            _ = try await keys.rotate(activationDelay: 0, now: server.clock.now)
            server.clock.advance(by: 600 + 61)
            try await keys.reload(now: server.clock.now)
            let gone = try Self.verify(server, token.accessToken)
            #expect(gone.status == 1)
            #expect(gone.output.contains("PyJWKClientError") || gone.output.contains("Unable to find"), "\(gone.output)")
        }
    }
}
