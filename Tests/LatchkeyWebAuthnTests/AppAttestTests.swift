import Foundation
import LatchkeyCrypto
import LatchkeyJSON
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The App Attest verifier against recorded attestations and assertions (Apple's published
/// sample, node-app-attest's device recordings; Vectors/SOURCE.md) and against the test double,
/// which gets one piece wrong per test.
@Suite("App Attest verifier")
struct AppAttestTests {
    static let appID = "ABCDE12345.com.example.app"

    static func bytes(_ value: JSONValue?) throws -> [UInt8] { try RecordedVectorTests.bytes(value) }
    static func outcome(_ body: () throws -> Void) -> String { RecordedVectorTests.outcome(body) }

    @Test("the shipped root is Apple App Attestation Root CA by its SHA-256 fingerprint")
    func appleRoot() {
        let root = AppAttest.appleRoot()
        #expect(HashFunction.sha256.hash(root.derRepresentation).hex == AppAttest.appleRootSHA256)
        #expect(root.subjectAttributes.first { $0.oid == "2.5.4.3" }?.value == "Apple App Attestation Root CA")
    }

    /// Each case gives its `clientDataHash`. Apple's sample (from its "Attestation Object
    /// Validation Guide", challenge `test_server_challenge`) uses the 21 bytes of the challenge
    /// themselves as `clientDataHash`, not their SHA-256; node-app-attest's recordings, like
    /// Latchkey's apps, use SHA-256 of the challenge bytes.
    @Test("recorded attestations and assertions give the expected outcome; executed + skipped == numberOfTests")
    func vectors() throws {
        let document = try JSONValue(parsing: Array(try Vectors.data(named: "app_attest_vectors.json")))
        let total = try #require(document["numberOfTests"]?.numberValue)
        let cases = try #require(document["testCases"]?.arrayValue)
        var executed = 0
        let skipped = 0
        var accepted = 0
        for test in cases {
            let name = "#\(test["tcId"]?.numberValue.map { Int($0) } ?? 0) \(test["comment"]?.stringValue ?? "")"
            let expected = try #require(test["expected"]?.stringValue)
            let clientDataHash = try Self.bytes(test["clientDataHash"])
            let actual: String
            switch test["kind"]?.stringValue {
            case "attestation":
                let text = try #require(test["time"]?.stringValue)
                let time = try #require(ISO8601DateFormatter().date(from: text))
                let environment = try #require(AppAttestEnvironment(rawValue: test["environment"]?.stringValue ?? ""))
                let policy = AppAttestPolicy(
                    appIDs: try #require(test["appIDs"]?.arrayValue).compactMap(\.stringValue), environment: environment,
                    roots: [AppAttest.appleRoot()])
                let keyID = try Self.bytes(test["keyID"])
                actual = Self.outcome {
                    let key = try AppAttest.verifyAttestation(
                        try Self.bytes(test["attestation"]), keyID: keyID, clientDataHash: clientDataHash, policy: policy, at: time)
                    #expect(key.keyID == keyID && HashFunction.sha256.hash(key.publicKey) == keyID, "\(name)")
                    #expect(!key.receipt.isEmpty, "\(name)")
                }
            case "assertion":
                actual = Self.outcome {
                    let counter = try AppAttest.verifyAssertion(
                        try Self.bytes(test["assertion"]), publicKey: try Self.bytes(test["publicKey"]), clientDataHash: clientDataHash,
                        appID: try #require(test["appID"]?.stringValue),
                        previousCounter: UInt32(try #require(test["previousCounter"]?.numberValue)))
                    #expect(Double(counter) == test["counter"]?.numberValue, "\(name)")
                }
            default:
                Issue.record("\(name): unknown kind")
                continue
            }
            #expect(actual == expected, "\(name)")
            if actual == "accepted" { accepted += 1 }
            executed += 1
        }
        #expect(Double(executed + skipped) == total)
        #expect(accepted == 4)
    }

    // MARK: - The test double, one wrong piece per test

    let double = AppAttestDouble()
    let clientDataHash = HashFunction.sha256.hash(Array("a server challenge".utf8))
    var policy: AppAttestPolicy { AppAttestPolicy(appIDs: [Self.appID], environment: .production, roots: [double.root]) }

    func verify(_ attestation: AppAttestDouble.Attestation, keyID: [UInt8]? = nil, policy: AppAttestPolicy? = nil) -> String {
        Self.outcome {
            _ = try AppAttest.verifyAttestation(
                attestation.object, keyID: keyID ?? attestation.keyID, clientDataHash: clientDataHash, policy: policy ?? self.policy, at: Date())
        }
    }

    @Test("the double's attestation verifies, in either environment, with extensions after the key")
    func doubleAccepted() throws {
        let attestation = double.attest(appID: Self.appID, clientDataHash: clientDataHash)
        let key = try AppAttest.verifyAttestation(attestation.object, keyID: attestation.keyID, clientDataHash: clientDataHash, policy: policy, at: Date())
        #expect(key.publicKey == attestation.key.publicKey.x963Representation)
        #expect(key.appID == Self.appID && key.environment == .production)
        var development = policy
        development.environment = .development
        development.appIDs = ["OTHER12345.com.example.other", Self.appID]
        #expect(verify(double.attest(appID: Self.appID, environment: .development, clientDataHash: clientDataHash), policy: development) == "accepted")
        var tampering = AppAttestDouble.Tampering()
        tampering.extensions = .map([CBORMapEntry(.text("example"), .bool(true))])
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash, tampering: tampering)) == "accepted")
    }

    @Test("a nonce extension that does not hold SHA-256(authData ‖ clientDataHash) is refused")
    func wrongNonce() {
        var tampering = AppAttestDouble.Tampering()
        tampering.nonce = HashFunction.sha256.hash([1, 2, 3])
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash, tampering: tampering)) == "nonce_mismatch")
        let attestation = double.attest(appID: Self.appID, clientDataHash: HashFunction.sha256.hash(Array("another challenge".utf8)))
        #expect(verify(attestation) == "nonce_mismatch")
    }

    @Test("a chain to another root is refused, and so is Apple's root for the double's chain")
    func anotherRoot() {
        let attestation = AppAttestDouble().attest(appID: Self.appID, clientDataHash: clientDataHash)
        #expect(verify(attestation) == "untrusted_attestation")
        var apple = policy
        apple.roots = [AppAttest.appleRoot()]
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash), policy: apple) == "untrusted_attestation")
    }

    @Test("an attestation for another app id is refused")
    func anotherApp() {
        #expect(verify(double.attest(appID: "ABCDE12345.com.example.other", clientDataHash: clientDataHash)) == "rp_id_mismatch")
    }

    @Test("an attestation whose counter is not 0 is refused")
    func counterNotZero() {
        var tampering = AppAttestDouble.Tampering()
        tampering.counter = 1
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash, tampering: tampering)) == "counter_mismatch")
    }

    @Test("the AAGUID of the other environment, or of neither, is refused")
    func wrongAAGUID() {
        #expect(verify(double.attest(appID: Self.appID, environment: .development, clientDataHash: clientDataHash)) == "environment_mismatch")
        var development = policy
        development.environment = .development
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash), policy: development) == "environment_mismatch")
        var tampering = AppAttestDouble.Tampering()
        tampering.aaguid = Array("appattestdevelo\0".utf8)
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash, tampering: tampering)) == "environment_mismatch")
    }

    @Test("a key id that is not SHA-256 of the point, or a credential id that is not the key id, is refused")
    func keyIDMismatch() {
        let attestation = double.attest(appID: Self.appID, clientDataHash: clientDataHash)
        // SHA-256 of the SubjectPublicKeyInfo is a common mistake; the key id hashes the point.
        let spkiHash = HashFunction.sha256.hash(attestation.key.publicKey.derRepresentation)
        #expect(verify(attestation, keyID: spkiHash) == "key_id_mismatch")
        var tampering = AppAttestDouble.Tampering()
        tampering.credentialID = HashFunction.sha256.hash([9])
        #expect(verify(double.attest(appID: Self.appID, clientDataHash: clientDataHash, tampering: tampering)) == "key_id_mismatch")
    }

    @Test("malformed, truncated and oversized attestations are refused as malformed, never a crash")
    func malformedAttestations() {
        let attestation = double.attest(appID: Self.appID, clientDataHash: clientDataHash)
        for length in stride(from: 0, to: attestation.object.count, by: 97) {
            let truncated = Array(attestation.object.prefix(length))
            #expect(verify(AppAttestDouble.Attestation(key: attestation.key, keyID: attestation.keyID, object: truncated)) == "malformed")
        }
        let oversized = attestation.object + [UInt8](repeating: 0, count: 70_000)
        #expect(verify(AppAttestDouble.Attestation(key: attestation.key, keyID: attestation.keyID, object: oversized)) == "malformed")
        var mutator = Mutator(seed: 32)
        for _ in 0..<300 {
            let mutated = mutator.mutate(attestation.object)
            let outcome = verify(AppAttestDouble.Attestation(key: attestation.key, keyID: attestation.keyID, object: mutated))
            #expect(!outcome.hasPrefix("unexpected"))
        }
    }

    @Test("an assertion verifies with a greater counter; a replay, an older counter, another key or app is refused")
    func assertions() {
        let key = P256.Signing.PrivateKey()
        let point = key.publicKey.x963Representation
        func check(_ assertion: [UInt8], previous: UInt32, appID: String = Self.appID, publicKey: [UInt8]? = nil) -> String {
            Self.outcome {
                _ = try AppAttest.verifyAssertion(
                    assertion, publicKey: publicKey ?? point, clientDataHash: clientDataHash, appID: appID, previousCounter: previous)
            }
        }
        let first = AppAttestDouble.assertion(key: key, appID: Self.appID, counter: 1, clientDataHash: clientDataHash)
        #expect(check(first, previous: 0) == "accepted")
        #expect(check(first, previous: 1) == "counter_mismatch")
        let older = AppAttestDouble.assertion(key: key, appID: Self.appID, counter: 4, clientDataHash: clientDataHash)
        #expect(check(older, previous: 5) == "counter_mismatch")
        #expect(check(first, previous: 0, publicKey: P256.Signing.PrivateKey().publicKey.x963Representation) == "bad_signature")
        let otherApp = AppAttestDouble.assertion(key: key, appID: "ABCDE12345.com.example.other", counter: 2, clientDataHash: clientDataHash)
        #expect(check(otherApp, previous: 0) == "rp_id_mismatch")
        for length in 0..<first.count {
            #expect(check(Array(first.prefix(length)), previous: 0) != "accepted")
        }
        #expect(check(first + [0], previous: 0) == "malformed")
        // Devices set AT in assertions without credential data; after the counter only an
        // extension map (ED set) may follow, and it is signed like the rest.
        func signed(_ data: [UInt8]) -> [UInt8] {
            let signature = try! key.signature(for: HashFunction.sha256.hash(data + clientDataHash)).derRepresentation
            return CBOREncoder.encode(.map([CBORMapEntry(.text("signature"), .bytes(signature)), CBORMapEntry(.text("authenticatorData"), .bytes(data))]))
        }
        let base = HashFunction.sha256.hash(Array(Self.appID.utf8)) + [0x40, 0, 0, 0, 9]
        #expect(check(signed(base), previous: 0) == "accepted")
        #expect(check(signed(base + [0xA0]), previous: 0) == "malformed", "extensions without ED")
        var withED = base
        withED[32] |= 0x80
        #expect(check(signed(withED + CBOREncoder.encode(.map([]))), previous: 0) == "accepted")
        #expect(check(signed(withED + [0x01]), previous: 0) == "malformed", "ED with no map")
        #expect(check(signed(Array(base.prefix(36))), previous: 0) == "malformed")
        #expect(check(CBOREncoder.encode(.map([])), previous: 0) == "malformed")
    }
}
