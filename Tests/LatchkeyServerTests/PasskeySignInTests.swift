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

/// Signing in with a passkey, creating an account with one, a passkey as the second factor, and
/// the automatic upgrade, over HTTP with the software authenticator (docs/security.md S34–S36).
@Suite("Passkey sign-in")
struct PasskeySignInTests {
    typealias Authenticator = SoftwareAuthenticator
    typealias Registration = PasskeyRegistrationTests

    /// `AuthenticationResponseJSON`, as `credential.toJSON()` gives it.
    static func json(_ response: AuthenticationResponse) -> JSONValue {
        let id = JSONValue.string(Base64URL.encode(response.credentialID))
        var inner: [String: JSONValue] = [
            "clientDataJSON": .string(Base64URL.encode(response.clientDataJSON)),
            "authenticatorData": .string(Base64URL.encode(response.authenticatorData)),
            "signature": .string(Base64URL.encode(response.signature)),
        ]
        if let handle = response.userHandle { inner["userHandle"] = .string(Base64URL.encode(handle)) }
        return ["id": id, "rawId": id, "type": "public-key", "clientExtensionResults": [:], "authenticatorAttachment": "platform", "response": .object(inner)]
    }

    /// A user with one registered passkey; the authenticator carries the account's user handle.
    static func registered(_ server: TestServer, email: String = "ada@example.com") async throws -> (User, Authenticator, passkeyID: String) {
        let user = try await server.createUser(email: email)
        let token = try await server.startSession(for: user)
        let (flowID, challenge, publicKey) = try await Registration.options(server, token)
        var authenticator = Authenticator.es256()
        authenticator.userHandle = try #require(publicKey["user"]?["id"]?.stringValue.flatMap { Base64URL.decode($0) })
        let registration = Authenticator.up | Authenticator.uv | Authenticator.at | Authenticator.be | Authenticator.bs
        let answer = try await Registration.register(server, token, flowID: flowID, try authenticator.registration(challenge: challenge, flags: registration))
        #expect(answer.status == 201, "\(answer.text)")
        return (user, authenticator, try answer.decode(WirePasskey.self).id)
    }

    static func options(_ server: TestServer, _ path: String, _ body: JSONValue = [:]) async throws -> (flowID: String, challenge: [UInt8], publicKey: JSONValue) {
        let response = try await server.request(.post, path, json: body)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.headers["Cache-Control"] == "no-store")
        let options = try response.decode(WirePasskeyOptions.self)
        let challenge = try #require(options.publicKey["challenge"]?.stringValue.flatMap { Base64URL.decode($0) })
        return (options.flowID, challenge, options.publicKey)
    }

    static func signIn(_ server: TestServer, _ flowID: String, _ response: AuthenticationResponse) async throws -> TestResponse {
        try await server.request(.post, "/v1/auth/passkey", json: ["flow_id": .string(flowID), "credential": json(response)])
    }

    static func stored(_ server: TestServer, _ authenticator: Authenticator) async throws -> Passkey {
        let id = authenticator.credentialID
        return try #require(try await server.database.read { try PasskeyRepository().find(credentialID: id, on: $0) })
    }

    static func spentFlows(_ server: TestServer) async throws -> Int64? {
        try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM passkey_ceremonies", [])?.int("n") }
    }

    static let flags = Authenticator.up | Authenticator.uv | Authenticator.be | Authenticator.bs

    @Test("S35: a discoverable sign-in: options write nothing, empty allowCredentials, the assertion signs in with amr swk, user, mfa, never mfa_required, audited and counted")
    func discoverable() async throws {
        try await Registration.with { server in
            let (user, authenticator, passkeyID) = try await Self.registered(server)
            _ = try await TOTPTests.enrolled(server, user: user)
            let spent = try #require(try await Self.spentFlows(server), "the registration's")
            let (flowID, challenge, publicKey) = try await Self.options(server, "/v1/auth/passkey/options")
            #expect(challenge.count >= 32)
            #expect(publicKey["rpId"] == "example.com")
            #expect(publicKey["allowCredentials"] == [])
            #expect(publicKey["userVerification"] == "required")
            #expect(publicKey["timeout"] == 300_000)
            #expect(try await Self.spentFlows(server) == spent, "options write nothing")
            let response = try await Self.signIn(server, flowID, try authenticator.assertion(challenge: challenge, flags: Self.flags))
            #expect(response.status == 200, "a user with TOTP is not asked for it: \(response.text)")
            let tokens = try response.tokens
            #expect(tokens.user.id == user.id)
            #expect(try Insecure.unverifiedContents(of: tokens.accessToken).claims["amr"] == ["swk", "user", "mfa"])
            let session = try #require(try await server.application.services.sessions.session(tokens.sessionID))
            #expect(session.secondFactorAt != nil)
            #expect(try await Self.stored(server, authenticator).lastUsedAt != nil)
            let used = try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.used")
            #expect(used.map { $0.details["passkey_id"] } == [passkeyID] && used.first?.details["use"] == "sign_in")
            #expect(server.application.metrics.value(.signIns, ["method": "passkey", "outcome": "success"]) == 1)

            #expect(try await Self.spentFlows(server) == spent + 1)
            // The flow is spent.
            let again = try await Self.signIn(server, flowID, try authenticator.assertion(challenge: challenge, flags: Self.flags))
            #expect(try again.decode(WireErrorBody.self).reason == "unknown_flow")
        }
    }

    @Test("S36: sign-in with a username names the account's passkeys; an unknown name gets the same shape, the same on every request")
    func named() async throws {
        try await Registration.with { server in
            let (_, authenticator, _) = try await Self.registered(server)
            let known = try await Self.options(server, "/v1/auth/passkey/options", ["username": "Ada@Example.com"])
            let allowed = try #require(known.publicKey["allowCredentials"]?.arrayValue)
            #expect(allowed.map { $0["id"] } == [.string(Base64URL.encode(authenticator.credentialID))])
            #expect(allowed.first?["transports"] == ["internal", "hybrid"])
            let response = try await Self.signIn(server, known.flowID, try authenticator.assertion(challenge: known.challenge, flags: Self.flags))
            #expect(response.status == 200, "\(response.text)")

            let unknown = try await Self.options(server, "/v1/auth/passkey/options", ["username": "nobody@example.com"])
            let repeated = try await Self.options(server, "/v1/auth/passkey/options", ["username": "nobody@example.com"])
            let standIn = try #require(unknown.publicKey["allowCredentials"]?.arrayValue)
            #expect(standIn.count == 1 && standIn == repeated.publicKey["allowCredentials"]?.arrayValue)
            #expect(Set(unknown.publicKey.objectValue?.keys ?? [:].keys) == Set(known.publicKey.objectValue?.keys ?? [:].keys))
            #expect(standIn.first?["id"] != allowed.first?["id"])

            // A real passkey cannot answer a flow for another name.
            let other = try await Self.signIn(server, unknown.flowID, try authenticator.assertion(challenge: unknown.challenge, flags: Self.flags))
            #expect(other.status == 400)
            #expect(try other.decode(WireErrorBody.self).reason == "credential_not_allowed")
        }
    }

    enum Variant: String, CaseIterable, Sendable {
        case wrongChallenge, wrongOrigin, wrongRPID, noUserPresence, noUserVerification, badSignature, otherUserHandle, noUserHandle,
            unknownCredential, wrongType, crossOrigin
    }

    @Test("S35: each hostile assertion is refused with its reason and audited; the flow is spent and the passkey unchanged", arguments: Variant.allCases)
    func hostile(variant: Variant) async throws {
        try await Registration.with { server in
            let (user, authenticator, _) = try await Self.registered(server)
            let (flowID, challenge, _) = try await Self.options(server, "/v1/auth/passkey/options")
            let up = Authenticator.up, uv = Authenticator.uv
            let (response, reason): (AuthenticationResponse, String)
            switch variant {
            case .wrongChallenge: (response, reason) = (try authenticator.assertion(challenge: SecureRandom.bytes(count: 32), flags: Self.flags), "challenge_mismatch")
            case .wrongOrigin: (response, reason) = (try authenticator.assertion(challenge: challenge, origin: "https://evil.example", flags: Self.flags), "origin_mismatch")
            case .crossOrigin:
                (response, reason) = (try authenticator.assertion(challenge: challenge, clientDataExtra: ",\"crossOrigin\":true", flags: Self.flags), "cross_origin")
            case .wrongRPID: (response, reason) = (try authenticator.assertion(challenge: challenge, rpID: "evil.example", flags: Self.flags), "rp_id_mismatch")
            case .noUserPresence: (response, reason) = (try authenticator.assertion(challenge: challenge, flags: uv), "user_not_present")
            case .noUserVerification: (response, reason) = (try authenticator.assertion(challenge: challenge, flags: up), "user_not_verified")
            case .wrongType: (response, reason) = (try authenticator.assertion(challenge: challenge, type: "webauthn.create", flags: Self.flags), "type_mismatch")
            case .badSignature:
                (response, reason) = (try authenticator.assertion(challenge: challenge, flags: Self.flags, signedData: { $0 + [0] }), "bad_signature")
            case .otherUserHandle:
                (response, reason) = (try authenticator.assertion(challenge: challenge, flags: Self.flags, userHandle: SecureRandom.bytes(count: 64)), "user_handle_mismatch")
            case .noUserHandle:
                (response, reason) = (try authenticator.assertion(challenge: challenge, flags: Self.flags, userHandle: .some(nil)), "user_handle_mismatch")
            case .unknownCredential:
                (response, reason) = (try Authenticator.es256().assertion(challenge: challenge, flags: Self.flags), "unknown_credential")
            }
            let before = try await Self.stored(server, authenticator)
            let answer = try await Self.signIn(server, flowID, response)
            #expect(answer.status == 400, "\(answer.text)")
            let error = try answer.decode(WireErrorBody.self)
            #expect(error.error == .invalidGrant && error.reason == reason)
            #expect(try await Self.stored(server, authenticator) == before, "nothing changed")
            let failed = try await AuditLog(database: server.database).entries(limit: 100).filter { $0.event.rawValue == "passkey.failed" }
            #expect(failed.map { $0.details["reason"] } == [reason])
            if variant != .unknownCredential { #expect(failed.first?.userID == user.id) }
            #expect(server.application.metrics.value(.signIns, ["method": "passkey", "outcome": "failure"]) == 1)
            #expect(try await server.application.services.sessions.sessions(userID: user.id).count == 1, "no session but the registering one")

            let again = try await Self.signIn(server, flowID, try authenticator.assertion(challenge: challenge, flags: Self.flags))
            #expect(try again.decode(WireErrorBody.self).reason == "unknown_flow", "a refusal spends the flow")
        }
    }

    @Test("S35: sign counts: zero always passes, a rising count is stored, a count that does not rise is cloned_authenticator, audited; BS is updated, a BE change recorded")
    func signCounts() async throws {
        try await Registration.with { server in
            let (user, authenticator, _) = try await Self.registered(server)
            func signIn(_ count: UInt32, flags: UInt8 = Self.flags) async throws -> TestResponse {
                let (flowID, challenge, _) = try await Self.options(server, "/v1/auth/passkey/options")
                return try await Self.signIn(server, flowID, try authenticator.assertion(challenge: challenge, flags: flags, signCount: count))
            }
            #expect(try await signIn(0).status == 200)
            #expect(try await signIn(0).status == 200, "synced passkeys always send zero")
            #expect(try await signIn(5).status == 200)
            #expect(try await Self.stored(server, authenticator).signCount == 5)
            let cloned = try await signIn(5)
            #expect(cloned.status == 400)
            #expect(try cloned.decode(WireErrorBody.self).reason == "cloned_authenticator")
            #expect(try await signIn(3).status == 400)
            #expect(try await Self.stored(server, authenticator).signCount == 5)
            let failed = try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.failed")
            #expect(failed.map { $0.details["reason"] } == ["cloned_authenticator", "cloned_authenticator"])

            // BS off now, and BE off: signed in, BS stored, the BE change recorded.
            #expect(try await signIn(6, flags: Authenticator.up | Authenticator.uv).status == 200)
            let stored = try await Self.stored(server, authenticator)
            #expect(!stored.backedUp && stored.backupEligible, "BS follows the authenticator; BE stays as registered")
            let used = try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.used")
            #expect(used.first?.details["backup_eligible_changed"] == "true" && used.first?.details["backed_up"] == "false")
        }
    }

    @Test("S35: of concurrent sign-ins that carry one sign count exactly one is accepted; of rising counts the highest is stored")
    func concurrentSignCounts() async throws {
        try await Registration.with { server in
            let (_, authenticator, _) = try await Self.registered(server)
            func attempts(_ counts: [UInt32]) async throws -> [Int] {
                var answers: [(flowID: String, response: AuthenticationResponse)] = []
                for count in counts {
                    let (flowID, challenge, _) = try await Self.options(server, "/v1/auth/passkey/options")
                    answers.append((flowID, try authenticator.assertion(challenge: challenge, flags: Self.flags, signCount: count)))
                }
                return try await withThrowingTaskGroup(of: Int.self) { group in
                    for answer in answers { group.addTask { try await Self.signIn(server, answer.flowID, answer.response).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            let same = try await attempts(Array(repeating: 9, count: 8))
            #expect(same.filter { $0 == 200 }.count == 1 && same.filter { $0 == 400 }.count == 7, "\(same)")
            // Arriving in any order, each is checked against the count stored when it lands: the
            // highest always passes, a lower one after it is refused.
            let rising = try await attempts(Array(10...17))
            #expect(rising.contains(200))
            #expect(try await Self.stored(server, authenticator).signCount == 17)
        }
    }

    @Test("S35: a discoverable flow outlives the timeout (AutoFill ignores it) and ends after 30 minutes; a named flow ends at the timeout")
    func lifetimes() async throws {
        let clock = TestClock()
        try await TestServer.with(clock: clock, {
            $0.passkeys.rpID = Authenticator.rpID
            $0.passkeys.origins = [Authenticator.origin]
        }) { server in
            let (_, authenticator, _) = try await Self.registered(server)
            let discoverable = try await Self.options(server, "/v1/auth/passkey/options")
            let named = try await Self.options(server, "/v1/auth/passkey/options", ["username": "ada@example.com"])
            let late = try await Self.options(server, "/v1/auth/passkey/options")
            clock.advance(by: 600)
            #expect(try await Self.signIn(server, discoverable.flowID, try authenticator.assertion(challenge: discoverable.challenge, flags: Self.flags)).status == 200)
            let expired = try await Self.signIn(server, named.flowID, try authenticator.assertion(challenge: named.challenge, flags: Self.flags))
            #expect(try expired.decode(WireErrorBody.self).reason == "unknown_flow")
            clock.advance(by: 1_300)
            let gone = try await Self.signIn(server, late.flowID, try authenticator.assertion(challenge: late.challenge, flags: Self.flags))
            #expect(try gone.decode(WireErrorBody.self).reason == "unknown_flow")
        }
    }

    @Test("S36: sign-up with a passkey: 201, created, no password, the email unverified, the passkey stored and audited; a taken name is 409; nothing is written before the answer")
    func signUp() async throws {
        try await Registration.with { server in
            let (flowID, challenge, publicKey) = try await Self.options(
                server, "/v1/auth/passkey/signup/options", ["username": "grace@example.com", "given_name": "Grace", "family_name": "Hopper"])
            #expect(publicKey["user"]?["name"] == "grace@example.com" && publicKey["user"]?["displayName"] == "Grace Hopper")
            #expect(publicKey["excludeCredentials"] == [])
            #expect(try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM users", [])?.int("n") } == 0)
            var authenticator = Authenticator.es256()
            authenticator.userHandle = try #require(publicKey["user"]?["id"]?.stringValue.flatMap { Base64URL.decode($0) })
            let registration = try authenticator.registration(challenge: challenge, flags: Authenticator.up | Authenticator.uv | Authenticator.at | Authenticator.be)
            let response = try await server.request(
                .post, "/v1/auth/passkey/signup", json: ["flow_id": .string(flowID), "credential": Registration.json(registration)])
            #expect(response.status == 201, "\(response.text)")
            let tokens = try response.tokens
            #expect(tokens.created)
            #expect(try Insecure.unverifiedContents(of: tokens.accessToken).claims["amr"] == ["swk", "user", "mfa"])
            let userID = tokens.user.id
            let user = try #require(try await server.database.read { try UserRepository(database: server.database).find(userID, on: $0) })
            #expect(user.email == "grace@example.com" && !user.emailVerified && user.givenName == "Grace")
            #expect(try await server.database.read { try PasswordCredentialRepository().find(userID: user.id, on: $0) } == nil)
            #expect(try await Self.stored(server, authenticator).userID == user.id)
            #expect(try await server.auditEvents(user.id).contains("passkey.sign_up"))

            // It signs in again, discoverably.
            let next = try await Self.options(server, "/v1/auth/passkey/options")
            #expect(try await Self.signIn(server, next.flowID, try authenticator.assertion(challenge: next.challenge, flags: Self.flags)).status == 200)

            // The name is taken now: at the options, and at the answer of a flow begun before.
            let taken = try await server.request(.post, "/v1/auth/passkey/signup/options", json: ["username": "grace@example.com"])
            #expect(taken.status == 409)
            let anonymous = try await Self.options(server, "/v1/auth/passkey/signup/options")
            #expect(anonymous.publicKey["user"]?["name"] == "Latchkey")
            let handle = try #require(anonymous.publicKey["user"]?["id"]?.stringValue.flatMap { Base64URL.decode($0) })
            #expect(handle != authenticator.userHandle)
            let notEmail = try await server.request(.post, "/v1/auth/passkey/signup/options", json: ["username": "grace"])
            #expect(notEmail.status == 400)
        }
    }

    @Test("S34: a passkey sign-up refused by a check writes no account and spends the flow")
    func signUpRefused() async throws {
        try await Registration.with { server in
            let (flowID, challenge, _) = try await Self.options(server, "/v1/auth/passkey/signup/options", ["username": "grace@example.com"])
            let bad = try Authenticator.es256().registration(challenge: challenge, origin: "https://evil.example")
            let response = try await server.request(.post, "/v1/auth/passkey/signup", json: ["flow_id": .string(flowID), "credential": Registration.json(bad)])
            #expect(response.status == 400)
            #expect(try response.decode(WireErrorBody.self).reason == "origin_mismatch")
            #expect(try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM users", [])?.int("n") } == 0)
            #expect(try await Registration.storedCount(server) == 0)
            let failed = try await AuditLog(database: server.database).entries(limit: 10).filter { $0.event.rawValue == "passkey.registration_failed" }
            #expect(failed.first?.details["use"] == "sign_up" && failed.first?.details["reason"] == "origin_mismatch")
            let good = try Authenticator.es256().registration(challenge: challenge)
            let again = try await server.request(.post, "/v1/auth/passkey/signup", json: ["flow_id": .string(flowID), "credential": Registration.json(good)])
            #expect(try again.decode(WireErrorBody.self).reason == "unknown_flow")
        }
    }

    @Test("S35: after a password, mfa_required lists the passkey; its flow completes the sign-in with amr pwd, swk, mfa; a bad one counts as a wrong proof")
    func secondFactor() async throws {
        try await Registration.with { server in
            let (user, authenticator, passkeyID) = try await Self.registered(server)
            _ = try await TOTPTests.enrolled(server, user: user)
            let (mfaToken, factors) = try await MFATests.mfaRequired(server, user)
            #expect(factors.arrayValue?.contains(["type": "passkey"]) == true)

            let (flowID, challenge, publicKey) = try await Self.options(server, "/v1/mfa/passkey/options", ["mfa_token": .string(mfaToken)])
            #expect(publicKey["allowCredentials"]?.arrayValue?.map { $0["id"] } == [.string(Base64URL.encode(authenticator.credentialID))])
            let bad = try authenticator.assertion(challenge: challenge, flags: Self.flags, signedData: { $0 + [1] })
            let refused = try await MFATests.verify(server, ["mfa_token": .string(mfaToken), "flow_id": .string(flowID), "credential": Self.json(bad)])
            #expect(refused.status == 400)
            #expect(try refused.decode(WireErrorBody.self).reason == "bad_signature")
            let failures = try await server.database.read { try $0.queryOne("SELECT failures FROM mfa_tokens", [])?.int("failures") }
            #expect(failures == 1, "a refused passkey counts as a wrong proof")

            let (secondFlow, secondChallenge, _) = try await Self.options(server, "/v1/mfa/passkey/options", ["mfa_token": .string(mfaToken)])
            let good = try authenticator.assertion(challenge: secondChallenge, flags: Self.flags)
            let response = try await MFATests.verify(server, ["mfa_token": .string(mfaToken), "flow_id": .string(secondFlow), "credential": Self.json(good)])
            #expect(response.status == 200, "\(response.text)")
            #expect(try Insecure.unverifiedContents(of: try response.tokens.accessToken).claims["amr"] == ["pwd", "swk", "mfa"])
            let used = try await AuditLog(database: server.database).entries(userID: user.id, event: "passkey.used")
            #expect(used.first?.details["use"] == "mfa" && used.first?.details["passkey_id"] == passkeyID)

            // A sign-in flow is not a second-factor flow, and a spent mfa_token gets no options.
            let (signInFlow, signInChallenge, _) = try await Self.options(server, "/v1/auth/passkey/options")
            let (other, _) = try await MFATests.mfaRequired(server, user)
            let crossed = try await MFATests.verify(
                server,
                ["mfa_token": .string(other), "flow_id": .string(signInFlow), "credential": Self.json(try authenticator.assertion(challenge: signInChallenge, flags: Self.flags))])
            #expect(try crossed.decode(WireErrorBody.self).reason == "unknown_flow")
            let spent = try await server.request(.post, "/v1/mfa/passkey/options", json: ["mfa_token": .string(mfaToken)])
            #expect(spent.status == 400)
        }
    }

    @Test("S34: a password account with a passkey and no second factor signs in with the password alone: a passkey turns no MFA on")
    func passkeyAloneAsksNoSecondFactor() async throws {
        try await Registration.with { server in
            let (user, _, _) = try await Self.registered(server)
            guard case .success = try await server.signIn(user) else { Issue.record("expected a session"); return }
        }
    }

    @Test("S34: a conditional registration (automatic upgrade) takes an answer without UP and UV; a plain flow refuses that answer")
    func conditionalRegistration() async throws {
        try await Registration.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let silent = Authenticator.at | Authenticator.be | Authenticator.bs
            let plain = try await Registration.options(server, token)
            let refused = try await Registration.register(server, token, flowID: plain.flowID, try Authenticator.es256().registration(challenge: plain.challenge, flags: silent))
            #expect(try refused.decode(WireErrorBody.self).reason == "user_not_present")

            let response = try await server.request(
                .post, "/v1/passkeys/registration/options", json: ["mediation": "conditional"], headers: Registration.bearer(token))
            let options = try response.decode(WirePasskeyOptions.self)
            let challenge = try #require(options.publicKey["challenge"]?.stringValue.flatMap { Base64URL.decode($0) })
            let accepted = try await Registration.register(server, token, flowID: options.flowID, try Authenticator.es256().registration(challenge: challenge, flags: silent))
            #expect(accepted.status == 201, "\(accepted.text)")
            let odd = try await server.request(.post, "/v1/passkeys/registration/options", json: ["mediation": "silent"], headers: Registration.bearer(token))
            #expect(odd.status == 400)
        }
    }
}
