import LatchkeyJSON
import LatchkeyWire
import Testing

@Suite("Wire models: Sign in with Apple")
struct AppleWireTests {
    @Test("the sign-in request round-trips, and leaves out the members an app did not send")
    func signInRoundTrip() throws {
        let full = WireAppleSignInRequest(
            identityToken: "h.p.s", authorizationCode: "c0de", nonce: "raw-nonce", givenName: "Ada", familyName: "Lovelace")
        #expect(try WireAppleSignInRequest(json: full.json) == full)
        #expect(full.json["authorization_code"] == "c0de" && full.json["given_name"] == "Ada" && full.json["family_name"] == "Lovelace")
        let bare = WireAppleSignInRequest(identityToken: "h.p.s")
        #expect(bare.json == ["identity_token": "h.p.s"])
        #expect(try WireAppleSignInRequest(json: bare.json) == bare)
    }

    @Test("the sign-in request reads null members as absent, ignores unknown ones, and names the member that is wrong")
    func signInDecoding() throws {
        let tolerant = try WireAppleSignInRequest(
            parsing: Array(#"{"identity_token":"t","nonce":null,"given_name":null,"user":{"name":"x"}}"#.utf8))
        #expect(tolerant == WireAppleSignInRequest(identityToken: "t"))
        #expect(throws: WireDecodingError(code: .missing, path: "identity_token", expectation: "is required")) {
            try WireAppleSignInRequest(json: ["nonce": "n"])
        }
        #expect(throws: WireDecodingError(code: .missing, path: "identity_token", expectation: "is required")) {
            try WireAppleSignInRequest(json: ["identity_token": .null])
        }
        do {
            _ = try WireAppleSignInRequest(json: ["identity_token": "t", "nonce": 5])
            Issue.record("a numeric nonce was accepted")
        } catch {
            #expect(error.code == .mistyped && error.description == "nonce must be a string")
        }
        do {
            _ = try WireAppleSignInRequest(json: [1, 2])
            Issue.record("an array body was accepted")
        } catch {
            #expect(error.description == "the body must be a JSON object")
        }
    }

    @Test("the notification body round-trips; a missing or mistyped payload is named")
    func notification() throws {
        let body = WireAppleNotification(payload: "h.p.s")
        #expect(body.json == ["payload": "h.p.s"])
        #expect(try WireAppleNotification(parsing: Array(#"{"payload":"h.p.s","extra":true}"#.utf8)) == body)
        #expect(throws: WireDecodingError(code: .missing, path: "payload", expectation: "is required")) {
            try WireAppleNotification(json: [:])
        }
        do {
            _ = try WireAppleNotification(json: ["payload": ["not": "a string"]])
            Issue.record("an object payload was accepted")
        } catch {
            #expect(error.description == "payload must be a string")
        }
    }
}
