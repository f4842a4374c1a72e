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
            // The upgrade's authenticator data had neither UP nor UV: nobody was asked.
            #expect(authenticator.credentials.count == 1)
        }
    }

    @Test("Errors: a cancelled passkey request is canceled and registers nothing; a passkey from another origin is invalid_grant origin_mismatch")
    func errors() async throws {
        try await Self.with { server in
            let client = server.client()
            _ = try await client.signUp(username: "mary@example.com", password: Self.password)
            await #expect(throws: LatchkeyError(.canceled, "")) { try await client.registerPasskey(using: CancelledAuthenticator()) }
            let task = Task { try await client.registerPasskey(using: SlowAuthenticator()) }
            task.cancel()
            await #expect(throws: LatchkeyError(.canceled, "")) { try await task.value }

            let refused = await #expect(throws: LatchkeyError.self) {
                try await client.registerPasskey(using: SoftwarePasskeyAuthenticator(origin: "https://evil.example"))
            }
            #expect(refused?.code == .server(code: "invalid_grant") && refused?.reason == "origin_mismatch" && refused?.status == 400, "\(String(describing: refused))")
            #expect(try await client.passkeys().isEmpty)
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
struct SlowAuthenticator: PasskeyAuthenticator {
    func makeCredential(_ options: PasskeyCreationOptions, style: PasskeyRequestStyle) async throws -> PasskeyRegistration {
        try await Task.sleep(for: .seconds(60))
        throw LatchkeyError(.invalidResponse, "the test should have cancelled")
    }

    func getAssertion(_ options: PasskeyAssertionOptions, style: PasskeyRequestStyle) async throws -> PasskeyAssertion {
        try await Task.sleep(for: .seconds(60))
        throw LatchkeyError(.invalidResponse, "the test should have cancelled")
    }
}
