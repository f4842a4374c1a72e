import Foundation
import LatchkeyJSON
import LatchkeyWire
import Testing

@Suite("Wire models: codes, timestamps, decoding errors")
struct WireFoundationTests {
    @Test("timestamps print as Foundation's ISO 8601 does, and read back", arguments: [
        Int64(0), 1_800_000_000, 951_782_400, 4_102_444_799, -86_401, 253_402_300_799,
    ])
    func timestampsMatchFoundation(seconds: Int64) throws {
        let timestamp = WireTimestamp(secondsSince1970: seconds)
        #expect(timestamp.rfc3339 == Date(timeIntervalSince1970: TimeInterval(seconds)).ISO8601Format())
        #expect(WireTimestamp(rfc3339: timestamp.rfc3339) == timestamp)
    }

    @Test("timestamps accept fractions and offsets, and refuse what RFC 3339 does not allow")
    func timestampParsing() {
        #expect(WireTimestamp(rfc3339: "2026-11-30T18:00:00.123Z")?.rfc3339 == "2026-11-30T18:00:00Z")
        #expect(WireTimestamp(rfc3339: "2026-11-30T19:30:00+01:30")?.rfc3339 == "2026-11-30T18:00:00Z")
        #expect(WireTimestamp(rfc3339: "2026-11-30t18:00:00z")?.rfc3339 == "2026-11-30T18:00:00Z")
        for bad in ["", "2026-11-30", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T18:00:00",
                    "2026-11-30T18:00:00Z ", "2026-11-30T18:00:00.Z", "２026-11-30T18:00:00Z"] {
            #expect(WireTimestamp(rfc3339: bad) == nil, "\(bad)")
        }
    }

    @Test("an error code or grant reason the client does not know arrives intact")
    func unknownCodesSurvive() throws {
        let body = try WireErrorBody(parsing: Array(#"{"error":"invalid_grant","error_description":"x","reason":"galaxy_brain","new_member":1}"#.utf8))
        #expect(body.error == .invalidGrant)
        #expect(body.grantFailure == GrantFailureReason(rawValue: "galaxy_brain"))
        let unknown = try WireErrorBody(parsing: Array(#"{"error":"quota_exceeded"}"#.utf8))
        #expect(unknown.error.rawValue == "quota_exceeded" && unknown.grantFailure == nil)
    }

    @Test("the token response round-trips through its JSON form")
    func tokenResponseRoundTrip() throws {
        let user = WireUser(
            id: "usr_1", email: nil, emailVerified: false, isPrivateEmail: true, givenName: "Ada", familyName: nil,
            createdAt: WireTimestamp(secondsSince1970: 1_800_000_000))
        let response = WireTokenResponse(accessToken: "a.b.c", expiresIn: 900, refreshToken: "r", sessionID: "ses_1", created: true, user: user)
        #expect(try WireTokenResponse(json: response.json) == response)
        #expect(response.json["user"]?["email"] == .null)
        #expect(response.json["user"]?["created_at"] == "2027-01-15T08:00:00Z")
    }

    @Test("decoding errors name the member by its full path")
    func errorPaths() {
        #expect(throws: WireDecodingError(code: .missing, path: "user", expectation: "is required")) {
            try WireTokenResponse(parsing: Array(#"{"access_token":"a","token_type":"Bearer","expires_in":1,"refresh_token":"r","session_id":"s"}"#.utf8))
        }
        do {
            _ = try WireErrorBody(parsing: Array(#"{"error":"mfa_required","factors":[{"type":"totp"},{"type":7}]}"#.utf8))
            Issue.record("a mistyped factor was accepted")
        } catch {
            #expect(error.code == .mistyped && error.path == "factors[1].type")
        }
        #expect(throws: WireDecodingError(code: .notJSON, path: "", expectation: "is not valid JSON")) {
            try WireErrorBody(parsing: Array("{".utf8))
        }
    }
}
