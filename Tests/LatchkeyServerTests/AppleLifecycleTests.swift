import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeySandbox
import LatchkeyServer
import LatchkeyStore
import LatchkeyWire
import Testing

/// What happens to an Apple account after sign-in: notifications, daily validation, deletion,
/// team transfer.
@Suite("Sign in with Apple: notifications, validation, deletion, transfer")
struct AppleLifecycleTests {
    /// Signs in through the dev-mode sandbox and returns the token response body.
    static func signedIn(_ server: TestServer) async throws -> (body: WireTokenResponse, subject: String, sandbox: AppleSandbox) {
        let sandbox = try #require(server.application.sandbox)
        let (response, credential) = try await AppleFlow.signIn(server, sandbox: sandbox, names: ("Ada", "Lovelace"))
        #expect(response.status == 200)
        return (try response.tokens, credential.subject, sandbox)
    }

    static func notification(_ sandbox: AppleSandbox, now: Date, type: String, subject: String, jti: String = UUID().uuidString, email: String? = nil) throws -> String {
        var claims = JWTClaims()
        claims.issuer = "https://appleid.apple.com"
        claims.audience = ["com.example.app"]
        claims.issuedAt = now
        claims.tokenID = jti
        var event: [String: JSONValue] = ["type": .string(type), "sub": .string(subject), "event_time": 1_764_500_000_000]
        if let email { event["email"] = .string(email) }
        claims["events"] = .string(JSONValue.object(event).serializedString)
        return try sandbox.sign(claims)
    }

    @Test("S9, S27: consent-revoked ends every session, marks the identity revoked, and refresh answers consent_revoked")
    func s9ConsentRevoked() async throws {
        try await TestServer.with { server in
            let (body, subject, sandbox) = try await Self.signedIn(server)
            let refreshToken = body.refreshToken
            let userID = body.user.id
            #expect(try await sandbox.notify(subject: subject, type: "consent-revoked") == 200)
            let refresh = try await SessionTests.refresh(server, refreshToken)
            #expect(refresh.status == 400)
            #expect(try refresh.wireError.grantFailure == .consentRevoked)
            let revokedAt = try await server.database.read {
                try $0.queryOne("SELECT revoked_at FROM identities WHERE subject = ?", [.text(subject)])!.optionalInt("revoked_at")
            }
            #expect(revokedAt != nil)
            let events = try await SessionTests.auditEvents(server, userID: userID)
            #expect(events.contains("apple.notification") && events.contains("apple.consent_revoked"))

            // Signing in again brings the identity back, name kept.
            let (again, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: subject)
            #expect(try !again.tokens.created)
            #expect(try again.tokens.user.givenName == "Ada")
        }
    }

    @Test("S27: a notification is applied once per jti, audited; a bad signature is 400 and applies nothing")
    func s27Deduplicated() async throws {
        try await TestServer.with { server in
            let (_, subject, sandbox) = try await Self.signedIn(server)
            let payload = try Self.notification(sandbox, now: server.clock.now, type: "email-disabled", subject: subject, jti: "jti-1")
            for _ in 0..<2 {
                #expect(try await server.request(.post, "/v1/apple/notifications", json: WireAppleNotification(payload: payload).json).status == 200)
            }
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'apple.notification'") == 1)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM identities WHERE email_disabled_at IS NOT NULL") == 1)

            let enabled = try Self.notification(sandbox, now: server.clock.now, type: "email-enabled", subject: subject, email: "new@privaterelay.appleid.com")
            #expect(try await server.request(.post, "/v1/apple/notifications", json: WireAppleNotification(payload: enabled).json).status == 200)
            let email = try await server.database.read {
                try $0.queryOne("SELECT email, email_disabled_at FROM identities WHERE subject = ?", [.text(subject)])!
            }
            #expect(email.optionalString("email") == "new@privaterelay.appleid.com" && email.optionalInt("email_disabled_at") == nil)

            var forged = Array(try Self.notification(sandbox, now: server.clock.now, type: "account-delete", subject: subject).utf8)
            forged[forged.count - 5] = forged[forged.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let refused = try await server.request(.post, "/v1/apple/notifications", json: WireAppleNotification(payload: String(decoding: forged, as: UTF8.self)).json)
            #expect(refused.status == 400)
            #expect(try refused.wireError.error == .invalidRequest)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 1)
            #expect(try await server.request(.post, "/v1/apple/notifications", json: ["payload": 1]).status == 400)

            let unknown = try Self.notification(sandbox, now: server.clock.now, type: "something-new", subject: subject)
            #expect(try await server.request(.post, "/v1/apple/notifications", json: WireAppleNotification(payload: unknown).json).status == 200)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM audit_log WHERE event = 'apple.notification' AND outcome = 'ignored'") == 1)
        }
    }

    @Test("account-delete and account-deleted both delete the account; Apple already revoked, so nothing is queued", arguments: ["account-delete", "account-deleted"])
    func accountDeleteNotification(_ type: String) async throws {
        try await TestServer.with { server in
            let (body, subject, sandbox) = try await Self.signedIn(server)
            let access = body.accessToken
            let payload = try Self.notification(sandbox, now: server.clock.now, type: type, subject: subject)
            #expect(try await server.request(.post, "/v1/apple/notifications", json: WireAppleNotification(payload: payload).json).status == 200)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM outbox WHERE kind = 'apple_revocation'") == 0)
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(access)"]).status == 401)
            let refresh = try await SessionTests.refresh(server, body.refreshToken)
            #expect(refresh.status == 400)
            #expect(try refresh.wireError.grantFailure == .accountDeleted, "the app learns why, not just that")
        }
    }

    @Test("S9: daily validation finds a withdrawn authorization, ends the sessions, and checks each user at most once a day")
    func s9DailyValidation() async throws {
        try await TestServer.with { server in
            let (body, subject, sandbox) = try await Self.signedIn(server)
            let refreshToken = body.refreshToken
            let before = sandbox.tokenRequests

            // Not due yet: the code exchange counts as today's validation.
            try await server.application.runBackgroundJobs()
            #expect(sandbox.tokenRequests == before)

            // A day later the token still works: one check, then none for another day.
            server.clock.advance(by: 86_400 + 1)
            try await server.application.runBackgroundJobs()
            #expect(sandbox.tokenRequests == before + 1)
            server.clock.advance(by: 3 * 3600)
            try await server.application.runBackgroundJobs()
            #expect(sandbox.tokenRequests == before + 1, "at most once per user per day")

            // The user withdraws consent at Apple (no notification arrives): the next check finds it.
            sandbox.revokeConsent(subject: subject)
            server.clock.advance(by: 86_400 + 3600)
            try await server.application.runBackgroundJobs()
            #expect(sandbox.tokenRequests == before + 2)
            let refresh = try await SessionTests.refresh(server, refreshToken)
            #expect(refresh.status == 400)
            #expect(try refresh.wireError.grantFailure == .consentRevoked)
        }
    }

    @Test("team transfer: an imported transfer id links the returning user to the old account")
    func teamTransfer() async throws {
        try await TestServer.with { server in
            let (body, oldSubject, sandbox) = try await Self.signedIn(server)
            let userID = body.user.id
            let result = try await server.application.importAppleTransfers([
                ["sub": .string(oldSubject), "transfer_sub": "transfer.abc"], ["sub": "000999.unknown.1111", "transfer_sub": "transfer.x"],
            ])
            #expect(result.recorded == 1 && result.unknown == 1)
            let (linked, credential) = try await AppleFlow.signIn(server, sandbox: sandbox, transferSubject: "transfer.abc")
            #expect(linked.status == 200)
            let linkedTokens = try linked.tokens
            #expect(!linkedTokens.created)
            #expect(linkedTokens.user.id == userID)
            #expect(linkedTokens.user.givenName == "Ada")
            let identity = try await server.database.read {
                try $0.queryOne("SELECT subject, transfer_sub FROM identities WHERE user_id = ?", [.text(userID)])!
            }
            #expect(try identity.string("subject") == credential.subject && identity.optionalString("transfer_sub") == nil)
            #expect(try await SessionTests.auditEvents(server, userID: userID).contains("sign_in.transfer_linked"))

            // An unknown transfer id creates a new account as usual.
            let (fresh, _) = try await AppleFlow.signIn(server, sandbox: sandbox, transferSubject: "transfer.nobody")
            #expect(try fresh.tokens.created)
        }
    }

    @Test("team transfer: a transfer id links one sign-in only, and a bad transfer file is invalid_request naming the entry, recording nothing")
    func teamTransferSpentOnce() async throws {
        try await TestServer.with { server in
            let (body, oldSubject, sandbox) = try await Self.signedIn(server)
            let userID = body.user.id
            for (file, message): (JSONValue, String) in [
                (["sub": .string(oldSubject), "transfer_sub": "t.1"], "the file must hold a JSON array"),
                ([["sub": .string(oldSubject), "transfer_sub": "t.1"], ["sub": "x"]], "entry 1: transfer_sub is required"),
                ([["sub": .string(oldSubject), "transfer_sub": "t.1"], ["transfer_sub": "t.2"]], "entry 1: sub or user_id is required"),
            ] {
                do {
                    _ = try await server.application.importAppleTransfers(file)
                    Issue.record("\(file) was accepted")
                } catch let error as AuthError {
                    #expect(error.code == .invalidRequest && error.message == message)
                }
            }
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM identities WHERE transfer_sub IS NOT NULL") == 0, "nothing recorded")

            let result = try await server.application.importAppleTransfers([["user_id": .string(userID), "transfer_sub": "t.1"]])
            #expect(result.recorded == 1 && result.unknown == 0)
            let (linked, _) = try await AppleFlow.signIn(server, sandbox: sandbox, transferSubject: "t.1")
            #expect(try linked.tokens.user.id == userID)
            let (other, _) = try await AppleFlow.signIn(server, sandbox: sandbox, transferSubject: "t.1")
            #expect(try other.tokens.created, "the transfer id was spent by the first sign-in")
            #expect(try other.tokens.user.id != userID)
        }
    }

    @Test("S18: with a device key, Apple sign-in answers mfa_required, and DELETE /v1/me needs a second factor in the last five minutes")
    func s18SecondFactorGates() async throws {
        try await TestServer.with { server in
            let (body, subject, sandbox) = try await Self.signedIn(server)
            let bearer = ["Authorization": "Bearer \(body.accessToken)"]
            let device = SoftwareDevice()
            let registered = try await device.register(on: server, bearer: bearer)
            #expect(registered.status == 201)
            let deviceID = try registered.decode(WireDevice.self).id

            let (again, _) = try await AppleFlow.signIn(server, sandbox: sandbox, subject: subject)
            #expect(again.status == 403)
            #expect(try again.wireError.error == .mfaRequired)
            #expect(try again.wireError.mfaToken != nil)

            server.clock.advance(by: 301)
            let refused = try await server.request(.delete, "/v1/me", headers: bearer)
            #expect(refused.status == 403)
            #expect(try refused.wireError.error == .insufficientAuthentication)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 1)

            let stepped = try await device.stepUp(on: server, bearer: bearer, deviceID: deviceID)
            #expect(stepped.status == 200)
            let fresh = try stepped.bearer
            #expect(try await server.request(.delete, "/v1/me", headers: fresh).status == 204)
            #expect(try await AppleFlow.count(server, "SELECT count(*) AS n FROM users") == 0)
        }
    }
}
