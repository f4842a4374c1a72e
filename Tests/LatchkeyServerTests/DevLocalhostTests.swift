import Foundation
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// `make run` (`latchkey serve --dev` on the default address) names itself
/// `http://localhost:8080`, so a browser on the same machine can register and use passkeys on
/// it: WebAuthn has no RP ID for 127.0.0.1.
@Suite("Development server on localhost")
struct DevLocalhostTests {
    @Test("plain serve --dev names itself http://localhost:8080 with passkeys on for RP ID localhost; a chosen address, --lan or public_url are left alone")
    func naming() throws {
        let plain = try ConfigurationLoader.load(file: nil, environment: [:], dev: true)
        #expect(plain.publicURL == "http://localhost:8080")
        #expect(plain.listen == "127.0.0.1:8080", "the socket stays on the IPv4 loopback address")
        #expect(plain.relyingParty(publicURL: try #require(plain.publicURL))
            == Configuration.RelyingParty(id: "localhost", name: "Latchkey", origins: ["http://localhost:8080", "https://localhost"]),
            "the browser on this machine, and an app with webcredentials:localhost")

        // What tests and scripts start (127.0.0.1:0) keeps naming the bound address.
        #expect(try ConfigurationLoader.load(file: nil, environment: [:], dev: true, listen: "127.0.0.1:0").publicURL == nil)
        #expect(try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_LISTEN": "127.0.0.1:9000"], dev: true).publicURL == nil)
        #expect(try ConfigurationLoader.load(file: nil, environment: [:], dev: true, publicURL: "http://localhost:9999").publicURL == "http://localhost:9999")
        #expect(try ConfigurationLoader.load(file: nil, environment: [:], dev: true, lan: true, lanAddresses: ["192.168.1.20"]).publicURL
            == "http://192.168.1.20:8080")
        #expect(try ConfigurationLoader.load(file: nil, environment: [:]).publicURL == nil, "outside development mode nothing is named for the operator")
    }

    @Test("on the default development configuration a passkey registers for RP ID localhost from the origin http://localhost:8080")
    func registersOnLocalhost() async throws {
        let plain = try ConfigurationLoader.load(file: nil, environment: [:], dev: true)
        // The test binds a free port; the name and the passkey settings are the default's.
        try await TestServer.with({
            $0.publicURL = plain.publicURL
            $0.passkeys = plain.passkeys
        }) { server in
            #expect(server.baseURL == "http://localhost:8080")
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let (flowID, challenge, publicKey) = try await PasskeyRegistrationTests.options(server, token)
            #expect(publicKey["rp"]?["id"] == "localhost")
            let authenticator = SoftwareAuthenticator.es256()
            let response = try await PasskeyRegistrationTests.register(
                server, token, flowID: flowID, try authenticator.registration(challenge: challenge, origin: "http://localhost:8080", rpID: "localhost"))
            #expect(response.status == 201, "\(response.text)")
            // 127.0.0.1 is not an origin of it.
            let (secondFlow, secondChallenge, _) = try await PasskeyRegistrationTests.options(server, token)
            let refused = try await PasskeyRegistrationTests.register(
                server, token, flowID: secondFlow,
                try SoftwareAuthenticator.es256().registration(challenge: secondChallenge, origin: "http://127.0.0.1:8080", rpID: "localhost"))
            #expect(try refused.decode(WireErrorBody.self).reason == "origin_mismatch")
        }
    }

    @Test("a desktop browser (headless Chromium, virtual platform authenticator) registers a passkey on a development server at http://localhost:PORT")
    func browserRegistersOnLocalhost() async throws {
        let python = try HeadlessChromium.requireInstalled()
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A free port named localhost: what `make run` serves at 8080, which may be taken here.
        let server = try await ServerProcess.start(["serve", "--dev", "--listen", "localhost:0"], in: directory)
        defer { server.stop() }
        let base = server.baseURL
        #expect(base.hasPrefix("http://localhost:"), "\(server.banner)")
        let input: JSONValue = [
            "base": .string(base), "chromium": .string(HeadlessChromium.chromium), "chromedriver": .string(HeadlessChromium.chromedriver),
            "username": "ada@example.com",
        ]
        let result = try await Subprocess.runDetached(
            python, [try HeadlessChromium.fixtures.url("localhost_passkey.py").path], input: input.serializedString)
        let output = try #require(try? JSONValue(parsing: Array(result.output.utf8)), "localhost_passkey.py exited \(result.status): \(result.error.suffix(2000))")
        #expect(output["failed"] == nil, "\(output)")
        #expect(output["origin"]?.stringValue == base)
        #expect(output["rp"]?["id"] == "localhost")
        #expect(output["status"] == .number(201), "\(output)")
        #expect(output["body"]?["name"] == "Passkey")
        #expect(output["body"]?["transports"] == ["internal"])
    }
}
