import LatchkeyJSON
import LatchkeyWire
import Testing

@Suite("Wire models: the account and password bodies")
struct AccountsWireTests {
    static let user = WireUser(
        id: "usr_1", email: "ada@example.com", emailVerified: false, isPrivateEmail: false, givenName: "Ada", familyName: nil,
        createdAt: WireTimestamp(secondsSince1970: 1_800_000_000))

    @Test("GET /v1/me round-trips; the username is null without one and only the password identity names it")
    func accountRoundTrip() throws {
        let account = WireAccount(
            user: Self.user, username: "ada@example.com",
            identities: [
                WireIdentity(provider: "password", email: "ada@example.com", username: "ada@example.com", createdAt: Self.user.createdAt),
                WireIdentity(provider: "apple", email: nil, createdAt: WireTimestamp(secondsSince1970: 1_800_000_060)),
            ],
            factors: [WireFactor(type: .deviceKey, id: "dk_1", label: "iPhone"), WireFactor(type: .totp)])
        #expect(try WireAccount(json: account.json) == account)
        #expect(account.json["identities"]?.arrayValue?.first?["username"] == "ada@example.com")
        let apple = try #require(account.json["identities"]?.arrayValue?.last?.objectValue)
        #expect(apple["username"] == nil && apple["email"] == .null && apple["created_at"] == "2027-01-15T08:01:00Z")

        let appleOnly = WireAccount(user: Self.user, username: nil, identities: [], factors: [])
        #expect(appleOnly.json["username"] == .null)
        #expect(try WireAccount(json: appleOnly.json) == appleOnly)
    }

    @Test("PATCH /v1/me keeps absent, null and a string apart in both directions")
    func nameUpdateDistinction() throws {
        let body = try WireAccountUpdateRequest(parsing: Array(#"{"given_name":null,"family_name":"Lovelace"}"#.utf8))
        #expect(body.givenName == .clear && body.familyName == .set("Lovelace"))
        #expect(try WireAccountUpdateRequest(parsing: Array("{}".utf8)) == WireAccountUpdateRequest())
        for update in [
            WireAccountUpdateRequest(), WireAccountUpdateRequest(givenName: .clear), WireAccountUpdateRequest(givenName: .set(""), familyName: .set("X")),
        ] {
            #expect(try WireAccountUpdateRequest(json: update.json) == update)
        }
        #expect(WireAccountUpdateRequest(givenName: .clear).json.objectValue?.keys.sorted() == ["given_name"])
        #expect(throws: WireDecodingError(code: .mistyped, path: "given_name", expectation: "must be a string or null")) {
            try WireAccountUpdateRequest(parsing: Array(#"{"given_name":42}"#.utf8))
        }
        #expect(WireAccountUpdateRequest.members == ["given_name", "family_name"])
        let response = WireAccountUpdateResponse(user: Self.user)
        #expect(try WireAccountUpdateResponse(json: response.json) == response)
    }

    @Test("the password requests round-trip and name a missing or mistyped member as the server answers it")
    func passwordRequests() throws {
        let signUp = WirePasswordSignUpRequest(username: "ada", password: "correct horse battery", givenName: "Ada")
        #expect(try WirePasswordSignUpRequest(json: signUp.json) == signUp)
        #expect(signUp.json["family_name"] == nil)
        let login = WirePasswordLoginRequest(username: "ada", password: "correct horse battery")
        #expect(try WirePasswordLoginRequest(json: login.json) == login)
        let change = WirePasswordChangeRequest(currentPassword: "old one here", newPassword: "new one here")
        #expect(try WirePasswordChangeRequest(json: change.json) == change)
        #expect(change.json["current_password"] == "old one here" && change.json["new_password"] == "new one here")

        let cases: [(String, String)] = [
            (#"{"password":"x"}"#, "username is required"),
            (#"{"username":"ada"}"#, "password is required"),
            (#"{"username":5,"password":"x"}"#, "username must be a string"),
            (#"{"username":"ada","password":"x","given_name":7}"#, "given_name must be a string"),
            (#""ada""#, "the body must be a JSON object"),
        ]
        for (body, description) in cases {
            do {
                _ = try WirePasswordSignUpRequest(parsing: Array(body.utf8))
                Issue.record("\(body) was accepted")
            } catch {
                #expect(error.description == description)
            }
        }
    }
}
