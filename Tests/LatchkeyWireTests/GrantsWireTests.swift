import LatchkeyJSON
import LatchkeyWire
import Testing

@Suite("Wire models: grants")
struct GrantsWireTests {
    @Test("a grant list round-trips through its JSON form, with docs/reference.md's member names")
    func grantListRoundTrip() throws {
        let list = WireGrantList(grants: [
            WireGrant(
                clientID: "cl_1", clientName: "Example Photos", scopes: ["email", "openid"], grantedAt: WireTimestamp(secondsSince1970: 1_800_000_000),
                updatedAt: WireTimestamp(secondsSince1970: 1_800_000_060))
        ])
        #expect(try WireGrantList(json: list.json) == list)
        #expect(try WireGrantList(parsing: list.json.serialized) == list)
        #expect(list.json == [
            "grants": [[
                "client_id": "cl_1", "client_name": "Example Photos", "scopes": ["email", "openid"], "granted_at": "2027-01-15T08:00:00Z",
                "updated_at": "2027-01-15T08:01:00Z",
            ]]
        ])
        #expect(try WireGrantList(json: ["grants": []]).grants.isEmpty)
    }

    @Test("a grant without its scopes names the member by its full path")
    func grantErrors() {
        do {
            _ = try WireGrantList(parsing: Array(#"{"grants":[{"client_id":"c","client_name":"n","granted_at":"2027-01-15T08:00:00Z","updated_at":"2027-01-15T08:00:00Z"}]}"#.utf8))
            Issue.record("a grant without scopes was accepted")
        } catch {
            #expect(error.path == "grants[0].scopes")
        }
    }
}
