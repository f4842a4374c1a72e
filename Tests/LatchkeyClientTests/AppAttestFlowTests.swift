import Foundation
import LatchkeyClient
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Synchronization
import Testing

/// App Attest on Linux: ``AppAttestKeys`` played by the test double, whose keys are software
/// P-256 keys and whose attestation objects chain to a root made for the test.
final class DoubleAppAttestKeys: AppAttestKeys {
    struct UnknownKey: Error {}

    let double = AppAttestDouble()
    let appID: String
    private let keys = Mutex<[String: (key: P256.Signing.PrivateKey, counter: UInt32)]>([:])

    init(appID: String) { self.appID = appID }

    func generateKey() async throws -> String {
        let key = P256.Signing.PrivateKey()
        // Standard base64, as DCAppAttestService gives a key id.
        let keyID = Data(AppAttestDouble.keyID(of: key)).base64EncodedString()
        keys.withLock { $0[keyID] = (key, 0) }
        return keyID
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        guard let key = keys.withLock({ $0[keyID]?.key }) else { throw UnknownKey() }
        return Data(double.attest(appID: appID, clientDataHash: Array(clientDataHash), key: key).object)
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        guard let (key, counter) = keys.withLock({ state -> (P256.Signing.PrivateKey, UInt32)? in
            guard let entry = state[keyID] else { return nil }
            state[keyID]?.counter += 1
            return (entry.key, entry.counter + 1)
        }) else { throw UnknownKey() }
        return Data(AppAttestDouble.assertion(key: key, appID: appID, counter: counter, clientDataHash: Array(clientDataHash)))
    }
}

@Suite("SDK against the server: App Attest", .serialized)
struct AppAttestFlowTests {
    static let appID = "ABCDE12345.com.example.app"

    static func claims(_ token: String, part: Int) throws -> JSONValue {
        let segment = try #require(token.split(separator: ".").dropFirst(part).first)
        return try JSONValue(parsing: try #require(Base64URL.decode(segment)))
    }

    @Test("S47, S48: attestAppKey, then appCheckToken twice: ES256 app-check+jwt tokens for the app and key, the counter advancing")
    func attestAndEarnTokens() async throws {
        let keys = DoubleAppAttestKeys(appID: Self.appID)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("app-attest-root-\(UUID()).pem")
        try Data(keys.double.rootPEM.utf8).write(to: root)
        defer { try? FileManager.default.removeItem(at: root) }
        try await DevServer.with(environment: ["LATCHKEY_APP_ATTEST_APP_IDS": Self.appID, "LATCHKEY_APP_ATTEST_ROOT_CA_FILE": root.path]) { server in
            let client = server.client()
            let keyID = try await client.attestAppKey(using: keys)
            let first = try await client.appCheckToken(keyID: keyID, using: keys)
            let second = try await client.appCheckToken(keyID: keyID, using: keys)
            #expect(first.token != second.token && first.expiresAt > Date())
            for token in [first.token, second.token] {
                let header = try Self.claims(token, part: 0)
                #expect(header["typ"] == "app-check+jwt" && header["alg"] == "ES256")
                let claims = try Self.claims(token, part: 1)
                #expect(claims["sub"] == .string(Self.appID))
                #expect(claims["key_id"]?.stringValue.flatMap { Base64URL.decode($0) } == Data(base64Encoded: keyID).map(Array.init))
            }
            let unknown = await #expect(throws: LatchkeyError.self) { try await client.appCheckToken(keyID: try await keys.generateKey(), using: keys) }
            #expect(unknown?.status == 400)
        }
    }

    /// The key id kept in memory.
    final class KeptKeyID: AppAttestKeyIDStore {
        let kept: Mutex<String?>
        init(_ keyID: String? = nil) { kept = Mutex(keyID) }
        func load() -> String? { kept.withLock { $0 } }
        func save(_ keyID: String?) { kept.withLock { $0 = keyID } }
    }

    @Test("S49: with appAttest set up, sign-up, sign-in and refresh carry an app check token to a server that enforces it on all three; one key is attested, and a key the server does not know is replaced")
    func signInCallsCarryTheToken() async throws {
        let keys = DoubleAppAttestKeys(appID: Self.appID)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("app-attest-root-\(UUID()).pem")
        try Data(keys.double.rootPEM.utf8).write(to: root)
        defer { try? FileManager.default.removeItem(at: root) }
        let environment = [
            "LATCHKEY_APP_ATTEST_APP_IDS": Self.appID, "LATCHKEY_APP_ATTEST_ROOT_CA_FILE": root.path,
            "LATCHKEY_APP_ATTEST_ENFORCE": "signup,sign_in,token",
        ]
        try await DevServer.with(environment: environment) { server in
            let refused = await #expect(throws: LatchkeyError.self) { try await server.client().signUp(username: "ada", password: "correct horse battery") }
            #expect(refused?.code == .server(code: "app_check_failed") && refused?.status == 401)

            let kept = KeptKeyID()
            let client = server.client { $0.appAttest = AppAttestSetup(keys: keys, keyIDStore: kept) }
            #expect(try await client.signUp(username: "ada", password: "correct horse battery").session != nil)
            let keyID = try #require(kept.load())
            #expect(try await client.signIn(username: "ada", password: "correct horse battery").session != nil)
            _ = try await client.refresh()
            #expect(kept.load() == keyID, "the key is attested once")

            // A key id the server never saw (a restored backup, say): forgotten, and a new key attested.
            let unknown = try await keys.generateKey()
            let stale = KeptKeyID(unknown)
            let restored = server.client { $0.appAttest = AppAttestSetup(keys: keys, keyIDStore: stale) }
            #expect(try await restored.signIn(username: "ada", password: "correct horse battery").session != nil)
            #expect(stale.load() != nil && stale.load() != unknown)
        }
    }
}
