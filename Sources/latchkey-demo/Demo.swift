import Foundation
import LatchkeyClient
import LatchkeyClientDoubles

/// The seeds' stories, step by step, as an app does them with the SDK: Sign in with Apple from
/// first sign-in to account deletion, with the WWDC24 sample's device key as a second factor on
/// the way; then a password account's reset by email. Each step is one SDK call; the sandbox
/// Apple plays the device and Apple, the sandbox mailbox the user's inbox.
final class Demo {
    let base: URL
    let apple: SandboxApple
    let mailbox: SandboxMailbox
    let client: LatchkeyClient
    private var stepNumber = 0

    init(base: URL) {
        self.base = base
        self.apple = SandboxApple(base: base)
        self.mailbox = SandboxMailbox(base: base)
        // Memory only: the demo must leave no session behind. An app passes the Keychain store.
        self.client = LatchkeyClient(configuration: LatchkeyConfiguration(baseURL: base, store: InMemoryCredentialStore()))
    }

    func run() async throws {
        let email = "ada@privaterelay.appleid.com"
        announce("The app asks Apple to sign in, with a nonce (sandbox /authorize)")
        let first = try await apple.authorize(subject: nil, email: email, nonce: Nonce.make(), name: PersonName(givenName: "Ada", familyName: "Lovelace"))
        done("identity token for Apple user \(first.user); a single-use authorization code")

        announce("The app sends both to POST /v1/auth/apple, with the name Apple shares only this once (signInWithApple)")
        let signedIn = try await session(client.signInWithApple(first))
        try expect(signedIn.user.givenName == "Ada", "the account should carry the name Apple shared")
        done("account \(signedIn.user.id) created for \(name(signedIn.user)); Apple's refresh token stored sealed")

        announce("The access token expires; the app refreshes (refresh(), POST /v1/token)")
        let refreshed = try await client.refresh()
        try expect(refreshed.refreshToken != signedIn.refreshToken, "refresh should rotate the refresh token")
        done("a new access token and a new refresh token; the old one is retired")

        announce("The app loads the profile (me(), GET /v1/me)")
        let account = try await client.me()
        try expect(account.user.givenName == "Ada", "the profile should carry the name")
        done("\(name(account.user)), identities: \(account.identities.map(\.provider).joined(separator: ", "))")

        announce("The user stops using Sign in with Apple for the app; Apple notifies the server (consent-revoked)")
        let notified = try await apple.notify(subject: first.user, type: "consent-revoked")
        try expect(notified.status == 200 && notified.serverStatus == 200, "the notification endpoint should answer 200")
        done("the server verified the signed notification and ended the user's sessions")

        announce("The app refreshes again and learns why its session ended")
        do {
            _ = try await client.refresh()
            throw DemoFailure("refresh should fail with reason consent_revoked")
        } catch let error as LatchkeyError {
            try expect(error.signOutReason == .consentRevoked && error.reason == "consent_revoked", "refresh should fail with reason consent_revoked (\(error))")
            let session = await client.session
            try expect(session == nil, "the SDK should have signed out")
            done("\(error.status.map(String.init) ?? "?") invalid_grant, reason consent_revoked: the SDK signs out cleanly (.signedOut(.consentRevoked))")
        }

        announce("The user signs in again; Apple sends no name this time")
        let second = try await apple.authorize(subject: first.user, email: email, nonce: Nonce.make(), name: nil)
        let again = try await session(client.signInWithApple(second))
        try expect(again.user.id == signedIn.user.id && again.user.givenName == "Ada", "the account and its name should be kept")
        done("created: false, still \(name(again.user))")

        let key = try await deviceKeyChapter(first.user, email: email)
        _ = key

        announce("The user deletes the account in the app (deleteAccount(), DELETE /v1/me, second factor fresh)")
        try await client.deleteAccount()
        done("sessions ended and personal data deleted")

        announce("Apple's token was revoked at Apple (sandbox /auth/revoke), as the App Store requires")
        try await waitForRevocation(of: first.user)
        done("Apple saw the revocation of \(first.user)'s refresh token")

        try await passwordResetChapter()
        try await passkeyChapter()
        try await providerChapter()
    }

    /// "Continue with …": the app signs in through an upstream provider, here the development
    /// server's sandbox OpenID provider, with the seed's web sign-in pointed at Latchkey (the
    /// development OAuth client, a scripted browser in place of ASWebAuthenticationSession).
    private func providerChapter() async throws {
        let app = LatchkeyClient(configuration: LatchkeyConfiguration(baseURL: base, store: InMemoryCredentialStore(), clientID: "cl_development"))
        let browser = SandboxBrowser(email: "katherine@example.com", name: "Katherine Johnson")
        announce("A new user taps \"Continue with Sandbox\" (signIn(with: \"sandbox\"), /oauth/authorize?provider=sandbox)")
        let signedIn: Session
        do {
            signedIn = try await app.signIn(with: "sandbox", redirectURI: "com.example.app:/oauth/callback") { request in
                try await browser.open(request.url)
            }
        } catch let error as LatchkeyError where error.status == 400 || error.code == .webSignIn(error: "invalid_request") {
            print("\n   Providers: this server has no sandbox provider or development client (start it with latchkey serve --dev)")
            return
        }
        try expect(signedIn.user.email == "katherine@example.com" && signedIn.user.emailVerified, "the account should take the provider's verified email")
        done("the sandbox provider's page, its code exchanged by the server, the ID token checked: account \(signedIn.user.id) for \(name(signedIn.user))")

        announce("The app lists the account's identities (identities(), GET /v1/me)")
        let identities = try await app.identities()
        try expect(identities.map(\.provider) == ["sandbox"], "the account should have the sandbox identity (\(identities.map(\.provider)))")
        done("identities: sandbox (\(identities[0].email ?? "no email"))")

        announce("She tries to unlink the provider, her only way in (unlink(\"sandbox\"), DELETE /v1/me/identities/sandbox)")
        do {
            try await app.unlink("sandbox")
            throw DemoFailure("unlinking the last way to sign in should be refused")
        } catch let error as LatchkeyError where error.status == 409 {
            done("409 conflict: an account never loses its last way to sign in")
        }
    }

    private func waitForRevocation(of subject: String) async throws {
        for _ in 0..<50 {
            if try await apple.revokedSubjects().contains(subject) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DemoFailure("the sandbox saw no revocation within 5 seconds")
    }

    /// A forgotten password: the reset mail's code (read from the sandbox mailbox, never shown)
    /// sets a new password, which ends every session from before the reset and signs in.
    private func passwordResetChapter() async throws {
        let address = "grace@example.com"
        let oldPassword = "correct horse battery staple"
        let newPassword = "a brand new passphrase"
        // Her laptop: another client with its own session, as another device would have.
        let laptop = LatchkeyClient(configuration: LatchkeyConfiguration(baseURL: base, store: InMemoryCredentialStore()))

        announce("Another user signs up on her laptop with her email address and a password (signUp(username:password:))")
        let before = try await session(laptop.signUp(username: address, password: oldPassword, name: PersonName(givenName: "Grace", familyName: "Hopper")))
        done("account \(before.user.id) for \(name(before.user)); the laptop holds a refresh token")

        announce("She forgets the password; the phone asks for a reset (requestPasswordReset(email:), POST /v1/auth/password/reset)")
        let flow = try await client.requestPasswordReset(email: address)
        let minutes = Int((flow.expiresAt.timeIntervalSinceNow / 60).rounded())
        done("202 with a flow good for \(minutes) minutes, the same answer as for an address without an account")

        announce("The mail arrives (the sandbox mailbox, GET /sandbox/mail.json) with a 6-digit code and a link")
        let mail = try await mailbox.newest(to: address)
        try expect(URL(string: mail.link).flatMap { client.emailLink(from: $0) }?.purpose == .reset, "the mailed link should be a reset link of this server")
        done("\"\(mail.subject)\": a code and a link to /email/reset, both secrets, not shown here")

        announce("She types the code and a new password on the phone (resetPassword(flow:code:newPassword:))")
        let reset = try await session(client.resetPassword(flow: flow, code: mail.code, newPassword: newPassword))
        try expect(reset.user.id == before.user.id && reset.user.emailVerified, "the reset should sign in the same account, its address verified")
        let amr = try await client.sessions().first { $0.isCurrent }?.amr ?? []
        done("password set, every session of the account ended; the phone is signed in with amr \(amr.joined(separator: ", "))")

        announce("The laptop refreshes with its refresh token from before the reset")
        do {
            _ = try await laptop.refresh()
            throw DemoFailure("the refresh token from before the reset should be refused")
        } catch let error as LatchkeyError {
            try expect(error.signOutReason == .sessionRevoked && error.reason == "revoked", "the refresh should fail with reason revoked (\(error))")
            let session = await laptop.session
            try expect(session == nil, "the laptop should have signed out")
            done("\(error.status.map(String.init) ?? "?") invalid_grant, reason revoked: the old refresh token is refused, the laptop signs out")
        }

        announce("The old password no longer signs in; the new one does (signIn(username:password:))")
        do {
            _ = try await laptop.signIn(username: address, password: oldPassword)
            throw DemoFailure("the old password should be refused")
        } catch let error as LatchkeyError where error.code == .invalidCredentials {}
        let again = try await session(laptop.signIn(username: address, password: newPassword))
        try expect(again.user.id == before.user.id, "the new password should sign in the same account")
        done("old password: 401 invalid_credentials; new password: signed in as \(again.user.id)")
    }

    /// Passkeys, on a server that has an RP ID: the signed-in user adds a passkey (the software
    /// passkey manager here, iCloud Keychain on a device), signs out, and signs in with it without
    /// typing anything. A server without one (the development default on 127.0.0.1) answers the
    /// passkey calls 404, and the chapter says how to turn them on instead.
    private func passkeyChapter() async throws {
        let passkeyManager = SoftwarePasskeyAuthenticator()
        let passkey: Passkey
        do {
            passkey = try await client.registerPasskey(name: "Grace's iPhone", using: passkeyManager)
        } catch let error as LatchkeyError where error.status == 404 {
            print(
                "\n   Passkeys: this server has no RP ID, so no passkeys (start it with LATCHKEY_PASSKEYS_RP_ID=localhost"
                    + " LATCHKEY_PASSKEYS_ORIGINS=https://localhost to see them)")
            return
        }
        announce("She adds a passkey to her account on the phone (registerPasskey(name:using:), POST /v1/passkeys)")
        try expect(passkey.isBackedUp, "the passkey should be registered as synced (BE and BS)")
        done("passkey \(passkey.id) \"\(passkey.name)\": ES256, none attestation, user verified, synced")

        announce("She signs out, then signs in with the passkey, no username typed (signInWithPasskey(using:), POST /v1/auth/passkey)")
        let before = await client.session?.user.id
        await client.signOut()
        let signedIn = try await session(client.signInWithPasskey(using: passkeyManager))
        try expect(signedIn.user.id == before, "the passkey should name her account")
        let amr = try await client.sessions().first { $0.isCurrent }?.amr ?? []
        try expect(amr.contains("mfa"), "a verified passkey should count as two factors (amr \(amr))")
        done("signed in as \(signedIn.user.id) with amr \(amr.joined(separator: ", ")): the passkey is both factors")

        announce("The account lists the passkey as used (passkeys(), GET /v1/passkeys)")
        let listed = try await client.passkeys()
        try expect(listed.count == 1 && listed[0].lastUsedAt != nil, "the passkey should be listed once, used")
        done("\(listed.count) passkey, last used just now")
    }

    /// The WWDC24 sample's second factor: a P-256 key (in software here, in the Secure Enclave on
    /// a device) registered with proof of possession, then signing the server's challenge when the
    /// next sign-in needs a second factor.
    private func deviceKeyChapter(_ subject: String, email: String) async throws -> SoftwareDeviceKey {
        let key = SoftwareDeviceKey()
        announce("The app makes a device key (Secure Enclave; software here) and registers it (registerDeviceKey(_:label:))")
        let device = try await client.registerDeviceKey(key, label: "Demo iPhone")
        done("device key \(device.id) registered: it signed the challenge with the key it claims")

        announce("The user signs in again; a second factor is now needed")
        await client.signOut()
        let credential = try await apple.authorize(subject: subject, email: email, nonce: Nonce.make(), name: nil)
        guard case .secondFactorRequired(let challenge) = try await client.signInWithApple(credential) else {
            throw DemoFailure("sign-in should answer mfa_required")
        }
        done("403 mfa_required with an mfa_token and the factors: \(challenge.factors.map(Self.wireName).joined(separator: ", "))")

        announce("The app signs the server's challenge with the device key (completeSignIn(_:with: .deviceKey))")
        let session = try await client.completeSignIn(challenge, with: .deviceKey(id: device.id, key: key))
        let amr = try await client.sessions().first { $0.id == session.sessionID }?.amr ?? []
        try expect(amr.contains("hwk"), "the signed challenge should give a session whose amr has hwk")
        done("signed in with amr \(amr.joined(separator: ", "))")
        return key
    }

    private static func wireName(_ factor: SecondFactor) -> String {
        switch factor {
        case .deviceKey: "device_key"
        case .totp: "totp"
        case .recoveryCode: "recovery_code"
        case .passkey: "passkey"
        }
    }

    private func session(_ result: SignInResult) throws -> Session {
        guard case .signedIn(let session) = result else { throw DemoFailure("sign-in should succeed without a second factor") }
        return session
    }

    // MARK: Output

    private func expect(_ condition: Bool, _ message: String) throws {
        guard condition else { throw DemoFailure(message) }
    }

    private func announce(_ text: String) {
        stepNumber += 1
        print("\n\(stepNumber). \(text)")
    }

    private func done(_ text: String) {
        print("   ✓ \(text)")
    }

    private func name(_ user: Account.User) -> String {
        [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
    }
}
