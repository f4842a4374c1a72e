import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeySandbox
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// Apple's key set as the stand-in publishes it, with unusable members added after its keys,
/// served on a port of its own so `apple.keys_url` can point at it. Each fetch reads the
/// stand-in's set, so `sandbox.keyRequests` still counts the fetches.
final class MixedAppleKeys: Sendable {
    private let server: HTTPServer
    var url: String { "http://127.0.0.1:\(server.boundPort)/auth/keys" }

    private init(server: HTTPServer) { self.server = server }

    static func with<T>(_ sandbox: AppleSandbox, adding members: [String], _ body: (MixedAppleKeys) async throws -> T) async throws -> T {
        let extra = try members.map { try JSONValue(parsing: Array($0.utf8)) }
        let router = Router()
        router.get("/auth/keys", synchronous: { _ in .json(["keys": .array((sandbox.jwks["keys"]?.arrayValue ?? []) + extra)]) })
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let keys = MixedAppleKeys(server: HTTPServer(configuration: configuration, responder: router))
        try keys.server.start()
        do {
            let result = try await body(keys)
            await keys.server.shutdown()
            return result
        } catch {
            await keys.server.shutdown()
            throw error
        }
    }
}

@Suite("Sign in with Apple: a key set with unusable keys")
struct AppleKeySetTests {
    /// `token` with its header's `kid` replaced: signature and claims untouched.
    static func naming(_ keyID: String, _ token: String) throws -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let decoded = try #require(Base64URL.decode(parts[0]))
        var header = try #require(try JSONValue(parsing: decoded).objectValue)
        header["kid"] = .string(keyID)
        return ([Base64URL.encode(JSONValue.object(header).serialized)] + parts.dropFirst().map(String.init)).joined(separator: ".")
    }

    /// Posts a fresh sandbox identity token to `/v1/auth/apple`, its header naming `keyID`.
    static func signIn(naming keyID: String, at baseURL: String, sandbox: AppleSandbox) async throws -> (status: Int, body: [UInt8]) {
        let nonce = AppleFlow.nonce()
        let credential = try sandbox.authorize(.init(nonce: nonce.hashed))
        var request = URLRequest(url: URL(string: baseURL + "/v1/auth/apple")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let json: JSONValue = ["identity_token": .string(try naming(keyID, credential.identityToken)), "nonce": .string(nonce.raw)]
        request.httpBody = Data(json.serialized)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as! HTTPURLResponse).statusCode, Array(data))
    }

    @Test("S30: Apple's JWKS also lists a 1024-bit RSA key, a P-521 key and a malformed member; the good key signs in, a token naming a skipped key is 401 with the reason, /metrics counts them")
    func s30MixedAppleKeySet() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await MixedAppleKeys.with(apple.sandbox, adding: UnusableJWKs.all.map(\.json)) { keys in
                try await TestServer.with(clock: clock, { configuration in
                    apple.configure(&configuration)
                    configuration.apple.keysURL = keys.url
                }) { server in
                    // The good key: the whole sign-in works.
                    let (response, credential) = try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false)
                    #expect(response.status == 200, "\(response.text)")
                    let body = try response.tokens
                    #expect(body.created)
                    #expect(body.user.email == "ada@privaterelay.appleid.com")
                    let userID = body.user.id
                    #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users WHERE id = ?", [.text(userID)]) == 1)
                    #expect(try await AppleFlow.count(
                        server, "SELECT count(*) AS n FROM identities WHERE subject = ? AND user_id = ?", [.text(credential.subject), .text(userID)]) == 1)
                    #expect(try await AppleFlow.count(
                        server, "SELECT count(*) AS n FROM audit_log WHERE event = 'sign_in' AND outcome = 'success' AND user_id = ?", [.text(userID)]) == 1)
                    #expect(apple.sandbox.keyRequests == 1)

                    // A token naming a skipped key: 401 naming the kid check and the reason, and nothing created.
                    for (_, keyID, reason) in UnusableJWKs.all {
                        let refused = try await Self.signIn(naming: keyID, at: server.baseURL, sandbox: apple.sandbox)
                        #expect(refused.status == 401, "\(keyID)")
                        let refusal = try WireErrorBody(parsing: refused.body)
                        #expect(refusal.error == .invalidIdentityToken)
                        let description = refusal.errorDescription
                        #expect(description.hasPrefix("kid: "), "\(description)")
                        #expect(description.contains("skipped as unusable (\(reason):"), "\(description)")
                    }
                    #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 1)
                    #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'sign_in' AND outcome = 'failure'") == 3)

                    // S6 still holds: a skipped kid is known, so even a minute later it causes no refetch.
                    clock.advance(by: 61)
                    for _ in 0..<3 {
                        #expect(try await Self.signIn(naming: "kid-weak-rsa-1024", at: server.baseURL, sandbox: apple.sandbox).status == 401)
                    }
                    #expect(apple.sandbox.keyRequests == 1, "S6: no refetch storm for a skipped kid")
                    #expect(try await AppleFlow.signIn(server, sandbox: apple.sandbox, exchange: false).response.status == 200)

                    // Counted once per fetch, by reason; the kids (document data) are in no label.
                    let metrics = try await server.request(.get, "/metrics").text
                    #expect(metrics.contains("# TYPE latchkey_jwks_keys_skipped_total counter"))
                    for (_, keyID, reason) in UnusableJWKs.all {
                        #expect(metrics.contains(#"latchkey_jwks_keys_skipped_total{source="apple",reason="\#(reason)"} 1"#), "\(reason)")
                        #expect(!metrics.contains(keyID))
                    }
                }
            }
        }
    }

    @Test("S30: latchkey serve logs each skipped Apple key on stderr as a JSON line with kid and reason, and no key material")
    func s30SkippedKeysLogged() async throws {
        let clock = TestClock()
        try await AppleStandIn.with(clock: clock) { apple in
            try await MixedAppleKeys.with(apple.sandbox, adding: UnusableJWKs.all.map(\.json)) { keys in
                let directory = try ServeTests.temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                var configuration = Configuration()
                apple.configure(&configuration)
                let server = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory, environment: [
                    "LATCHKEY_APPLE_TEAM_ID": configuration.apple.teamID, "LATCHKEY_APPLE_KEY_ID": configuration.apple.keyID,
                    "LATCHKEY_APPLE_PRIVATE_KEY_FILE": configuration.apple.privateKeyFile,
                    "LATCHKEY_APPLE_CLIENT_IDS": configuration.apple.clientIDs.joined(separator: ","),
                    "LATCHKEY_APPLE_KEYS_URL": keys.url, "LATCHKEY_APPLE_TOKEN_URL": configuration.apple.tokenURL,
                    "LATCHKEY_APPLE_REVOKE_URL": configuration.apple.revokeURL,
                ])
                defer { server.stop() }
                let goodKeyID = try #require(Insecure.unverifiedContents(of: try apple.sandbox.authorize(.init()).identityToken).header["kid"]?.stringValue)
                #expect(try await Self.signIn(naming: goodKeyID, at: server.baseURL, sandbox: apple.sandbox).status == 200)
                let refused = try await Self.signIn(naming: "kid-p521", at: server.baseURL, sandbox: apple.sandbox)
                #expect(try WireErrorBody(parsing: refused.body).errorDescription.contains("unsupported_curve"))

                // Raw JSON: the server's log lines, not wire bodies.
                let lines = server.errors.split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8)) }
                let skipped = lines.filter { $0["event"] == "jwks_key_skipped" }
                #expect(skipped.count == 3, "\(server.errors)")
                for (_, keyID, reason) in UnusableJWKs.all {
                    let line = skipped.first { $0["kid"]?.stringValue == keyID }
                    #expect(line?["reason"]?.stringValue == reason, "\(keyID)")
                    #expect(line?["source"] == "apple")
                    #expect(line?["level"] == "warning")
                }
                let weakModulus = try #require(JSONValue(parsing: Array(UnusableJWKs.weakRSA.utf8))["n"]?.stringValue)
                #expect(!server.errors.contains(weakModulus.prefix(24)), "S26: no key material in the log")
            }
        }
    }
}
