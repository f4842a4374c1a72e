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

/// Passkey registration for a signed-in account over HTTP, with the software authenticator
/// (docs/security.md S34), and the list, rename and delete endpoints.
@Suite("Passkey registration")
struct PasskeyRegistrationTests {
    typealias Authenticator = SoftwareAuthenticator

    static func with(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with({
            $0.passkeys.rpID = Authenticator.rpID
            $0.passkeys.origins = [Authenticator.origin]
        }, body)
    }

    static func bearer(_ token: TokenResponse) -> [String: String] { ["Authorization": "Bearer \(token.accessToken)"] }

    /// `RegistrationResponseJSON`, as `credential.toJSON()` gives it.
    static func json(_ response: RegistrationResponse, transports: [String] = ["internal", "hybrid"]) -> JSONValue {
        let id = JSONValue.string(Base64URL.encode(response.credentialID))
        return [
            "id": id, "rawId": id, "type": "public-key", "clientExtensionResults": [:], "authenticatorAttachment": "platform",
            "response": [
                "clientDataJSON": .string(Base64URL.encode(response.clientDataJSON)),
                "attestationObject": .string(Base64URL.encode(response.attestationObject)),
                "transports": .array(transports.map(JSONValue.string)),
            ],
        ]
    }

    /// A registration flow: its id and challenge.
    static func options(_ server: TestServer, _ token: TokenResponse) async throws -> (flowID: String, challenge: [UInt8], publicKey: JSONValue) {
        let response = try await server.request(.post, "/v1/passkeys/registration/options", json: [:], headers: bearer(token))
        #expect(response.status == 200, "\(response.text)")
        let options = try response.decode(WirePasskeyOptions.self)
        let challenge = try #require(options.publicKey["challenge"]?.stringValue.flatMap { Base64URL.decode($0) })
        return (options.flowID, challenge, options.publicKey)
    }

    static func register(
        _ server: TestServer, _ token: TokenResponse, flowID: String, _ response: RegistrationResponse, name: String? = nil
    ) async throws -> TestResponse {
        var body: [String: JSONValue] = ["flow_id": .string(flowID), "credential": json(response)]
        if let name { body["name"] = .string(name) }
        return try await server.request(.post, "/v1/passkeys", json: .object(body), headers: bearer(token))
    }

    static func storedCount(_ server: TestServer) async throws -> Int {
        try await server.database.read { Int(try $0.queryOne("SELECT count(*) AS n FROM passkeys", [])?.int("n") ?? 0) }
    }

    @Test("S34: the software authenticator registers a passkey over HTTP: the options, the answer, the row and the audit entry")
    func registers() async throws {
        try await Self.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let (flowID, challenge, publicKey) = try await Self.options(server, token)
            #expect(challenge.count >= 32)
            #expect(publicKey["rp"]?["id"] == "example.com")
            #expect(publicKey["rp"]?["name"] == "Latchkey")
            let handle = try #require(publicKey["user"]?["id"]?.stringValue.flatMap { Base64URL.decode($0) })
            #expect(handle.count == 64)
            #expect(publicKey["user"]?["name"] == "ada@example.com")
            #expect(publicKey["user"]?["displayName"] == "Ada")
            #expect(publicKey["pubKeyCredParams"]?.arrayValue?.compactMap { $0["alg"]?.numberValue } == [-7, -8, -257])
            #expect(publicKey["authenticatorSelection"]?["residentKey"] == "required")
            #expect(publicKey["authenticatorSelection"]?["userVerification"] == "required")
            #expect(publicKey["excludeCredentials"] == .array([]))
            #expect(publicKey["attestation"] == "none")
            #expect(publicKey["hints"] == ["client-device"])
            #expect(publicKey["timeout"] == .number(300_000))
            let stored = try await server.database.read { try PasskeyRepository().userHandle(userID: user.id, on: $0) }
            #expect(stored == handle, "the handle is the account's, assigned once")

            var authenticator = Authenticator.es256()
            authenticator.userHandle = handle
            let response = try await Self.register(
                server, token, flowID: flowID, try authenticator.registration(challenge: challenge, flags: Authenticator.up | Authenticator.uv | Authenticator.at | Authenticator.be | Authenticator.bs),
                name: "  iPhone ")
            #expect(response.status == 201, "\(response.text)")
            let passkey = try response.decode(WirePasskey.self)
            #expect(passkey.name == "iPhone")
            #expect(passkey.backedUp)
            #expect(passkey.transports == ["internal", "hybrid"])
            #expect(passkey.aaguid == "a1a1a1a1-a1a1-a1a1-a1a1-a1a1a1a1a1a1")
            #expect(passkey.lastUsedAt == nil)

            let credentialID = authenticator.credentialID
            let row = try #require(try await server.database.read { try PasskeyRepository().find(credentialID: credentialID, on: $0) })
            #expect(row.id == passkey.id && row.userID == user.id)
            #expect(row.publicKey == CBOREncoder.encode(authenticator.coseKey))
            #expect(row.algorithm == -7 && row.signCount == 0 && row.backupEligible && row.backedUp && row.attestation == "none")
            let entries = try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.registered")
            #expect(entries.count == 1 && entries.first?.details["passkey_id"] == passkey.id)
            #expect(server.application.metrics.value(.passkeyRegistrations, ["outcome": "success"]) == 1)

            // The next flow excludes it and names the same handle.
            let (_, _, next) = try await Self.options(server, token)
            #expect(next["user"]?["id"] == publicKey["user"]?["id"])
            #expect(next["excludeCredentials"]?.arrayValue?.first?["id"] == .string(Base64URL.encode(authenticator.credentialID)))
        }
    }

    enum Variant: String, CaseIterable, Sendable {
        case wrongChallenge, wrongOrigin, crossOrigin, wrongRPID, noUserPresence, noUserVerification, backedUpWithoutEligibility, unofferedAlgorithm,
            wrongType
    }

    @Test("S34: each hostile registration is refused with its reason, audited, and stores nothing", arguments: Variant.allCases)
    func hostile(variant: Variant) async throws {
        try await Self.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let (flowID, challenge, _) = try await Self.options(server, token)
            let authenticator = Authenticator.es256()
            let up = Authenticator.up, uv = Authenticator.uv, at = Authenticator.at
            let (response, reason): (RegistrationResponse, String)
            switch variant {
            case .wrongChallenge:
                (response, reason) = (try authenticator.registration(challenge: SecureRandom.bytes(count: 32)), "challenge_mismatch")
            case .wrongOrigin:
                (response, reason) = (try authenticator.registration(challenge: challenge, origin: "https://evil.example"), "origin_mismatch")
            case .crossOrigin:
                (response, reason) = (try authenticator.registration(challenge: challenge, clientDataExtra: ",\"crossOrigin\":true"), "cross_origin")
            case .backedUpWithoutEligibility:
                (response, reason) = (try authenticator.registration(challenge: challenge, flags: up | uv | at | Authenticator.bs), "invalid_backup_state")
            case .wrongRPID:
                (response, reason) = (try authenticator.registration(challenge: challenge, rpID: "evil.example"), "rp_id_mismatch")
            case .noUserPresence:
                (response, reason) = (try authenticator.registration(challenge: challenge, flags: uv | at), "user_not_present")
            case .noUserVerification:
                (response, reason) = (try authenticator.registration(challenge: challenge, flags: up | at), "user_not_verified")
            case .wrongType:
                (response, reason) = (try authenticator.registration(challenge: challenge, type: "webauthn.get"), "type_mismatch")
            case .unofferedAlgorithm:
                guard case .map(let entries) = authenticator.coseKey else { Issue.record("not a map"); return }
                let es384 = CBORValue.map(entries.filter { $0.key != .integer(3) } + [CBORMapEntry(.integer(3), .integer(-35))])
                let data = Authenticator.authenticatorData(
                    flags: up | uv | at, signCount: 0, attested: authenticator.attestedCredentialData(coseKey: CBOREncoder.encode(es384)))
                (response, reason) = (try authenticator.registration(challenge: challenge, authenticatorData: data), "unsupported_algorithm")
            }
            let answer = try await Self.register(server, token, flowID: flowID, response)
            #expect(answer.status == 400, "\(answer.text)")
            let error = try answer.decode(WireErrorBody.self)
            #expect(error.error == .invalidGrant)
            #expect(error.reason == reason)
            #expect(try await Self.storedCount(server) == 0)
            let entries = try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.registration_failed")
            #expect(entries.map { $0.details["reason"] } == [reason])
            #expect(server.application.metrics.value(.passkeyRegistrations, ["outcome": "failure"]) == 1)

            // The flow was used by the refusal: the right answer now finds no flow.
            let again = try await Self.register(server, token, flowID: flowID, try authenticator.registration(challenge: challenge))
            #expect(again.status == 400)
            #expect(try again.decode(WireErrorBody.self).reason == "unknown_flow")
            #expect(try await Self.storedCount(server) == 0)
        }
    }

    @Test("S34: a flow is used once, is the account's own, and expires; a credential registered already is 409 and stored once")
    func flowsAndDuplicates() async throws {
        let clock = TestClock()
        try await TestServer.with(clock: clock, {
            $0.passkeys.rpID = Authenticator.rpID
            $0.passkeys.origins = [Authenticator.origin]
        }) { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let authenticator = Authenticator.es256()
            let first = try await Self.options(server, token)
            let ok = try await Self.register(server, token, flowID: first.flowID, try authenticator.registration(challenge: first.challenge))
            #expect(ok.status == 201)
            let reused = try await Self.register(server, token, flowID: first.flowID, try Authenticator.es256().registration(challenge: first.challenge))
            #expect(reused.status == 400)
            #expect(try reused.decode(WireErrorBody.self).reason == "unknown_flow")

            // The same credential again, through a fresh flow.
            let second = try await Self.options(server, token)
            let duplicate = try await Self.register(server, token, flowID: second.flowID, try authenticator.registration(challenge: second.challenge))
            #expect(duplicate.status == 409, "\(duplicate.text)")
            #expect(try duplicate.decode(WireErrorBody.self).error == .conflict)
            #expect(try await Self.storedCount(server) == 1)

            // Another account cannot answer this account's flow.
            let other = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let otherToken = try await server.startSession(for: other)
            let third = try await Self.options(server, token)
            let stolen = try await Self.register(server, otherToken, flowID: third.flowID, try Authenticator.es256().registration(challenge: third.challenge))
            #expect(stolen.status == 400)
            #expect(try stolen.decode(WireErrorBody.self).reason == "unknown_flow")

            // Past the timeout the flow is gone.
            let late = try await Self.options(server, token)
            clock.advance(by: 301)
            let expired = try await Self.register(server, token, flowID: late.flowID, try Authenticator.es256().registration(challenge: late.challenge))
            #expect(expired.status == 400)
            #expect(try expired.decode(WireErrorBody.self).reason == "unknown_flow")
            #expect(try await Self.storedCount(server) == 1)
        }
    }

    @Test("list, rename and delete the account's passkeys; deleting needs a fresh sign-in, and deleting the last way to sign in is 409")
    func manage() async throws {
        let clock = TestClock()
        try await TestServer.with(clock: clock, {
            $0.passkeys.rpID = Authenticator.rpID
            $0.passkeys.origins = [Authenticator.origin]
        }) { server in
            let user = try await server.createUser()
            let stale = try await server.startSession(for: user)
            clock.advance(by: 301)
            let token = try await server.startSession(for: user)
            var ids: [String] = []
            for name in ["Mac", "iPhone"] {
                let flow = try await Self.options(server, token)
                let response = try await Self.register(server, token, flowID: flow.flowID, try Authenticator.es256().registration(challenge: flow.challenge), name: name)
                ids.append(try response.decode(WirePasskey.self).id)
            }
            let list = try await server.request(.get, "/v1/passkeys", headers: Self.bearer(token))
            // Both were made at the same instant of the test clock: oldest first cannot order them.
            #expect(try Set(list.decode(WirePasskeyList.self).passkeys.map(\.name)) == ["Mac", "iPhone"])

            let renamed = try await server.request(.patch, "/v1/passkeys/\(ids[0])", json: ["name": "MacBook"], headers: Self.bearer(token))
            #expect(renamed.status == 200)
            #expect(try renamed.decode(WirePasskey.self).name == "MacBook")
            let badName = try await server.request(.patch, "/v1/passkeys/\(ids[0])", json: ["name": "  "], headers: Self.bearer(token))
            #expect(badName.status == 400)
            let missing = try await server.request(.patch, "/v1/passkeys/pk_nope", json: ["name": "x"], headers: Self.bearer(token))
            #expect(missing.status == 404)

            // Someone else's passkey is not found, for rename and delete alike.
            let other = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let otherToken = try await server.startSession(for: other)
            #expect(try await server.request(.delete, "/v1/passkeys/\(ids[0])", headers: Self.bearer(otherToken)).status == 404)

            // A session signed in more than five minutes ago cannot remove one.
            let staleDelete = try await server.request(.delete, "/v1/passkeys/\(ids[0])", headers: Self.bearer(stale))
            #expect(staleDelete.status == 403, "\(staleDelete.text)")
            #expect(try staleDelete.decode(WireErrorBody.self).error == .insufficientAuthentication)
            #expect(try await server.request(.delete, "/v1/passkeys/\(ids[0])", headers: Self.bearer(token)).status == 204)
            // No password, no Apple identity: the remaining passkey is the only way in.
            let last = try await server.request(.delete, "/v1/passkeys/\(ids[1])", headers: Self.bearer(token))
            #expect(last.status == 409, "\(last.text)")
            #expect(try last.decode(WireErrorBody.self).error == .conflict)
            #expect(try await Self.storedCount(server) == 1)
            let events = try await server.auditEvents(user.id)
            #expect(events.contains("passkey.renamed") && events.filter { $0 == "passkey.removed" }.count == 1)
            #expect(try await server.request(.get, "/v1/passkeys").status == 401)
        }
    }
}
