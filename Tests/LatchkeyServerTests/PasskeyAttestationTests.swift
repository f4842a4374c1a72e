import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWebAuthn
import LatchkeyWire
import Testing

/// `passkeys.attestation: direct` over HTTP (docs/security.md S34): statements verified to the
/// configured roots, what is stored and audited; the settings that feed it; and the names a
/// passkey gets from its AAGUID.
@Suite("Passkey attestation")
struct PasskeyAttestationTests {
    typealias Authenticator = SoftwareAuthenticator
    typealias Registration = PasskeyRegistrationTests

    /// A server for the software authenticator's RP, with `attestation` and, for `direct`, the
    /// roots read from a PEM file as `serve` reads them.
    static func with(attestation: String, rootPEM: String = TestAttestationPKI.rootPEM, _ body: (TestServer) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-roots-\(UUID()).pem")
        try Data(rootPEM.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await TestServer.with({
            $0.passkeys.rpID = Authenticator.rpID
            $0.passkeys.origins = [Authenticator.origin]
            $0.passkeys.attestation = attestation
            if attestation == "direct" {
                $0.passkeys.attestationRoots = [file.path]
                _ = ConfigurationLoader.readAttestationRoots(&$0.passkeys)
            }
        }, body)
    }

    /// Registers `response` (made by `make` for the flow's challenge) for a fresh account.
    static func register(
        _ server: TestServer, name: String? = nil, _ make: ([UInt8]) throws -> RegistrationResponse
    ) async throws -> (user: User, publicKey: JSONValue, response: TestResponse) {
        let user = try await server.createUser()
        let token = try await server.startSession(for: user)
        let (flowID, challenge, publicKey) = try await Registration.options(server, token)
        let response = try await Registration.register(server, token, flowID: flowID, try make(challenge), name: name)
        return (user, publicKey, response)
    }

    static func row(_ server: TestServer, _ authenticator: Authenticator) async throws -> Passkey? {
        let credentialID = authenticator.credentialID
        return try await server.database.read { try PasskeyRepository().find(credentialID: credentialID, on: $0) }
    }

    @Test("S34: with attestation direct, a packed statement chained to a configured root registers as verified; options, row and audit entry say so")
    func directVerified() async throws {
        try await Self.with(attestation: "direct") { server in
            let authenticator = Authenticator.es256()
            let (user, publicKey, response) = try await Self.register(server) { try authenticator.packedAttestationRegistration(challenge: $0) }
            #expect(publicKey["attestation"] == "direct")
            #expect(response.status == 201, "\(response.text)")
            let row = try #require(try await Self.row(server, authenticator))
            #expect(row.attestation == "verified")
            #expect(row.userID == user.id)
            let entry = try #require(try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.registered").first)
            #expect(entry.details["attestation"] == "verified")
            #expect(entry.details["attestation_format"] == "packed")
            #expect(entry.details["passkey_id"] == row.id)
        }
    }

    enum Refusal: String, CaseIterable, Sendable {
        case untrustedRoot, badSignature, attestationKeyNotTheCertificates
    }

    @Test("S34: with attestation direct, an unverifiable statement is refused with the verifier's reason, audited, and stores nothing", arguments: Refusal.allCases)
    func directRefused(refusal: Refusal) async throws {
        let rootPEM = refusal == .untrustedRoot ? TestAttestationPKI.otherRootPEM : TestAttestationPKI.rootPEM
        try await Self.with(attestation: "direct", rootPEM: rootPEM) { server in
            let authenticator = Authenticator.es256()
            let (reason, make): (String, ([UInt8]) throws -> RegistrationResponse) =
                switch refusal {
                case .untrustedRoot:
                    ("untrusted_attestation", { try authenticator.packedAttestationRegistration(challenge: $0) })
                case .badSignature:
                    ("invalid_attestation", { try authenticator.packedAttestationRegistration(challenge: $0, signedData: { $0 + [0] }) })
                case .attestationKeyNotTheCertificates:
                    ("invalid_attestation", { try authenticator.packedAttestationRegistration(challenge: $0, attestationKey: P256.Signing.PrivateKey()) })
                }
            let (user, _, response) = try await Self.register(server, make)
            #expect(response.status == 400, "\(response.text)")
            let error = try response.decode(WireErrorBody.self)
            #expect(error.error == .invalidGrant)
            #expect(error.reason == reason, "\(response.text)")
            #expect(try await Registration.storedCount(server) == 0)
            let entry = try #require(try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.registration_failed").first)
            #expect(entry.details["reason"] == reason)
        }
    }

    @Test("S34: with attestation direct, packed self attestation is stored as self and a none statement as none")
    func directSelfAndNone() async throws {
        try await Self.with(attestation: "direct") { server in
            let selfAttesting = Authenticator.es256()
            let first = try await Self.register(server) { try selfAttesting.registration(challenge: $0, statement: .packedSelf) }
            #expect(first.response.status == 201, "\(first.response.text)")
            #expect(try await Self.row(server, selfAttesting)?.attestation == "self")

            let synced = Authenticator.es256()
            let user = try await server.createUser(email: "grace@example.com")
            let token = try await server.startSession(for: user)
            let (flowID, challenge, _) = try await Registration.options(server, token)
            let second = try await Registration.register(server, token, flowID: flowID, try synced.registration(challenge: challenge))
            #expect(second.status == 201, "\(second.text)")
            #expect(try await Self.row(server, synced)?.attestation == "none")
        }
    }

    @Test("S34: with attestation direct, a passkey sign-up is verified as a registration is: a chain to no configured root creates no account; a chained one stores verified, named from the AAGUID")
    func directSignUp() async throws {
        try await Self.with(attestation: "direct") { server in
            let untrusted = Authenticator.es256()
            let (refusedFlow, refusedChallenge, _) = try await PasskeySignInTests.options(server, "/v1/auth/passkey/signup/options")
            let refused = try await server.request(
                .post, "/v1/auth/passkey/signup",
                json: [
                    "flow_id": .string(refusedFlow),
                    "credential": Registration.json(
                        try untrusted.packedAttestationRegistration(challenge: refusedChallenge, attestationKey: P256.Signing.PrivateKey())),
                ])
            #expect(try refused.decode(WireErrorBody.self).reason == "invalid_attestation", "\(refused.text)")
            #expect(try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM users", [])?.int("n") } == 0)

            var chained = Authenticator.es256()
            chained.aaguid = [UInt8](hex: "bada5566a7aa401fbd9645619a55120d")
            let (flowID, challenge, publicKey) = try await PasskeySignInTests.options(server, "/v1/auth/passkey/signup/options")
            #expect(publicKey["attestation"] == "direct")
            chained.userHandle = try #require(publicKey["user"]?["id"]?.stringValue.flatMap { Base64URL.decode($0) })
            let response = try await server.request(
                .post, "/v1/auth/passkey/signup",
                json: ["flow_id": .string(flowID), "credential": Registration.json(try chained.packedAttestationRegistration(challenge: challenge))])
            #expect(response.status == 201, "\(response.text)")
            let row = try #require(try await Self.row(server, chained))
            #expect(row.attestation == "verified" && row.name == "1Password")
            let entry = try #require(try await AuditLog(database: server.database).entries(userID: row.userID, event: "passkey.sign_up").first)
            #expect(entry.details["attestation"] == "verified")
        }
    }

    @Test("with attestation none (the default) the options ask for none and a packed statement to no configured root is accepted as none")
    func noneAcceptsAnything() async throws {
        try await Self.with(attestation: "none") { server in
            let authenticator = Authenticator.es256()
            let (user, publicKey, response) = try await Self.register(server) {
                try authenticator.packedAttestationRegistration(challenge: $0, attestationKey: P256.Signing.PrivateKey())
            }
            #expect(publicKey["attestation"] == "none")
            #expect(response.status == 201, "\(response.text)")
            #expect(try await Self.row(server, authenticator)?.attestation == "none")
            let entry = try #require(try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.registered").first)
            #expect(entry.details["attestation"] == "none" && entry.details["attestation_format"] == "packed")
        }
    }

    @Test("a passkey registered without a name is named after the provider its AAGUID names, else Passkey; a given name wins")
    func defaultNames() async throws {
        try await Self.with(attestation: "none") { server in
            var apple = Authenticator.es256()
            apple.aaguid = [UInt8](hex: "fbfc3007154e4ecc8c0b6e020557d7bd")
            let named = try await Self.register(server) { try apple.registration(challenge: $0) }
            #expect(try named.response.decode(WirePasskey.self).name == "Apple Passwords")
            #expect(try await Self.row(server, apple)?.name == "Apple Passwords")

            let unknown = Authenticator.es256()
            let user = try await server.createUser(email: "grace@example.com")
            let token = try await server.startSession(for: user)
            let (flowID, challenge, _) = try await Registration.options(server, token)
            let plain = try await Registration.register(server, token, flowID: flowID, try unknown.registration(challenge: challenge))
            #expect(try plain.decode(WirePasskey.self).name == "Passkey")

            var bitwarden = Authenticator.es256()
            bitwarden.aaguid = [UInt8](hex: "d548826e79b4db40a3d811116f7e8349")
            let (flow, challenge2, _) = try await Registration.options(server, token)
            let given = try await Registration.register(server, token, flowID: flow, try bitwarden.registration(challenge: challenge2), name: "Work laptop")
            #expect(try given.decode(WirePasskey.self).name == "Work laptop")
        }
    }
}

@Suite("Passkey attestation settings")
struct PasskeyAttestationSettingsTests {
    static func load(_ environment: [String: String]) -> Result<Configuration, ConfigurationError> {
        Result { () throws(ConfigurationError) in try ConfigurationLoader.load(file: nil, environment: environment) }
    }

    static func problems(_ environment: [String: String]) -> [String] {
        guard case .failure(let error) = load(environment) else { return [] }
        return error.problems
    }

    @Test("S34: attestation direct reads every certificate of attestation_roots at load; a missing, unreadable or non-PEM file is named")
    func roots() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-roots-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let both = directory.appendingPathComponent("roots.pem")
        try Data((TestAttestationPKI.rootPEM + "\n" + TestAttestationPKI.otherRootPEM + "\n").utf8).write(to: both)
        let junk = directory.appendingPathComponent("junk.pem")
        try Data("not a certificate\n".utf8).write(to: junk)

        let loaded = try Self.load(["LATCHKEY_PASSKEYS_ATTESTATION": "direct", "LATCHKEY_PASSKEYS_ATTESTATION_ROOTS": both.path]).get()
        #expect(loaded.passkeys.attestationRootCertificates.count == 2)
        let expected = try X509Certificate.certificates(pemRepresentation: TestAttestationPKI.otherRootPEM)[0].derRepresentation
        #expect(loaded.passkeys.attestationRootCertificates.last?.certificate.derRepresentation == expected)
        guard case .direct(let trust) = loaded.passkeys.attestationPolicy(at: Date()) else {
            Issue.record("direct settings give the direct policy")
            return
        }
        #expect(trust.roots[.packed]?.count == 2 && trust.roots[.apple]?.count == 2 && trust.roots[.fidoU2F]?.count == 2)

        let missing = directory.appendingPathComponent("absent.pem").path
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ATTESTATION": "direct", "LATCHKEY_PASSKEYS_ATTESTATION_ROOTS": missing])
            == ["passkeys.attestation_roots: \(missing) cannot be read"])
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ATTESTATION": "direct", "LATCHKEY_PASSKEYS_ATTESTATION_ROOTS": junk.path])
            == ["passkeys.attestation_roots: \(junk.path) is not a PEM file of certificates (-----BEGIN CERTIFICATE-----)"])
        #expect(Self.problems(["LATCHKEY_PASSKEYS_ATTESTATION_ROOTS": both.path])
            == ["passkeys.attestation_roots: applies only with passkeys.attestation direct"])
        guard case .none = try Self.load([:]).get().passkeys.attestationPolicy(at: Date()) else {
            Issue.record("the default policy is none")
            return
        }
    }

    @Test("S34: serve stops at start, naming passkeys.attestation_roots, when a root file cannot be read")
    func serveStops() async throws {
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("latchkey.json")
        try Data(#"{"passkeys": {"attestation": "direct", "attestation_roots": ["/nonexistent/apple-webauthn-root.pem"]}}"#.utf8).write(to: file)
        let result = try Subprocess.run(
            Executables.latchkey, ["serve", "--dev", "--listen", "127.0.0.1:0", "--config", file.path], directory: directory)
        #expect(result.status == 1)
        #expect(result.error.contains("configuration: passkeys.attestation_roots: /nonexistent/apple-webauthn-root.pem cannot be read"), "\(result.error)")
    }

    @Test("the table of known providers: lowercase UUID keys, the providers the issue names, nothing for the zero AAGUID")
    func knownAuthenticators() {
        for key in KnownAuthenticators.names.keys {
            #expect(key.count == 36 && key == key.lowercased() && key.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12], "\(key)")
        }
        let expected: [String: String] = [
            "fbfc3007154e4ecc8c0b6e020557d7bd": "Apple Passwords", "ea9b8d664d011d213ce4b6b48cb575d4": "Google Password Manager",
            "bada5566a7aa401fbd9645619a55120d": "1Password", "d548826e79b4db40a3d811116f7e8349": "Bitwarden",
            "adce000235bcc60a648b0b25f1f05503": "Chrome on Mac", "08987058cadc4b81b6e130de50dcbe96": "Windows Hello",
            "531126d6e717415c93203d9aa6981239": "Dashlane", "50726f746f6e5061737350726f746f6e": "Proton Pass",
            "fdb141b25d84443e8a354698c205a502": "KeePassXC",
        ]
        for (hex, name) in expected {
            #expect(KnownAuthenticators.name(aaguid: [UInt8](hex: hex)) == name)
        }
        #expect(KnownAuthenticators.name(aaguid: Array(repeating: 0, count: 16)) == nil)
        #expect(KnownAuthenticators.defaultName(given: nil, aaguid: Array(repeating: 0, count: 16)) == "Passkey")
        #expect(KnownAuthenticators.defaultName(given: "Mine", aaguid: [UInt8](hex: "bada5566a7aa401fbd9645619a55120d")) == "Mine")
    }
}
