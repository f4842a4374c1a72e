import LatchkeyJSON
import LatchkeyWire
import Testing

@Suite("Wire models: sessions, refresh, logout, revoke")
struct SessionsWireTests {
    static let session = WireSessionInfo(
        id: "ses_1", createdAt: WireTimestamp(secondsSince1970: 1_800_000_000), lastUsedAt: WireTimestamp(secondsSince1970: 1_800_000_060),
        expiresAt: WireTimestamp(secondsSince1970: 1_802_592_000), amr: ["pwd", "hwk"], userAgent: "App/1.0", ip: nil, current: true)

    @Test("a session list round-trips through its JSON form, with docs/reference.md's member names")
    func sessionListRoundTrip() throws {
        let list = WireSessionList(sessions: [Self.session, WireSessionInfo(
            id: "ses_2", createdAt: WireTimestamp(secondsSince1970: 0), lastUsedAt: WireTimestamp(secondsSince1970: 0),
            expiresAt: WireTimestamp(secondsSince1970: 60), amr: [], userAgent: nil, ip: "127.0.0.1", current: false)])
        #expect(try WireSessionList(json: list.json) == list)
        #expect(try WireSessionList(parsing: list.json.serialized) == list)
        let first = try #require(list.json["sessions"]?.arrayValue?.first)
        #expect(first == [
            "id": "ses_1", "created_at": "2027-01-15T08:00:00Z", "last_used_at": "2027-01-15T08:01:00Z", "expires_at": "2027-02-14T08:00:00Z",
            "amr": ["pwd", "hwk"], "user_agent": "App/1.0", "ip": .null, "current": true,
        ])
    }

    @Test("a session with a bad timestamp names the member by its full path")
    func sessionErrors() {
        do {
            _ = try WireSessionList(parsing: Array(#"{"sessions":[{"id":"s","created_at":"yesterday","last_used_at":"x","expires_at":"x"}]}"#.utf8))
            Issue.record("a bad timestamp was accepted")
        } catch {
            #expect(error.code == .invalid && error.path == "sessions[0].created_at")
        }
    }

    @Test("the refresh request round-trips; grant_type is required, refresh_token a string when present")
    func refreshRequest() throws {
        let request = WireRefreshRequest(refreshToken: "r")
        #expect(request.json == ["grant_type": "refresh_token", "refresh_token": "r"])
        #expect(try WireRefreshRequest(json: request.json) == request)
        #expect(try WireRefreshRequest(json: ["grant_type": "password"]) == WireRefreshRequest(grantType: "password", refreshToken: nil))
        #expect(throws: WireDecodingError(code: .missing, path: "grant_type", expectation: "is required")) {
            try WireRefreshRequest(json: ["refresh_token": "r"])
        }
        #expect(throws: WireDecodingError(code: .mistyped, path: "refresh_token", expectation: "must be a string")) {
            try WireRefreshRequest(json: ["grant_type": "refresh_token", "refresh_token": 5])
        }
    }

    @Test("the logout request: all is optional, and when present must be a boolean, null included")
    func logoutRequest() throws {
        #expect(try WireLogoutRequest(json: WireLogoutRequest(all: true).json) == WireLogoutRequest(all: true))
        #expect(try WireLogoutRequest(json: [:]) == WireLogoutRequest(all: false))
        for bad: JSONValue in [["all": .null], ["all": "yes"], ["all": 1]] {
            #expect(throws: WireDecodingError(code: .mistyped, path: "all", expectation: "must be true or false")) {
                try WireLogoutRequest(json: bad)
            }
        }
        #expect((try? WireLogoutRequest(json: [])) == nil, "the body is an object")
    }

    @Test("the revoke request round-trips, with or without its members")
    func revokeRequest() throws {
        for request in [WireRevokeRequest(token: "t", tokenTypeHint: "refresh_token"), WireRevokeRequest(token: nil)] {
            #expect(try WireRevokeRequest(json: request.json) == request)
        }
        #expect(WireRevokeRequest(token: "t").json == ["token": "t"])
        #expect(throws: WireDecodingError(code: .mistyped, path: "token", expectation: "must be a string")) {
            try WireRevokeRequest(json: ["token": false])
        }
    }
}
