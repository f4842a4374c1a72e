import Foundation
import LatchkeyClient
import LatchkeyClientDoubles
import Testing

/// Every sign-in and account call of the SDK against the real `latchkey serve --dev`.
@Suite("SDK against the server: sign-in, MFA, device keys, account", .serialized)
struct AccountFlowTests {
    static let password = "correct horse battery staple 7"

    @Test("Password sign-up, sign-in, me(), sessions(), signOut(everywhere:) end the sessions at the server too")
    func passwordAccount() async throws {
        try await DevServer.with { server in
            let phone = server.client()
            let signUp = try #require(try await phone.signUp(username: "ada", password: Self.password, name: PersonName(givenName: "Ada", familyName: "Lovelace")).session)
            #expect(await phone.session == signUp)
            let account = try await phone.me()
            #expect(account.user.givenName == "Ada" && account.user.familyName == "Lovelace")
            #expect(account.username == "ada")
            #expect(account.identities.map(\.provider).contains("password"))

            let laptop = server.client()
            await #expect(throws: LatchkeyError(.invalidCredentials, "")) { try await laptop.signIn(username: "ada", password: "wrong password 1234") }
            let second = try #require(try await laptop.signIn(username: "ada", password: Self.password).session)
            #expect(second.user.id == signUp.user.id && second.sessionID != signUp.sessionID)
            let sessions = try await laptop.sessions()
            #expect(Set(sessions.map(\.id)) == [signUp.sessionID, second.sessionID])
            #expect(sessions.first { $0.isCurrent }?.id == second.sessionID)

            let events = EventRecorder(phone.authEvents, count: 2)
            await laptop.signOut(everywhere: true)
            #expect(await laptop.session == nil)
            // The phone's session ended at the server while its access token is still fresh: the
            // 401 makes the SDK refresh, and the refresh's definite answer signs it out.
            let ended = await #expect(throws: LatchkeyError.self) { try await phone.me() }
            #expect(ended?.code == .sessionEnded && ended?.signOutReason == .sessionRevoked)
            #expect(await phone.session == nil)
            #expect(await events.events().map(\.name) == ["initialSession", "signedOut(sessionRevoked)"])
        }
    }

    @Test("The 11th failed sign-in on an account is rateLimited(retryAfter:) with the server's 60 s, even with the right password")
    func rateLimited() async throws {
        try await DevServer.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "ada", password: Self.password)
            await client.signOut()
            for attempt in 1...10 {
                await #expect(throws: LatchkeyError(.invalidCredentials, ""), "attempt \(attempt)") {
                    try await client.signIn(username: "ada", password: "guess number \(attempt)")
                }
            }
            let limited = await #expect(throws: LatchkeyError.self) { try await client.signIn(username: "ada", password: Self.password) }
            #expect(limited?.code == .rateLimited(retryAfter: nil) && limited?.code.retryAfter == .seconds(60) && limited?.status == 429)
            #expect(await client.session == nil)
        }
    }

    @Test("MFA with TOTP: enrol, confirm, then sign-in needs the second factor; a TOTP code or a recovery code completes it")
    func totp() async throws {
        try await DevServer.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "grace", password: Self.password)
            let enrollment = try await client.enrollTOTP()
            #expect(enrollment.otpauthURI.hasPrefix("otpauth://totp/"))
            let recoveryCodes = try await client.confirmTOTP(code: Authenticator.code(secret: enrollment.secret))
            #expect(recoveryCodes.count == 10)
            #expect(try await client.me().factors.contains(.totp))
            await client.signOut()

            let challenge = try #require(try await client.signIn(username: "grace", password: Self.password).challenge)
            #expect(challenge.factors.contains(.totp) && challenge.factors.contains(.recoveryCode))
            #expect(await client.session == nil, "no session before the second factor")
            await #expect(throws: LatchkeyError(.server(code: "invalid_grant"), "")) {
                try await client.completeSignIn(challenge, with: .totp(code: "000000"))
            }
            // The confirmation used this step's code; the next step's is accepted too and unused.
            let session = try await client.completeSignIn(challenge, with: .totp(code: Authenticator.code(secret: enrollment.secret, offset: 1)))
            #expect(await client.session == session)
            #expect(try await client.sessions().first { $0.isCurrent }?.amr.contains("otp") == true)
            await client.signOut()

            let again = try #require(try await client.signIn(username: "grace", password: Self.password).challenge)
            let recovered = try await client.completeSignIn(again, with: .recoveryCode(recoveryCodes[3]))
            #expect(try await client.sessions().first { $0.id == recovered.sessionID }?.amr.contains("rc") == true)
        }
    }

    @Test("Device keys: register, step up (hwk), MFA with the key, unknown key refused; deleteAccount after a step-up ends the account")
    func deviceKeys() async throws {
        try await DevServer.with { server in
            let store = InMemoryCredentialStore()
            let client = server.client(store: store)
            _ = try await client.signUp(username: "katherine", password: Self.password)
            let key = SoftwareDeviceKey()
            let device = try await client.registerDeviceKey(key, label: "Katherine's iPhone")
            #expect(device.label == "Katherine's iPhone")
            #expect(try store.load()?.deviceKeyIDs.values.contains(device.id) == true)

            await #expect(throws: LatchkeyError(.deviceKeyNotRegistered, "")) { try await client.stepUp(with: SoftwareDeviceKey()) }
            let steppedUp = try await client.stepUp(with: key)
            let current = try #require(try await client.sessions().first { $0.isCurrent })
            #expect(current.id == steppedUp.sessionID && current.amr.contains("hwk") && current.amr.contains("mfa"))

            await client.signOut()
            let challenge = try #require(try await client.signIn(username: "katherine", password: Self.password).challenge)
            #expect(challenge.factors.contains(.deviceKey(id: device.id, label: "Katherine's iPhone")))
            _ = try await client.completeSignIn(challenge, with: .deviceKey(id: device.id, key: key))
            _ = try await client.stepUp(with: key)

            let events = EventRecorder(client.authEvents, count: 2)
            try await client.deleteAccount()
            #expect(await events.events().map(\.name) == ["initialSession", "signedOut(accountDeleted)"])
            #expect(try store.load() == nil)
            await #expect(throws: LatchkeyError(.invalidCredentials, "")) {
                try await client.signIn(username: "katherine", password: Self.password)
            }
        }
    }

    @Test("Sign in with Apple: the first-time name is sent once and kept; later sign-ins without it keep it")
    func signInWithApple() async throws {
        try await DevServer.with { server in
            let client = server.client()
            let first = try await server.appleCredential(email: "ada@privaterelay.appleid.com", name: PersonName(givenName: "Ada", familyName: "Lovelace"))
            let session = try #require(try await client.signInWithApple(first).session)
            #expect(session.user.givenName == "Ada")
            await client.signOut()
            let later = try await server.appleCredential(email: "ada@privaterelay.appleid.com", subject: first.user)
            let again = try #require(try await client.signInWithApple(later).session)
            #expect(again.user.id == session.user.id)
            let account = try await client.me()
            #expect(account.user.givenName == "Ada" && account.user.familyName == "Lovelace")
            #expect(account.identities.map(\.provider) == ["apple"])

            var replayed = later
            replayed.rawNonce = Nonce.make().raw
            await #expect(throws: LatchkeyError(.server(code: "invalid_identity_token"), "")) { try await client.signInWithApple(replayed) }
        }
    }

    @Test("authEvents: every access is a new stream that starts with .initialSession, then the later events")
    func authEvents() async throws {
        try await DevServer.with { server in
            let client = server.client()
            let before = EventRecorder(client.authEvents, count: 4)
            let session = try #require(try await client.signUp(username: "mary", password: Self.password).session)
            let after = EventRecorder(client.authEvents, count: 3)
            // Let the second stream register before the next events.
            try await Task.sleep(for: .milliseconds(50))
            _ = try await client.refresh()
            await client.signOut()
            #expect(await before.events().map(\.name) == ["initialSession(nil)", "signedIn", "tokenRefreshed", "signedOut(userInitiated)"])
            let later = await after.events()
            #expect(later.first == .initialSession(session))
            #expect(later.map(\.name) == ["initialSession", "tokenRefreshed", "signedOut(userInitiated)"])
        }
    }
}
