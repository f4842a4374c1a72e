import Foundation
import LatchkeyCrypto
import LatchkeyJSON
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Responses of real authenticators (and the spec's generated examples) replayed against the
/// verifier: WebAuthn Level 3 §16, py_webauthn's and SimpleWebAuthn's fixtures. Each file in
/// Tests/LatchkeyTestSupport/Vectors/ carries the facts and the outcome Latchkey's policy expects
/// (SOURCE.md names the upstream commits; scripts/webauthn-vectors.py made the files).
@Suite("WebAuthn recorded vectors")
struct RecordedVectorTests {
    static let files = ["webauthn_l3_test_vectors.json", "webauthn_py_webauthn_vectors.json", "webauthn_simplewebauthn_vectors.json"]

    static func bytes(_ value: JSONValue?) throws -> [UInt8] {
        let text = try #require(value?.stringValue)
        return try #require(Base64.decode(Array(text.utf8), alphabet: .urlSafe, padded: false))
    }

    static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "accepted"
        } catch let error as WebAuthnError {
            return error.reason
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("every recorded case gives the expected outcome; executed + skipped == numberOfTests", arguments: files)
    func replay(file: String) throws {
        let document = try JSONValue(parsing: Array(try Vectors.data(named: file)))
        let object = try #require(document.objectValue)
        var roots: [AttestationFormat: [X509Certificate]] = [:]
        for (format, list) in try #require(object["roots"]?.objectValue) {
            roots[AttestationFormat(rawValue: format)] = try #require(list.arrayValue).map { pem in
                let text = try #require(pem.stringValue)
                let der = try #require(Base64.decode(Array(text.utf8), alphabet: .standard, padded: true))
                return try X509Certificate(derRepresentation: der)
            }
        }
        let cases = try #require(object["cases"]?.arrayValue)
        var executed = 0
        var outcomes: [String: Int] = [:]
        for item in cases {
            let test = try #require(item.objectValue)
            let name = "\(file) #\(test["id"]?.numberValue.map { Int($0) } ?? 0) \(test["name"]?.stringValue ?? "")"
            let challenge = try Self.bytes(test["challenge"])
            let origins = Set(try #require(test["origins"]?.arrayValue).compactMap(\.stringValue))
            let rpID = try #require(test["rp_id"]?.stringValue)
            let userVerification: WebAuthn.UserVerification = test["user_verification"]?.stringValue == "required" ? .required : .preferred
            let credential = try #require(test["credential"])
            let expected = try #require(test["expected"]?.stringValue)
            let actual: String
            switch test["kind"]?.stringValue {
            case "registration":
                var time: Date?
                if let text = test["verification_time"]?.stringValue {
                    time = try Date.ISO8601FormatStyle().parse(text)
                }
                let policy: AttestationPolicy = test["attestation"]?.stringValue == "direct"
                    ? .direct(AttestationTrust(roots: roots, verificationTime: time)) : .none
                let ceremony = RegistrationCeremony(
                    challenge: challenge, origins: origins, rpID: rpID, userVerification: userVerification, attestation: policy)
                actual = Self.outcome {
                    let verified = try ceremony.verify(try RegistrationResponse(json: credential))
                    // What the server stores must read back as the key it was.
                    _ = try COSEKey(bytes: verified.publicKey)
                }
                // Under policy none every statement is accepted as none: only the attestation checks differ.
                if expected.hasSuffix("_attestation") || expected == "accepted" {
                    var relaxed = ceremony
                    relaxed.attestation = .none
                    #expect(Self.outcome { _ = try relaxed.verify(try RegistrationResponse(json: credential)) } == "accepted", "\(name) under policy none")
                }
            case "authentication":
                let response = try AuthenticationResponse(json: credential)
                let allowed = try (test["allow_credentials"]?.arrayValue ?? []).map { try Self.bytes($0) }
                let stored = StoredCredential(
                    credentialID: response.credentialID, publicKey: try Self.bytes(test["public_key"]),
                    signCount: UInt32(try #require(test["sign_count"]?.numberValue)), userHandle: response.userHandle ?? [])
                let ceremony = AuthenticationCeremony(
                    challenge: challenge, origins: origins, rpID: rpID, userVerification: userVerification, allowedCredentialIDs: allowed)
                actual = Self.outcome { _ = try ceremony.verify(response, credential: stored) }
                // The recorded signature covers these exact bytes: any other challenge is refused.
                if expected == "accepted" {
                    var other = ceremony
                    other.challenge = challenge + [0]
                    #expect(Self.outcome { _ = try other.verify(response, credential: stored) } == "challenge_mismatch", "\(name)")
                    var tampered = response
                    tampered.authenticatorData[33] ^= 0x01
                    #expect(Self.outcome { _ = try ceremony.verify(tampered, credential: stored) } != "accepted", "\(name)")
                }
            default:
                Issue.record("\(name): unknown kind")
                continue
            }
            #expect(actual == expected, "\(name)")
            executed += 1
            outcomes[expected, default: 0] += 1
        }
        let total = Int(try #require(object["numberOfTests"]?.numberValue))
        let skipped = 0
        #expect(executed + skipped == total)
        #expect(total == cases.count)
        print("webauthn \(file): \(executed) executed + \(skipped) skipped = \(total) (\(outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")))")
    }
}

/// The recorded attestation statements, changed one way each: every change is refused.
@Suite("WebAuthn recorded attestation statements, tampered")
struct TamperedAttestationTests {
    struct Recorded {
        var ceremony: RegistrationCeremony
        var response: RegistrationResponse
        var roots: [AttestationFormat: [X509Certificate]]
        var time: Date?
    }

    static func recorded(_ file: String, upstream: String) throws -> Recorded {
        let parsed = try JSONValue(parsing: Array(try Vectors.data(named: file)))
        let document = try #require(parsed.objectValue)
        var roots: [AttestationFormat: [X509Certificate]] = [:]
        for (format, list) in try #require(document["roots"]?.objectValue) {
            roots[AttestationFormat(rawValue: format)] = try #require(list.arrayValue).map { pem in
                let text = try #require(pem.stringValue)
                let der = try #require(Base64.decode(Array(text.utf8), alphabet: .standard, padded: true))
                return try X509Certificate(derRepresentation: der)
            }
        }
        let cases = try #require(document["cases"]?.arrayValue)
        let test = try #require(cases.compactMap(\.objectValue).first { $0["upstream"]?.stringValue == upstream })
        let time = try test["verification_time"]?.stringValue.map { try Date.ISO8601FormatStyle().parse($0) }
        let ceremony = RegistrationCeremony(
            challenge: try RecordedVectorTests.bytes(test["challenge"]),
            origins: Set(try #require(test["origins"]?.arrayValue).compactMap(\.stringValue)), rpID: try #require(test["rp_id"]?.stringValue),
            userVerification: .preferred, attestation: .direct(AttestationTrust(roots: roots, verificationTime: time)))
        return Recorded(ceremony: ceremony, response: try RegistrationResponse(json: try #require(test["credential"])), roots: roots, time: time)
    }

    /// The attestation object with its authenticator data's sign count changed (a field no
    /// registration check reads, so only the statement's signature or nonce can catch it).
    static func changingSignCount(_ response: RegistrationResponse) throws -> RegistrationResponse {
        let object = try CBORDecoder.decode(response.attestationObject)
        var entries = try #require(object.mapValue)
        let index = try #require(entries.firstIndex { $0.key == .text("authData") })
        var data = try #require(entries[index].value.bytesValue)
        data[36] ^= 0x01
        entries[index].value = .bytes(data)
        var changed = response
        changed.attestationObject = CBOREncoder.encode(.map(entries))
        #expect(changed.attestationObject.count == response.attestationObject.count)
        return changed
    }

    static let statements: [(String, String)] = [
        ("webauthn_py_webauthn_vectors.json", "tests/test_verify_registration_response_apple.py::test_verify_attestation_apple_passkey"),
        ("webauthn_py_webauthn_vectors.json", "tests/test_verify_registration_response_packed.py::test_verify_attestation_from_yubikey_firefox"),
        ("webauthn_py_webauthn_vectors.json", "tests/test_verify_registration_response_fido_u2f.py::test_verify_attestation_from_yubikey_firefox"),
        ("webauthn_l3_test_vectors.json", "index.bs #sctn-test-vectors-packed-rs256"),
        ("webauthn_l3_test_vectors.json", "index.bs #sctn-test-vectors-packed-eddsa"),
        ("webauthn_l3_test_vectors.json", "index.bs #sctn-test-vectors-apple-es256"),
        ("webauthn_l3_test_vectors.json", "index.bs #sctn-test-vectors-fido-u2f-es256"),
    ]

    @Test("a statement over other authenticator data is invalid; another root, or a time outside the chain's validity, is untrusted", arguments: 0..<statements.count)
    func tampered(index: Int) throws {
        let (file, upstream) = Self.statements[index]
        let recorded = try Self.recorded(file, upstream: upstream)
        _ = try recorded.ceremony.verify(recorded.response)
        // The same client data with a space before its closing brace: another hash.
        var spaced = recorded.response
        spaced.clientDataJSON.insert(0x20, at: spaced.clientDataJSON.count - 1)
        #expect(throws: WebAuthnError(.invalidAttestation), "\(upstream)") { try recorded.ceremony.verify(spaced) }
        // FIDO U2F signs no authenticator data but the RP ID hash, the credential id and key.
        let changed = try Self.changingSignCount(recorded.response)
        if upstream.contains("fido-u2f") || upstream.contains("fido_u2f") {
            _ = try recorded.ceremony.verify(changed)
        } else {
            #expect(throws: WebAuthnError(.invalidAttestation), "\(upstream)") { try recorded.ceremony.verify(changed) }
        }
        // Policy none does not look at the statement.
        var relaxed = recorded.ceremony
        relaxed.attestation = .none
        _ = try relaxed.verify(changed)
        // Roots of no format, or each format's roots moved to another format.
        var noRoots = recorded.ceremony
        noRoots.attestation = .direct(AttestationTrust(roots: [:], verificationTime: recorded.time))
        #expect(throws: WebAuthnError(.untrustedAttestation), "\(upstream)") { try noRoots.verify(recorded.response) }
        var otherRoots = recorded.ceremony
        otherRoots.attestation = .direct(AttestationTrust(roots: [AttestationFormat(rawValue: "tpm"): recorded.roots.values.flatMap { $0 }], verificationTime: recorded.time))
        #expect(throws: WebAuthnError(.untrustedAttestation), "\(upstream)") { try otherRoots.verify(recorded.response) }
        // Before any certificate of the chain was valid.
        var early = recorded.ceremony
        early.attestation = .direct(AttestationTrust(roots: recorded.roots, verificationTime: Date(timeIntervalSince1970: 0)))
        #expect(throws: WebAuthnError(.untrustedAttestation), "\(upstream)") { try early.verify(recorded.response) }
    }

    @Test("Apple's attestation leaf lived three days: verified now, it has expired")
    func appleExpired() throws {
        let recorded = try Self.recorded(
            "webauthn_py_webauthn_vectors.json", upstream: "tests/test_verify_registration_response_apple.py::test_verify_attestation_apple_passkey")
        var now = recorded.ceremony
        now.attestation = .direct(AttestationTrust(roots: recorded.roots))
        #expect(throws: WebAuthnError(.untrustedAttestation)) { try now.verify(recorded.response) }
    }
}
