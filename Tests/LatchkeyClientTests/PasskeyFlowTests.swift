import Foundation
import LatchkeyClient
import LatchkeyClientDoubles
import Testing

/// The SDK's passkey calls against the real `latchkey serve --dev`, with the software
/// authenticator playing the passkey manager: registration, the list, rename and removal, the
/// automatic upgrade, sign-in with and without a username, sign-up, the passkey as a second
/// factor, and the errors an app sees.
@Suite("SDK against the server: passkeys", .serialized)
struct PasskeyFlowTests {
    static let password = "correct horse battery staple 7"

    /// A development server with passkeys on: the RP ID `localhost` and the origin an iOS app
    /// with `webcredentials:localhost` presents (the default development server, on 127.0.0.1,
    /// has no RP ID and so no passkeys).
    static func with(_ body: (DevServer) async throws -> Void) async throws {
        try await DevServer.with(environment: ["LATCHKEY_PASSKEYS_RP_ID": "localhost", "LATCHKEY_PASSKEYS_ORIGINS": "https://localhost"], body)
    }

    @Test("registerPasskey: the passkey is listed with its name and as synced, renamed, and the same passkey manager again is passkeyAlreadyRegistered")
    func registerListRename() async throws {
        try await Self.with { server in
            let client = server.client()
            let user = try #require(try await client.signUp(username: "ada@example.com", password: Self.password).session).user
            let authenticator = SoftwarePasskeyAuthenticator()
            let passkey = try await client.registerPasskey(name: "Ada's iPhone", using: authenticator)
            #expect(passkey.name == "Ada's iPhone" && passkey.isBackedUp && passkey.lastUsedAt == nil)
            #expect(passkey.transports == ["internal", "hybrid"])
            #expect(passkey.aaguid == "00000000-0000-0000-0000-000000000000")
            #expect(authenticator.credentials.count == 1)
            #expect(authenticator.credentials.first?.userName == "ada@example.com")
            #expect(try await client.passkeys() == [passkey])

            let renamed = try await client.renamePasskey(passkey.id, to: "Work iPhone")
            #expect(renamed.id == passkey.id && renamed.name == "Work iPhone")
            #expect(try await client.passkeys().map(\.name) == ["Work iPhone"])

            // The options exclude the account's passkey, which this passkey manager holds.
            await #expect(throws: LatchkeyError(.passkeyAlreadyRegistered, "")) { try await client.registerPasskey(using: authenticator) }
            #expect(try await client.passkeys().count == 1)
            #expect(try await server.auditCount("passkey.registered", userID: user.id) == 1)

            // Another passkey manager (the user's other Apple ID, a security key) adds a second one.
            _ = try await client.registerPasskey(using: SoftwarePasskeyAuthenticator())
            #expect(try await client.passkeys().map(\.name) == ["Work iPhone", "Passkey"])
            await #expect(throws: LatchkeyError(.server(code: "not_found"), "")) { try await client.renamePasskey("pk_unknown/../x", to: "x") }
        }
    }

    @Test("removePasskey: a password account removes its passkey right after signing in, and the server no longer lists it")
    func remove() async throws {
        try await Self.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "grace@example.com", password: Self.password)
            let passkey = try await client.registerPasskey(name: "iPhone", using: SoftwarePasskeyAuthenticator())
            try await client.removePasskey(passkey.id)
            #expect(try await client.passkeys().isEmpty)
            let again = await #expect(throws: LatchkeyError.self) { try await client.removePasskey(passkey.id) }
            #expect(again?.code == .server(code: "not_found") && again?.status == 404)
        }
    }

    @Test("upgradeToPasskey after a password sign-in registers a passkey made without a sheet; a passkey manager that declines leaves nil and no passkey")
    func automaticUpgrade() async throws {
        try await Self.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "katherine@example.com", password: Self.password)
            await client.signOut()
            #expect(try await client.signIn(username: "katherine@example.com", password: Self.password).session != nil)

            let declined = try await client.upgradeToPasskey(using: SoftwarePasskeyAuthenticator(declinesConditionalRegistration: true))
            #expect(declined == nil)
            #expect(try await client.passkeys().isEmpty)

            let authenticator = SoftwarePasskeyAuthenticator()
            let upgraded = try #require(try await client.upgradeToPasskey(name: "Upgraded", using: authenticator))
            #expect(upgraded.name == "Upgraded")
            #expect(try await client.passkeys().map(\.id) == [upgraded.id])
            // The passkey manager made it without a sheet (no UP, no UV), and the server took it.
            #expect(authenticator.credentials.count == 1)
        }
    }

    @Test("Errors: a cancelled passkey request is canceled and registers nothing; a passkey from another origin is invalid_grant origin_mismatch")
    func errors() async throws {
        try await Self.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "mary@example.com", password: Self.password)
            await #expect(throws: LatchkeyError(.canceled, "")) { try await client.registerPasskey(using: CancelledAuthenticator()) }
            let slow = SlowAuthenticator()
            let task = Task { try await client.registerPasskey(using: slow) }
            await slow.waitUntilReached()
            task.cancel()
            await #expect(throws: LatchkeyError(.canceled, "")) { try await task.value }

            let refused = await #expect(throws: LatchkeyError.self) {
                try await client.registerPasskey(using: SoftwarePasskeyAuthenticator(origin: "https://evil.example"))
            }
            #expect(refused?.code == .server(code: "invalid_grant") && refused?.reason == "origin_mismatch" && refused?.status == 400, "\(String(describing: refused))")
            #expect(try await client.passkeys().isEmpty)
        }
    }

    /// The amr of the session `client` holds now.
    static func amr(_ client: LatchkeyClient) async throws -> [String] {
        try #require(try await client.sessions().first { $0.isCurrent }).amr
    }

    @Test("signInWithPasskey without a username (the passkey names the account), with one, and through AutoFill: each a session with amr swk, user, mfa")
    func signIn() async throws {
        try await Self.with { server in
            let phone = server.client()
            let user = try #require(try await phone.signUp(username: "ada@example.com", password: Self.password).session).user
            let authenticator = SoftwarePasskeyAuthenticator()
            _ = try await phone.registerPasskey(name: "iPhone", using: authenticator)
            await phone.signOut()

            let discoverable = try #require(try await phone.signInWithPasskey(using: authenticator).session)
            #expect(discoverable.user.id == user.id)
            #expect(await phone.session == discoverable)
            #expect(Set(try await Self.amr(phone)) == ["swk", "user", "mfa"])
            await phone.signOut()

            let named = try #require(try await phone.signInWithPasskey(username: "ada@example.com", using: authenticator).session)
            #expect(named.user.id == user.id && named.sessionID != discoverable.sessionID)
            await phone.signOut()

            let autoFill = try #require(try await phone.beginAutoFillPasskeySignIn(using: authenticator).session)
            #expect(autoFill.user.id == user.id)
            #expect(try await phone.passkeys().first?.lastUsedAt != nil)
            // Each use counted up, and the server followed: the authenticator signed three times.
            #expect(authenticator.credentials.first?.signCount == 3)
            await phone.signOut()

            // Another account's name: the options allow only that account's passkeys, which this
            // passkey manager does not hold.
            await #expect(throws: LatchkeyError(.noPasskey, "")) {
                try await phone.signInWithPasskey(username: "somebody-else@example.com", using: authenticator)
            }
            #expect(await phone.session == nil)
        }
    }

    @Test("Passkey sign-in refusals: a passkey removed at the server is invalid_grant unknown_credential; a cancelled AutoFill is canceled")
    func signInRefusals() async throws {
        try await Self.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "grace@example.com", password: Self.password)
            let authenticator = SoftwarePasskeyAuthenticator()
            let passkey = try await client.registerPasskey(using: authenticator)
            try await client.removePasskey(passkey.id)
            await client.signOut()

            let refused = await #expect(throws: LatchkeyError.self) { try await client.signInWithPasskey(using: authenticator) }
            #expect(refused?.code == .server(code: "invalid_grant") && refused?.reason == "unknown_credential", "\(String(describing: refused))")
            #expect(await client.session == nil)

            let waiting = SlowAuthenticator()
            let autoFill = Task { try await client.beginAutoFillPasskeySignIn(using: waiting) }
            await waiting.waitUntilReached()
            autoFill.cancel()
            await #expect(throws: LatchkeyError(.canceled, "")) { try await autoFill.value }
            #expect(await client.session == nil)
        }
    }

    @Test("signUpWithPasskey makes an account with no password, named; removing its only passkey is conflict, as it is the last way in")
    func signUp() async throws {
        try await Self.with { server in
            let client = server.client()
            let authenticator = SoftwarePasskeyAuthenticator()
            let session = try #require(
                try await client.signUpWithPasskey(username: "katherine@example.com", givenName: "Katherine", familyName: "Johnson", using: authenticator)
                    .session)
            #expect(session.user.givenName == "Katherine" && session.user.familyName == "Johnson")
            #expect(authenticator.credentials.first?.userName == "katherine@example.com")
            let account = try await client.me()
            #expect(!account.identities.map(\.provider).contains("password"))
            let passkeys = try await client.passkeys()
            #expect(passkeys.count == 1)

            let last = await #expect(throws: LatchkeyError.self) { try await client.removePasskey(passkeys[0].id) }
            #expect(last?.code == .server(code: "conflict") && last?.status == 409, "\(String(describing: last))")
            #expect(try await client.passkeys().count == 1)

            await client.signOut()
            let again = try #require(try await client.signInWithPasskey(using: authenticator).session)
            #expect(again.user.id == session.user.id)
            await #expect(throws: LatchkeyError(.server(code: "conflict"), "")) {
                try await server.client().signUpWithPasskey(username: "katherine@example.com", using: SoftwarePasskeyAuthenticator())
            }
        }
    }

    @Test("A passkey as the second factor after a password: mfa_required lists passkey beside TOTP, completeSignIn(.passkey) signs in; a passkey manager without the account's passkey is noPasskey")
    func secondFactor() async throws {
        try await Self.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "mary@example.com", password: Self.password)
            let enrollment = try await client.enrollTOTP()
            _ = try await client.confirmTOTP(code: Authenticator.code(secret: enrollment.secret))
            let authenticator = SoftwarePasskeyAuthenticator()
            _ = try await client.registerPasskey(using: authenticator)
            #expect(try await client.me().factors.contains(.passkey))
            await client.signOut()

            let challenge = try #require(try await client.signIn(username: "mary@example.com", password: Self.password).challenge)
            #expect(challenge.factors.contains(.passkey) && challenge.factors.contains(.totp))
            await #expect(throws: LatchkeyError(.noPasskey, "")) {
                try await client.completeSignIn(challenge, with: .passkey(SoftwarePasskeyAuthenticator()))
            }
            let session = try await client.completeSignIn(challenge, with: .passkey(authenticator))
            #expect(await client.session == session)
            let amr = try await Self.amr(client)
            #expect(amr.contains("pwd") && amr.contains("mfa"), "\(amr)")
        }
    }

    @Test("A server without an RP ID (the development default on 127.0.0.1) answers the passkey calls not_found")
    func noRelyingParty() async throws {
        try await DevServer.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "ada@example.com", password: Self.password)
            let error = await #expect(throws: LatchkeyError.self) { try await client.registerPasskey(using: SoftwarePasskeyAuthenticator()) }
            #expect(error?.code == .server(code: "not_found") && error?.status == 404)
        }
    }
}

/// A passkey manager whose user dismisses the sheet, as a task cancellation reaches the SDK.
struct CancelledAuthenticator: PasskeyAuthenticator {
    func makeCredential(_ options: PasskeyCreationOptions, style: PasskeyRequestStyle) async throws -> PasskeyRegistration {
        throw CancellationError()
    }

    func getAssertion(_ options: PasskeyAssertionOptions, style: PasskeyRequestStyle) async throws -> PasskeyAssertion {
        throw CancellationError()
    }
}

/// A passkey manager that waits for the user until the task is cancelled.
/// An authenticator that never answers: it says when a request reached it, then waits to be
/// cancelled. The tests cancel only once it was reached, when no HTTP request is in flight:
/// cancelling a URLSession request can hit a race in FoundationNetworking's task registry on
/// Linux ("a task that is not in the registry") that kills the test process.
struct SlowAuthenticator: PasskeyAuthenticator {
    let reached: AsyncStream<Void>
    private let reaching: AsyncStream<Void>.Continuation

    init() {
        (reached, reaching) = AsyncStream.makeStream()
    }

    /// Waits until a request reached the authenticator.
    func waitUntilReached() async {
        for await _ in reached { return }
    }

    func makeCredential(_ options: PasskeyCreationOptions, style: PasskeyRequestStyle) async throws -> PasskeyRegistration {
        reaching.yield()
        try await Task.sleep(for: .seconds(60))
        throw LatchkeyError(.invalidResponse, "the test should have cancelled")
    }

    func getAssertion(_ options: PasskeyAssertionOptions, style: PasskeyRequestStyle) async throws -> PasskeyAssertion {
        reaching.yield()
        try await Task.sleep(for: .seconds(60))
        throw LatchkeyError(.invalidResponse, "the test should have cancelled")
    }
}
