import LatchkeyJSON
import LatchkeyWire
import Testing

@Suite("Wire models: device keys and second factors")
struct FactorsWireTests {
    static func roundTrip<Model: WireCodable & Equatable>(_ model: Model) throws -> Model {
        try Model(parsing: Array(model.json.serialized))
    }

    @Test("every factor model reads back what it writes")
    func roundTrips() throws {
        let timestamp = try #require(WireTimestamp(rfc3339: "2026-11-30T18:00:00Z"))
        #expect(try Self.roundTrip(WireChallengeRequest(purpose: .register)) == WireChallengeRequest(purpose: .register))
        let stepUp = WireChallengeRequest(purpose: .stepUp, deviceID: "dev_1")
        #expect(try Self.roundTrip(stepUp) == stepUp)
        let challenge = WireChallenge(challengeID: "chl_1", challenge: "AAEC", expiresIn: 120)
        #expect(try Self.roundTrip(challenge) == challenge)
        let registration = WireDeviceRegistration(publicKey: "BAAA", label: "Ada's iPhone", challengeID: "chl_1", signature: "MEUC")
        #expect(try Self.roundTrip(registration) == registration)
        let unused = WireDevice(id: "dev_1", label: "Ada's iPhone", createdAt: timestamp, lastUsedAt: nil)
        let used = WireDevice(id: "dev_2", label: "Ada's iPad", createdAt: timestamp, lastUsedAt: timestamp)
        #expect(try Self.roundTrip(WireDeviceList(devices: [unused, used])) == WireDeviceList(devices: [unused, used]))
        #expect(try Self.roundTrip(WireStepUpRequest(signature: "MEUC")) == WireStepUpRequest(signature: "MEUC"))
        let enrollment = WireTOTPEnrollment(secret: "JBSWY3DP", otpauthURI: "otpauth://totp/Latchkey:a@b.c?secret=JBSWY3DP")
        #expect(try Self.roundTrip(enrollment) == enrollment)
        #expect(try Self.roundTrip(WireTOTPConfirmation(code: "123456")) == WireTOTPConfirmation(code: "123456"))
        let codes = WireRecoveryCodes(recoveryCodes: ["abcd-efgh", "ijkl-mnop"])
        #expect(try Self.roundTrip(codes) == codes)
        let mfaChallenge = WireMFAChallengeRequest(mfaToken: "tok", deviceID: "dev_1")
        #expect(try Self.roundTrip(mfaChallenge) == mfaChallenge)
        for verify in [
            WireMFAVerifyRequest.deviceSignature(mfaToken: "tok", challengeID: "chl_1", signature: "MEUC"),
            .totp(mfaToken: "tok", code: "123456"), .recoveryCode(mfaToken: "tok", code: "abcd-efgh"),
        ] {
            #expect(try Self.roundTrip(verify) == verify)
        }
    }

    @Test("the members are named and typed as docs/reference.md shows them")
    func documentedShapes() throws {
        let timestamp = try #require(WireTimestamp(rfc3339: "2026-11-30T18:00:00Z"))
        #expect(WireChallenge(challengeID: "chl_1", challenge: "AAEC", expiresIn: 120).json == ["challenge_id": "chl_1", "challenge": "AAEC", "expires_in": 120])
        #expect(
            WireDevice(id: "dev_1", label: "phone", createdAt: timestamp, lastUsedAt: nil).json
                == ["id": "dev_1", "label": "phone", "created_at": "2026-11-30T18:00:00Z", "last_used_at": .null])
        #expect(WireDeviceList(devices: []).json == ["devices": []])
        #expect(WireChallengeRequest(purpose: .register).json == ["purpose": "register"], "no device_id member for register")
        #expect(WireChallengeRequest(purpose: .stepUp, deviceID: "dev_1").json == ["purpose": "step_up", "device_id": "dev_1"])
        #expect(WireTOTPEnrollment(secret: "S", otpauthURI: "U").json == ["secret": "S", "otpauth_uri": "U"])
        #expect(WireRecoveryCodes(recoveryCodes: ["a"]).json == ["recovery_codes": ["a"]])
        #expect(WireMFAVerifyRequest.totp(mfaToken: "tok", code: "123456").json == ["mfa_token": "tok", "totp_code": "123456"])
        #expect(
            WireMFAVerifyRequest.deviceSignature(mfaToken: "tok", challengeID: "chl_1", signature: "MEUC").json
                == ["mfa_token": "tok", "challenge_id": "chl_1", "signature": "MEUC"])
        #expect(WireMFAVerifyRequest.recoveryCode(mfaToken: "tok", code: "x").json == ["mfa_token": "tok", "recovery_code": "x"])
    }

    @Test("readers name the first missing or mistyped member and ignore unknown ones")
    func decodingErrors() throws {
        #expect(throws: WireDecodingError(code: .missing, path: "label", expectation: "is required")) {
            try WireDeviceRegistration(json: ["public_key": "BAAA", "challenge_id": "chl_1", "signature": "MEUC"])
        }
        #expect(throws: WireDecodingError(code: .mistyped, path: "code", expectation: "must be a string")) {
            try WireTOTPConfirmation(json: ["code": 123456])
        }
        #expect(throws: WireDecodingError(code: .mistyped, path: "", expectation: "must be a JSON object")) {
            try WireMFAChallengeRequest(json: ["mfa_token"])
        }
        #expect(throws: WireDecodingError(code: .invalid, path: "devices[0].created_at", expectation: "must be an RFC 3339 timestamp")) {
            try WireDeviceList(json: ["devices": [["id": "dev_1", "label": "phone", "created_at": "yesterday"]]])
        }
        let verify = try WireMFAVerifyRequest(json: ["mfa_token": "tok", "totp_code": "123456", "challenge_id": .null, "new_member": true])
        #expect(verify == .totp(mfaToken: "tok", code: "123456"), "null is absent, unknown members are ignored")
        let purpose = try WireChallengeRequest(json: ["purpose": "galaxy_brain"]).purpose
        #expect(purpose.rawValue == "galaxy_brain" && purpose != .register && purpose != .stepUp, "an unknown purpose arrives intact")
    }
}
