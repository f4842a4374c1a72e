import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

@Suite("Device keys, challenges and step-up")
struct DeviceKeyTests {
    static func bearer(_ token: TokenResponse) -> [String: String] { ["Authorization": "Bearer \(token.accessToken)"] }

    /// A signed-in user with one registered software device.
    static func registered(_ server: TestServer) async throws -> (User, TokenResponse, SoftwareDevice, String) {
        let user = try await server.createUser()
        let token = try await server.startSession(for: user)
        let device = SoftwareDevice()
        let response = try await device.register(on: server, bearer: bearer(token))
        #expect(response.status == 201, "\(response.text)")
        return (user, token, device, try response.decode(WireDevice.self).id)
    }

    /// (r, n − s): the other valid form of an ECDSA signature.
    static func malleated(_ der: [UInt8]) throws -> [UInt8] {
        let raw = try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation
        let order = [UInt8](hex: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        var s = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(order[index]) - Int(raw[32 + index]) - borrow
            s[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return try P256.Signing.ECDSASignature(rawRepresentation: Array(raw[..<32]) + s).derRepresentation
    }

    @Test("S16, S17, S18: an iOS-shaped key registers with proof of possession, and a step-up gives the same session hwk and mfa")
    func s16RegisterAndStepUp() async throws {
        // The old token is checked as reuse, so without the grace window of RefreshReuseGraceTests.
        try await TestServer.with({ $0.refreshTokenReuseGrace = 0 }) { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let device = SoftwareDevice()
            #expect(device.publicKey.count == 65 && device.publicKey[0] == 0x04)

            let challenge = try await server.request(.post, "/v1/challenges", json: ["purpose": "register"], headers: Self.bearer(token))
            #expect(challenge.status == 200)
            let challengeBody = try challenge.decode(WireChallenge.self)
            let bytes = try #require(Base64URL.decode(challengeBody.challenge))
            #expect(bytes.count == 32)
            #expect(challengeBody.expiresIn == 120)
            let challengeID = challengeBody.challengeID
            let stored = try #require(try await server.database.read { try $0.queryOne("SELECT * FROM challenges WHERE id = ?", [.text(challengeID)]) })
            #expect(try stored.blob("challenge_hash") == HashFunction.sha256.hash(bytes), "S7: only the hash is kept")
            #expect(try stored.string("purpose") == "register" && stored.optionalString("session_id") == token.session.id)

            // Apps send Data.base64EncodedString(): standard base64 with padding is accepted too.
            let response = try await server.request(
                .post, "/v1/devices",
                json: [
                    "public_key": .string(Data(device.publicKey).base64EncodedString()), "label": "Ada's iPhone",
                    "challenge_id": .string(challengeID), "signature": .string(Data(try device.sign(bytes)).base64EncodedString()),
                ],
                headers: Self.bearer(token))
            #expect(response.status == 201, "\(response.text)")
            // WireDevice requires created_at as an RFC 3339 timestamp: the decode checks it is there.
            let body = try response.decode(WireDevice.self)
            let deviceID = body.id
            #expect(body.label == "Ada's iPhone" && body.lastUsedAt == nil)
            let row = try #require(try await server.database.read { try $0.queryOne("SELECT * FROM device_keys WHERE id = ?", [.text(deviceID)]) })
            #expect(try row.blob("public_key") == device.publicKey && row.string("user_id") == user.id)
            #expect(try await server.auditEvents(user.id).contains("device_key.added"))

            let list = try await server.request(.get, "/v1/devices", headers: Self.bearer(token)).decode(WireDeviceList.self)
            #expect(list.devices.map(\.id) == [deviceID])

            server.clock.advance(by: 10)
            let stepUp = try await device.stepUp(on: server, bearer: Self.bearer(token), deviceID: deviceID)
            #expect(stepUp.status == 200, "\(stepUp.text)")
            let tokens = try stepUp.tokens
            #expect(tokens.sessionID == token.session.id, "the same session")
            let newRefresh = tokens.refreshToken
            #expect(newRefresh != token.refreshToken)
            let claims = try Insecure.unverifiedContents(of: tokens.accessToken).claims
            #expect(claims["amr"] == ["pwd", "hwk", "mfa"])
            #expect(claims["sid"]?.stringValue == token.session.id)
            let session = try #require(try await server.application.services.sessions.session(token.session.id))
            #expect(session.amr == ["pwd", "hwk", "mfa"] && session.secondFactorAt != nil)
            let device2 = try await server.request(.get, "/v1/devices", headers: try stepUp.bearer).decode(WireDeviceList.self)
            #expect(device2.devices.first?.lastUsedAt != nil, "last_used_at is set")
            #expect(try await server.auditEvents(user.id).contains("device_key.used"))
            #expect(server.application.metrics.value(.secondFactors, ["factor": "device_key", "use": "step_up", "outcome": "success"]) == 1)

            // S8: the old refresh token was retired by the step-up, like a refresh grant does.
            let retired = try await server.request(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": .string(token.refreshToken)])
            #expect(try retired.wireError.grantFailure == .reused)
        }
    }

    @Test("S16: a spent challenge cannot be replayed, also not with the malleated signature (r, n − s)")
    func s16Replay() async throws {
        try await TestServer.with { server in
            let (user, token, device, deviceID) = try await Self.registered(server)
            let challenge = try await server.request(.post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: Self.bearer(token))
                .decode(WireChallenge.self)
            let (id, signature) = try device.sign(challenge: challenge)
            let first = try await server.request(.post, "/v1/challenges/\(id)/verify", json: ["signature": .string(signature)], headers: Self.bearer(token))
            #expect(first.status == 200)
            let fresh = try first.bearer
            for replayed in [signature, Base64URL.encode(try Self.malleated(Base64URL.decode(signature)!))] {
                let replay = try await server.request(.post, "/v1/challenges/\(id)/verify", json: ["signature": .string(replayed)], headers: fresh)
                #expect(replay.status == 400)
                let refusal = try replay.wireError
                #expect(refusal.error == .invalidGrant && refusal.grantFailure == .reused)
            }
            // The malleated form is itself a valid signature: only the challenge id stops it.
            let challengeBytes = Base64URL.decode(challenge.challenge)!
            #expect(DeviceSignature.isValid(try Self.malleated(Base64URL.decode(signature)!), publicKey: device.publicKey, digest: HashFunction.sha256.hash(challengeBytes)))
            #expect(try await server.auditEvents(user.id).filter { $0 == "device_key.used" }.count == 1)
        }
    }

    @Test("S16: a challenge expires after 120 seconds")
    func s16Expired() async throws {
        try await TestServer.with { server in
            let (_, token, device, deviceID) = try await Self.registered(server)
            let challenge = try await server.request(.post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: Self.bearer(token))
            let (id, signature) = try device.sign(challengeIn: challenge)
            server.clock.advance(by: 121)
            let response = try await server.request(.post, "/v1/challenges/\(id)/verify", json: ["signature": .string(signature)], headers: Self.bearer(token))
            #expect(response.status == 400)
            let refusal = try response.wireError
            #expect(refusal.error == .invalidGrant && refusal.grantFailure == .expired)
            let session = try await server.application.services.sessions.session(token.session.id)
            #expect(session?.amr == ["pwd"], "nothing was issued")
        }
    }

    @Test("S16: a challenge bound to another device, user, session or purpose is refused")
    func s16Binding() async throws {
        try await TestServer.with { server in
            let (user, token, device, deviceID) = try await Self.registered(server)
            let other = SoftwareDevice()
            let otherResponse = try await other.register(on: server, bearer: Self.bearer(token), label: "iPad")
            let otherID = try otherResponse.decode(WireDevice.self).id
            #expect(otherID != deviceID)

            // Another device: a challenge for the iPhone signed by the iPad.
            let forPhone = try await server.request(.post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: Self.bearer(token))
            let (phoneChallenge, padSignature) = try other.sign(challengeIn: forPhone)
            let wrongDevice = try await server.request(.post, "/v1/challenges/\(phoneChallenge)/verify", json: ["signature": .string(padSignature)], headers: Self.bearer(token))
            #expect(wrongDevice.status == 400)
            #expect(try wrongDevice.wireError.grantFailure == .invalidSignature)
            #expect(try await server.auditEvents(user.id).contains("device_key.failed"))
            let spent = try await server.database.read { try $0.queryOne("SELECT used_at FROM challenges WHERE id = ?", [.text(phoneChallenge)]) }
            #expect(spent?.optionalDate("used_at") != nil, "a failed attempt spends the challenge: one try per challenge")

            // Another user: Grace cannot use Ada's challenge, even signed by Ada's key.
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let graceToken = try await server.startSession(for: grace)
            let adaChallenge = try await server.request(.post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: Self.bearer(token))
            let (adaID, adaSignature) = try device.sign(challengeIn: adaChallenge)
            let wrongUser = try await server.request(.post, "/v1/challenges/\(adaID)/verify", json: ["signature": .string(adaSignature)], headers: Self.bearer(graceToken))
            #expect(wrongUser.status == 400)
            #expect(try wrongUser.wireError.grantFailure == .unknown)
            let graceStepUp = try await server.request(.post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: Self.bearer(graceToken))
            #expect(graceStepUp.status == 404, "Grace cannot ask for a challenge for Ada's device")

            // Another session of the same user.
            let secondSession = try await server.startSession(for: user)
            let wrongSession = try await server.request(.post, "/v1/challenges/\(adaID)/verify", json: ["signature": .string(adaSignature)], headers: Self.bearer(secondSession))
            #expect(try wrongSession.wireError.grantFailure == .unknown)

            // Another purpose: a register challenge cannot step up, a step-up challenge cannot register.
            let register = try await server.request(.post, "/v1/challenges", json: ["purpose": "register"], headers: Self.bearer(token))
            let (registerID, registerSignature) = try device.sign(challengeIn: register)
            let wrongPurpose = try await server.request(.post, "/v1/challenges/\(registerID)/verify", json: ["signature": .string(registerSignature)], headers: Self.bearer(token))
            #expect(try wrongPurpose.wireError.grantFailure == .unknown)
            let third = SoftwareDevice()
            let asRegistration = try await server.request(
                .post, "/v1/devices",
                json: ["public_key": .string(Base64URL.encode(third.publicKey)), "label": "x", "challenge_id": .string(adaID), "signature": .string(Base64URL.encode(try third.sign([0])))],
                headers: Self.bearer(token))
            #expect(try asRegistration.wireError.grantFailure == .unknown)

            // The untouched challenge still works for its own session, device and purpose.
            let right = try await server.request(.post, "/v1/challenges/\(adaID)/verify", json: ["signature": .string(adaSignature)], headers: Self.bearer(token))
            #expect(right.status == 200)
        }
    }

    @Test("S17: BER, trailing bytes and raw r‖s signatures are refused; only strict DER verifies")
    func s17Encodings() async throws {
        try await TestServer.with { server in
            let (_, token, device, deviceID) = try await Self.registered(server)
            func attempt(_ transform: ([UInt8]) throws -> [UInt8]) async throws -> TestResponse {
                let challenge = try await server.request(.post, "/v1/challenges", json: ["purpose": "step_up", "device_id": .string(deviceID)], headers: Self.bearer(token))
                    .decode(WireChallenge.self)
                let bytes = Base64URL.decode(challenge.challenge)!
                let signature = try transform(try device.sign(bytes))
                return try await server.request(
                    .post, "/v1/challenges/\(challenge.challengeID)/verify", json: ["signature": .string(Base64URL.encode(signature))],
                    headers: Self.bearer(token))
            }
            // BER: the same SEQUENCE with a long-form length that fits the short form.
            let ber = try await attempt { der in [der[0], 0x81, der[1]] + der[2...] }
            #expect(ber.status == 400)
            #expect(try ber.wireError.grantFailure == .invalidSignature)
            let trailing = try await attempt { $0 + [0] }
            #expect(try trailing.wireError.grantFailure == .invalidSignature)
            let raw = try await attempt { try P256.Signing.ECDSASignature(derRepresentation: $0).rawRepresentation }
            #expect(try raw.wireError.grantFailure == .invalidSignature)
            let good = try await attempt { $0 }
            #expect(good.status == 200)
        }
    }

    @Test("S17: a public key off the curve, compressed or of the wrong length is refused at registration")
    func s17BadKeys() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let device = SoftwareDevice()
            var offCurve = device.publicKey
            offCurve[64] ^= 1
            let compressed = [0x02 | (device.publicKey[64] & 1)] + device.publicKey[1...32]
            for key in [offCurve, compressed, Array(device.publicKey.dropFirst())] {
                let challenge = try await server.request(.post, "/v1/challenges", json: ["purpose": "register"], headers: Self.bearer(token))
                let (id, signature) = try device.sign(challengeIn: challenge)
                let response = try await server.request(
                    .post, "/v1/devices",
                    json: ["public_key": .string(Base64URL.encode(key)), "label": "x", "challenge_id": .string(id), "signature": .string(signature)],
                    headers: Self.bearer(token))
                #expect(response.status == 400)
                #expect(try response.wireError.error == .invalidRequest)
            }
            #expect(try await server.application.database.read { try $0.query("SELECT id FROM device_keys", []) }.isEmpty)
        }
    }

    @Test("S18: the same key twice is 409; removing a key needs a second factor in the last five minutes")
    func s18RemoveNeedsRecentSecondFactor() async throws {
        try await TestServer.with { server in
            let (user, token, device, deviceID) = try await Self.registered(server)
            let again = try await device.register(on: server, bearer: Self.bearer(token))
            #expect(again.status == 409)
            #expect(try again.wireError.error == .conflict)

            server.clock.advance(by: 301)
            let refused = try await server.request(.delete, "/v1/devices/\(deviceID)", headers: Self.bearer(token))
            #expect(refused.status == 403)
            #expect(try refused.wireError.error == .insufficientAuthentication)
            let principal = Principal(userID: user.id, sessionID: token.session.id, amr: ["pwd"])
            await #expect(throws: AuthError.insufficientAuthentication()) { try await server.application.services.sessions.requireRecentSecondFactor(principal) }

            let stepUp = try await device.stepUp(on: server, bearer: Self.bearer(token), deviceID: deviceID)
            let fresh = try stepUp.bearer
            try await server.application.services.sessions.requireRecentSecondFactor(principal)
            #expect(try await server.request(.delete, "/v1/devices/nope", headers: fresh).status == 404)
            let removed = try await server.request(.delete, "/v1/devices/\(deviceID)", headers: fresh)
            #expect(removed.status == 204)
            #expect(try await server.request(.get, "/v1/devices", headers: fresh).decode(WireDeviceList.self).devices.isEmpty)
            #expect(try await server.auditEvents(user.id).contains("device_key.removed"))

            // Without a second factor left, nothing stands in the way.
            let someone = try await server.createUser(email: "b@example.com")
            let plain = try await server.startSession(for: someone)
            try await server.application.services.sessions.requireRecentSecondFactor(Principal(userID: someone.id, sessionID: plain.session.id, amr: ["pwd"]))
        }
    }

    @Test("S18: latchkey users show lists the factors, and users remove-device removes a lost key with an audit entry")
    func s18OperatorRemovesDevice() async throws {
        try await TestServer.with { server in
            let (user, _, _, deviceID) = try await Self.registered(server)
            let run = try server.operatorCommand()
            let show = try #require(await run(["users", "show", user.id]))
            #expect(show.status == 0)
            #expect(show.output.contains("factors     1 device key, TOTP off"))
            #expect(show.output.contains("\(deviceID)  Ada's iPhone"))

            let missing = try #require(await run(["users", "remove-device", user.id, "dev_nope"]))
            #expect(missing.status == 1)
            let removed = try #require(await run(["users", "remove-device", user.id, deviceID]))
            #expect(removed.status == 0, "\(removed.error)")
            #expect(try await server.application.database.read { try $0.query("SELECT id FROM device_keys", []) }.isEmpty)
            let entry = try #require(try await AuditLog(database: server.database).entries(userID: user.id, event: "device_key.removed").first)
            #expect(entry.details["by"] == "operator" && entry.details["device_key_id"] == deviceID)
        }
    }

    struct WycheproofGroup: Decodable {
        struct Key: Decodable { var uncompressed: String }
        var publicKey: Key
        var tests: [WycheproofSignatureCase]
    }

    @Test("S17: the whole Wycheproof ECDSA P-256 DER file passes through the endpoint's verifier")
    func s17Wycheproof() throws {
        let counts = try runWycheproof(
            "ecdsa_secp256r1_sha256_test.json", group: WycheproofGroup.self, cases: \.tests
        ) { group, test in
            DeviceSignature.isValid(
                [UInt8](hex: test.sig), publicKey: [UInt8](hex: group.publicKey.uncompressed), digest: HashFunction.sha256.hash([UInt8](hex: test.msg)))
                ? .accepted : .rejected
        }
        #expect(counts == (484, 0))
    }
}
