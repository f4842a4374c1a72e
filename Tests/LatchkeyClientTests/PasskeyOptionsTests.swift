import Foundation
import LatchkeyClient
import LatchkeyJSON
import Testing

/// How the SDK reads the server's WebAuthn options and writes the response JSON, without a
/// server: what an authenticator gets, and that malformed options stop before any authenticator
/// is asked.
@Suite("Passkeys: the options the SDK reads and the JSON it writes")
struct PasskeyOptionsTests {
    static let creation: JSONValue = [
        "rp": ["id": "auth.example.com", "name": "Example"],
        "user": ["id": "AQIDBA", "name": "ada@example.com", "displayName": "Ada"],
        "challenge": "3q2-7w", "pubKeyCredParams": [["type": "public-key", "alg": -7], ["type": "public-key", "alg": -257]],
        "authenticatorSelection": ["residentKey": "required", "userVerification": "required"],
        "excludeCredentials": [["type": "public-key", "id": "_-8"]],
    ]

    @Test("Creation options: the RP, the user handle, the challenge and the excluded ids decoded from base64url; the algorithms in order")
    func readsCreationOptions() throws {
        let options = try PasskeyCreationOptions(json: Self.creation)
        #expect(options.relyingPartyID == "auth.example.com" && options.relyingPartyName == "Example")
        #expect(options.userID == Data([1, 2, 3, 4]))
        #expect(options.userName == "ada@example.com" && options.userDisplayName == "Ada")
        #expect(options.challenge == Data([0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(options.algorithms == [-7, -257])
        #expect(options.excludedCredentialIDs == [Data([0xFF, 0xEF])])
        #expect(options.userVerification == "required")
        #expect(options.json == Self.creation)
    }

    @Test("Options without a challenge, with a challenge that is not base64url, or without rp.id are invalidResponse", arguments: [
        "challenge", "challenge-garbage", "rp",
    ])
    func refusesMalformedOptions(member: String) throws {
        guard case .object(var members) = Self.creation else { Issue.record("not an object"); return }
        if member == "challenge-garbage" { members["challenge"] = "not base64!" } else { members[member] = nil }
        #expect(throws: LatchkeyError(.invalidResponse, "")) { try PasskeyCreationOptions(json: .object(members)) }
    }

    @Test("Request options: an absent allowCredentials is any passkey of the RP (discoverable); a listed one is decoded")
    func readsRequestOptions() throws {
        let discoverable = try PasskeyAssertionOptions(json: ["rpId": "auth.example.com", "challenge": "3q2-7w"])
        #expect(discoverable.allowedCredentialIDs.isEmpty && discoverable.userVerification == "preferred")
        let named = try PasskeyAssertionOptions(
            json: ["rpId": "auth.example.com", "challenge": "3q2-7w", "allowCredentials": [["type": "public-key", "id": "AQ"]], "userVerification": "required"])
        #expect(named.allowedCredentialIDs == [Data([1])] && named.userVerification == "required")
        #expect(throws: LatchkeyError(.invalidResponse, "")) { try PasskeyAssertionOptions(json: ["challenge": "3q2-7w"]) }
    }

    @Test("The response JSON is what credential.toJSON() gives: id and rawId, base64url without padding, the user handle only when there is one")
    func writesResponseJSON() {
        let registration = PasskeyRegistration(credentialID: Data([0xFB, 0xFF]), clientDataJSON: Data("{}".utf8), attestationObject: Data([0xA0]))
        #expect(registration.json["id"] == "-_8" && registration.json["rawId"] == "-_8" && registration.json["type"] == "public-key")
        #expect(registration.json["response"]?["attestationObject"] == "oA" && registration.json["response"]?["clientDataJSON"] == "e30")
        #expect(registration.json["response"]?["transports"] == ["internal", "hybrid"])
        #expect(registration.json["authenticatorAttachment"] == "platform")
        let assertion = PasskeyAssertion(
            credentialID: Data([1]), clientDataJSON: Data("{}".utf8), authenticatorData: Data([2]), signature: Data([3]), userHandle: nil, attachment: nil)
        #expect(assertion.json["response"]?["userHandle"] == nil && assertion.json["authenticatorAttachment"] == nil)
        #expect(assertion.json["response"]?["signature"] == "Aw" && assertion.json["response"]?["authenticatorData"] == "Ag")
    }
}
