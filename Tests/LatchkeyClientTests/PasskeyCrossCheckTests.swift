import Foundation
import LatchkeyClient
import LatchkeyClientDoubles
import LatchkeyCrypto
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// The SDK's software authenticator against py_webauthn, a relying-party library no one here
/// wrote: what the SDK sends (the `RegistrationResponseJSON` and `AuthenticationResponseJSON` of
/// ``PasskeyRegistration/json`` and ``PasskeyAssertion/json``) must verify there too, not only in
/// our own verifier. Needs `webauthn` from scripts/requirements-test.txt in `LATCHKEY_PYTHON`;
/// fails when it is missing.
@Suite("Passkeys: py_webauthn verifies the SDK's software authenticator")
struct PasskeyCrossCheckTests {
    static let rpID = "localhost"
    static let origin = "https://localhost"

    static func base64url(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: .urlSafe, padded: false) }

    /// Creation options as the server writes them.
    static func creationOptions(challenge: [UInt8], userID: [UInt8]) throws -> PasskeyCreationOptions {
        try PasskeyCreationOptions(json: [
            "rp": ["id": .string(rpID), "name": "Latchkey"],
            "user": ["id": .string(base64url(userID)), "name": "ada@example.com", "displayName": "Ada"],
            "challenge": .string(base64url(challenge)),
            "pubKeyCredParams": [["type": "public-key", "alg": -7], ["type": "public-key", "alg": -8], ["type": "public-key", "alg": -257]],
            "authenticatorSelection": ["residentKey": "required", "userVerification": "required"],
            "excludeCredentials": [], "attestation": "none", "timeout": 300_000,
        ])
    }

    static func assertionOptions(challenge: [UInt8], allow: [Data]) throws -> PasskeyAssertionOptions {
        try PasskeyAssertionOptions(json: [
            "rpId": .string(rpID), "challenge": .string(base64url(challenge)), "userVerification": "required",
            "allowCredentials": .array(allow.map { ["type": "public-key", "id": .string(base64url([UInt8]($0)))] }),
        ])
    }

    /// A registration and an assertion of one passkey, `tamper` applied to the assertion, verified by py_webauthn.
    static func crossCheck(tamper: (inout PasskeyAssertion) -> Void = { _ in }) async throws -> (verdict: JSONValue, registration: PasskeyRegistration) {
        let authenticator = SoftwarePasskeyAuthenticator()
        let registrationChallenge = SecureRandom.bytes(count: 32)
        let registration = try await authenticator.makeCredential(
            try creationOptions(challenge: registrationChallenge, userID: SecureRandom.bytes(count: 64)), style: .standard)
        let assertionChallenge = SecureRandom.bytes(count: 32)
        var assertion = try await authenticator.getAssertion(
            try assertionOptions(challenge: assertionChallenge, allow: [registration.credentialID]), style: .standard)
        tamper(&assertion)
        let output = try PythonWebAuthn.verify(
            registration: registration.json.serializedString, assertion: assertion.json.serializedString,
            registrationChallenge: base64url(registrationChallenge), assertionChallenge: base64url(assertionChallenge), rpID: rpID, origin: origin)
        return (try JSONValue(parsing: output), registration)
    }

    @Test("py_webauthn verifies the registration (none attestation, ES256, UV, a synced multi-device passkey) and then the assertion (sign count 1)")
    func verifies() async throws {
        let (verdict, registration) = try await Self.crossCheck()
        #expect(verdict["error"] == nil, "\(verdict)")
        let registered = try #require(verdict["registration"], "\(verdict)")
        #expect(registered["credential_id"] == .string(Self.base64url([UInt8](registration.credentialID))))
        #expect(registered["fmt"] == "none")
        #expect(registered["sign_count"] == .number(0))
        #expect(registered["user_verified"] == .bool(true))
        #expect(registered["backed_up"] == .bool(true))
        #expect(registered["device_type"] == "multi_device")
        #expect(registered["aaguid"] == "00000000-0000-0000-0000-000000000000")
        let authenticated = try #require(verdict["authentication"], "\(verdict)")
        #expect(authenticated["new_sign_count"] == .number(1))
        #expect(authenticated["user_verified"] == .bool(true))
        #expect(authenticated["backed_up"] == .bool(true))
    }

    @Test("py_webauthn refuses the assertion when one byte of the signature is changed: the cross-check can fail")
    func refusesATamperedSignature() async throws {
        let (verdict, _) = try await Self.crossCheck { assertion in
            assertion.signature[assertion.signature.count - 1] ^= 0x01
        }
        #expect(verdict["registration"] != nil, "\(verdict)")
        #expect(verdict["authentication"] == nil, "\(verdict)")
        let error = try #require(verdict["error"]?.stringValue, "\(verdict)")
        #expect(error.hasPrefix("InvalidAuthenticationResponse"), "\(error)")
    }

    @Test("py_webauthn refuses the assertion when its client data names another origin")
    func refusesAnotherOrigin() async throws {
        let (verdict, _) = try await Self.crossCheck { assertion in
            let text = String(decoding: assertion.clientDataJSON, as: UTF8.self).replacingOccurrences(of: Self.origin, with: "https://evil.example")
            assertion.clientDataJSON = Data(text.utf8)
        }
        let error = try #require(verdict["error"]?.stringValue, "\(verdict)")
        #expect(error.contains("origin"), "\(error)")
    }
}
