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

@Suite("MFA at sign-in")
struct MFATests {
    /// Signs in through the seam and expects `mfa_required`.
    ///
    /// The factors stay raw JSON: they are the seam's error fields, not an HTTP body, and tests
    /// compare them member for member with what the route will send.
    static func mfaRequired(_ server: TestServer, _ user: User) async throws -> (token: String, factors: JSONValue) {
        guard case .failure(let error) = try await server.signIn(user) else {
            Issue.record("expected mfa_required")
            return ("", .null)
        }
        #expect(error.status == 403 && error.errorCode == "mfa_required")
        return (try #require(error.extraFields["mfa_token"]?.stringValue), try #require(error.extraFields["factors"]))
    }

    static func verify(_ server: TestServer, _ fields: JSONValue) async throws -> TestResponse {
        try await server.request(.post, "/v1/mfa/verify", json: fields)
    }

    @Test("S7: without a second factor the seam signs in; with one it answers mfa_required and stores only the token's hash")
    func s7MFARequired() async throws {
        try await TestServer.with { server in
            let (user, token, _, deviceID) = try await DeviceKeyTests.registered(server)
            let someone = try await server.createUser(email: "b@example.com")
            guard case .success(let tokens) = try await server.signIn(someone) else { Issue.record("expected a session"); return }
            #expect(tokens.session.amr == ["pwd"])

            let sessionsBefore = try await server.application.services.sessions.sessions(userID: user.id).count
            let (mfaToken, factors) = try await Self.mfaRequired(server, user)
            #expect(factors == [["type": "device_key", "id": .string(deviceID), "label": "Ada's iPhone"]])
            #expect(Base64URL.decode(mfaToken)?.count == 32, "256 random bits")
            #expect(try await server.application.services.sessions.sessions(userID: user.id).count == sessionsBefore, "no session yet")
            let stored = try await server.database.read { try $0.query("SELECT token_hash FROM mfa_tokens", []) }.map { try $0.blob("token_hash") }
            #expect(stored == [HashFunction.sha256.hash(Array(mfaToken.utf8))])
            #expect(try await server.auditEvents(user.id).contains("mfa.required"))
            #expect(server.application.metrics.value(.signIns, ["method": "pwd", "outcome": "mfa_required"]) == 1)
            _ = token
        }
    }

    @Test("S16: a device signature completes the sign-in with amr pwd, hwk, mfa; the mfa_token then is spent")
    func s16DeviceKey() async throws {
        try await TestServer.with { server in
            let (user, _, device, deviceID) = try await DeviceKeyTests.registered(server)
            let (mfaToken, _) = try await Self.mfaRequired(server, user)
            let challenge = try await server.request(.post, "/v1/mfa/challenge", json: ["mfa_token": .string(mfaToken), "device_id": .string(deviceID)])
            #expect(challenge.status == 200)
            let (challengeID, signature) = try device.sign(challengeIn: challenge)
            let response = try await Self.verify(server, ["mfa_token": .string(mfaToken), "challenge_id": .string(challengeID), "signature": .string(signature)])
            #expect(response.status == 200, "\(response.text)")
            let body = try response.tokens
            let claims = try Insecure.unverifiedContents(of: body.accessToken).claims
            #expect(claims["amr"] == ["pwd", "hwk", "mfa"])
            let sessionID = body.sessionID
            let session = try #require(try await server.application.services.sessions.session(sessionID))
            #expect(session.secondFactorAt != nil && session.amr == ["pwd", "hwk", "mfa"])
            #expect(try await server.auditEvents(user.id).contains("device_key.used"))

            let again = try await Self.verify(server, ["mfa_token": .string(mfaToken), "challenge_id": .string(challengeID), "signature": .string(signature)])
            #expect(again.status == 400)
            #expect(try again.wireError.grantFailure == .reused)

            // A challenge for another mfa_token cannot be used with this one.
            let (second, _) = try await Self.mfaRequired(server, user)
            let (third, _) = try await Self.mfaRequired(server, user)
            let foreign = try await server.request(.post, "/v1/mfa/challenge", json: ["mfa_token": .string(second), "device_id": .string(deviceID)])
            let (foreignID, foreignSignature) = try device.sign(challengeIn: foreign)
            let crossed = try await Self.verify(server, ["mfa_token": .string(third), "challenge_id": .string(foreignID), "signature": .string(foreignSignature)])
            #expect(try crossed.wireError.grantFailure == .unknown)
        }
    }

    @Test("S19: a TOTP code signs in once; the same code again is refused; a recovery code works once")
    func s19TOTPAndRecoveryCodes() async throws {
        try await TestServer.with { server in
            let (user, _, secret, codes) = try await TOTPTests.enrolled(server)
            server.clock.advance(by: 30)
            let code = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
            let (first, factors) = try await Self.mfaRequired(server, user)
            #expect(factors == [["type": "totp"], ["type": "recovery_code"]])
            let signedIn = try await Self.verify(server, ["mfa_token": .string(first), "totp_code": .string(code)])
            #expect(signedIn.status == 200, "\(signedIn.text)")
            let claims = try Insecure.unverifiedContents(of: try signedIn.tokens.accessToken).claims
            #expect(claims["amr"] == ["pwd", "otp", "mfa"])

            let (second, _) = try await Self.mfaRequired(server, user)
            let reused = try await Self.verify(server, ["mfa_token": .string(second), "totp_code": .string(code)])
            #expect(reused.status == 400)
            #expect(try reused.wireError.grantFailure == .invalidCode)
            #expect(try await server.auditEvents(user.id).contains("totp.failed"))

            // Recovery codes: any case, hyphens optional; each one once.
            let recovery = codes[3].uppercased().replacingOccurrences(of: "-", with: "")
            let withCode = try await Self.verify(server, ["mfa_token": .string(second), "recovery_code": .string(recovery)])
            #expect(withCode.status == 200)
            let rcClaims = try Insecure.unverifiedContents(of: try withCode.tokens.accessToken).claims
            #expect(rcClaims["amr"] == ["pwd", "rc", "mfa"])
            let (third, _) = try await Self.mfaRequired(server, user)
            let again = try await Self.verify(server, ["mfa_token": .string(third), "recovery_code": .string(codes[3])])
            #expect(again.status == 400)
            #expect(try again.wireError.grantFailure == .invalidCode)
            #expect(try await server.auditEvents(user.id).contains("recovery_code.used"))
            let used = try await server.database.read { try $0.query("SELECT used_at FROM recovery_codes WHERE used_at IS NOT NULL", []) }
            #expect(used.count == 1)
        }
    }

    @Test("S7: five wrong tries end the mfa_token, even for a right code afterwards; it also expires after five minutes")
    func s7FiveTries() async throws {
        try await TestServer.with { server in
            let (user, _, secret, _) = try await TOTPTests.enrolled(server)
            server.clock.advance(by: 60)
            let (mfaToken, _) = try await Self.mfaRequired(server, user)
            for attempt in 1...5 {
                let wrong = try await Self.verify(server, ["mfa_token": .string(mfaToken), "recovery_code": .string("nope-\(attempt)")])
                #expect(wrong.status == 400)
                #expect(try wrong.wireError.grantFailure == .invalidCode)
            }
            let code = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
            let ended = try await Self.verify(server, ["mfa_token": .string(mfaToken), "totp_code": .string(code)])
            #expect(ended.status == 400)
            #expect(try ended.wireError.grantFailure == .revoked)
            #expect(try await server.auditEvents(user.id).contains("mfa.ended"))
            #expect(server.application.metrics.value(.secondFactors, ["factor": "recovery_code", "use": "mfa", "outcome": "failure"]) == 5)

            let (late, _) = try await Self.mfaRequired(server, user)
            server.clock.advance(by: 301)
            let expired = try await Self.verify(server, ["mfa_token": .string(late), "totp_code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)))])
            #expect(try expired.wireError.grantFailure == .expired)
            let unknown = try await Self.verify(server, ["mfa_token": "made-up", "totp_code": "123456"])
            #expect(try unknown.wireError.grantFailure == .unknown)
            let both = try await Self.verify(server, ["mfa_token": .string(late), "totp_code": "123456", "recovery_code": "x"])
            #expect(both.status == 400)
            #expect(try both.wireError.error == .invalidRequest)
        }
    }

    @Test("S19: of concurrent sign-ins with one TOTP code on different mfa_tokens exactly one succeeds")
    func s19ConcurrentTOTPCode() async throws {
        try await TestServer.with { server in
            let (user, _, secret, _) = try await TOTPTests.enrolled(server)
            server.clock.advance(by: 30)
            let code = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
            var tokens: [String] = []
            for _ in 0..<4 { tokens.append(try await Self.mfaRequired(server, user).token) }
            let answers = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                for token in tokens {
                    group.addTask {
                        let response = try await Self.verify(server, ["mfa_token": .string(token), "totp_code": .string(code)])
                        return (response.status, response)
                    }
                }
                return try await group.reduce(into: [(Int, TestResponse)]()) { $0.append($1) }
            }
            #expect(answers.map(\.0).sorted() == [200, 400, 400, 400])
            #expect(answers.filter { $0.0 == 200 }.allSatisfy { (try? $0.1.tokens.accessToken) != nil })
            #expect(answers.filter { $0.0 == 400 }.allSatisfy { (try? $0.1.wireError.grantFailure) == .invalidCode }, "the code was used")
        }
    }

    @Test("S7: of concurrent completions of one mfa_token with different recovery codes exactly one signs in; the others' codes stay unused")
    func s7ConcurrentCompletions() async throws {
        try await TestServer.with { server in
            let (user, _, _, codes) = try await TOTPTests.enrolled(server)
            let (mfaToken, _) = try await Self.mfaRequired(server, user)
            let answers = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                for code in codes.prefix(4) {
                    group.addTask {
                        let response = try await Self.verify(server, ["mfa_token": .string(mfaToken), "recovery_code": .string(code)])
                        return (response.status, response)
                    }
                }
                return try await group.reduce(into: [(Int, TestResponse)]()) { $0.append($1) }
            }
            #expect(answers.map(\.0).sorted() == [200, 400, 400, 400])
            #expect(answers.filter { $0.0 == 200 }.allSatisfy { (try? $0.1.tokens.accessToken) != nil })
            #expect(answers.filter { $0.0 == 400 }.allSatisfy { (try? $0.1.wireError.grantFailure) == .reused }, "the mfa_token was used")
            let used = try await server.database.read { try $0.query("SELECT used_at FROM recovery_codes WHERE used_at IS NOT NULL", []) }
            #expect(used.count == 1)
        }
    }

    @Test("S14: wrong second factors count per account across mfa_tokens: the 10th in 15 minutes blocks with 429, even a right code")
    func s14AcrossTokens() async throws {
        try await TestServer.with { server in
            let (user, _, secret, _) = try await TOTPTests.enrolled(server)
            server.clock.advance(by: 60)
            var failures = 0
            while failures < 10 {
                let (mfaToken, _) = try await Self.mfaRequired(server, user)
                for _ in 0..<min(4, 10 - failures) {
                    failures += 1
                    let wrong = try await Self.verify(server, ["mfa_token": .string(mfaToken), "recovery_code": .string("nope-\(failures)")])
                    #expect(wrong.status == 400, "failure \(failures)")
                }
            }
            let (fresh, _) = try await Self.mfaRequired(server, user)
            let code = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
            let blocked = try await Self.verify(server, ["mfa_token": .string(fresh), "totp_code": .string(code)])
            #expect(blocked.status == 429)
            #expect(blocked.headers["Retry-After"] != nil)
            #expect(try await server.auditEvents(user.id).contains("mfa.rate_limited"))

            // After the block, a right code works and clears the count.
            server.clock.advance(by: 61)
            let (later, _) = try await Self.mfaRequired(server, user)
            let ok = try await Self.verify(server, ["mfa_token": .string(later), "totp_code": .string(TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now)))])
            #expect(ok.status == 200)
        }
    }
}
