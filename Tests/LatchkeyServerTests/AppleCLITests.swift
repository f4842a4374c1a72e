import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// `latchkey demo`, `latchkey apple import-transfers` and `latchkey users delete`, run as an
/// operator runs them.
@Suite("latchkey demo and the Apple operator commands")
struct AppleCLITests {
    @Test("latchkey demo walks both seeds' stories (Apple sign-in, device key as second factor), a password reset by email, a passkey and Continue with Sandbox against a fresh development server")
    func demo() async throws {
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Passkeys need an RP ID, which a server on 127.0.0.1 lacks: localhost, with the origin an
        // app with `webcredentials:localhost` presents.
        let server = try await ServerProcess.start(
            ["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory,
            environment: ["LATCHKEY_PASSKEYS_RP_ID": "localhost", "LATCHKEY_PASSKEYS_ORIGINS": "https://localhost"])
        #expect(server.banner.contains("latchkey demo --url \(server.baseURL)"))
        let result = try Subprocess.run(Executables.latchkey, ["demo", "--url", server.baseURL], directory: directory)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        for step in 1...24 { #expect(result.output.contains("\n\(step). "), "step \(step)") }
        #expect(!result.output.contains("\n25. "))
        // The passkey chapter: registered with the software passkey manager, signed out, signed
        // in with it and no username typed.
        #expect(result.output.contains("\"Grace's iPhone\": ES256, none attestation, user verified, synced"), "\(result.output)")
        #expect(result.output.contains("with amr swk, user, mfa: the passkey is both factors"))
        #expect(result.output.contains("1 passkey, last used just now"))
        #expect(result.output.contains("reason consent_revoked"))
        #expect(result.output.contains("created: false, still Ada Lovelace"))
        #expect(result.output.contains("403 mfa_required"))
        #expect(result.output.contains("signed in with amr apple, hwk, mfa"))
        #expect(result.output.contains("Apple saw the revocation"))
        // The password reset: the mail's code sets the password, the laptop's old refresh token
        // is refused, the old password too, and the new one signs in.
        #expect(result.output.contains("202 with a flow good for 15 minutes"))
        #expect(result.output.contains("\"Reset your Latchkey password\": a code and a link to /email/reset"))
        #expect(result.output.contains("the phone is signed in with amr email"))
        #expect(result.output.contains("400 invalid_grant, reason revoked: the old refresh token is refused"))
        #expect(result.output.contains("old password: 401 invalid_credentials; new password: signed in as usr_"))
        // Continue with Sandbox: a new account from the sandbox provider, its identity listed, and
        // the only way in kept.
        #expect(result.output.contains("the ID token checked: account usr_") && result.output.contains("for Katherine Johnson"))
        #expect(result.output.contains("identities: sandbox (katherine@example.com)"))
        #expect(result.output.contains("409 conflict: an account never loses its last way to sign in"))
        #expect(!result.output.contains("✗"))
        // The code and the link's token were used, never printed.
        let mail = try await Self.resetMail(server.baseURL, to: "grace@example.com")
        let printedSecrets = result.output.contains(mail.code) || result.output.contains(mail.token)
        #expect(!printedSecrets, "the demo printed the reset mail's code or token")
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)

        // Against a server that is not there: a clear failure, exit 1.
        let nobody = try Subprocess.run(Executables.latchkey, ["demo", "--url", "http://127.0.0.1:9"], directory: directory)
        #expect(nobody.status == 1)
        #expect(nobody.output.contains("is the server running"))
    }

    @Test("import-transfers records transfer ids and users delete deletes the account, queueing the Apple revocation")
    func operatorCommands() async throws {
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
        let (subject, userID) = try await Self.signIn(server.baseURL)
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0)

        let file = directory.appendingPathComponent("transfers.json")
        try Data(#"[{"sub": "\#(subject)", "transfer_sub": "t.1"}, {"user_id": "usr_nobody", "transfer_sub": "t.2"}]"#.utf8).write(to: file)
        let imported = try Subprocess.run(Executables.latchkey, ["apple", "import-transfers", file.path], directory: directory)
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("recorded 1 transfer ids; 1 entries matched no Apple account"))
        try Data("{".utf8).write(to: file)
        #expect(try Subprocess.run(Executables.latchkey, ["apple", "import-transfers", file.path], directory: directory).status == 2)

        let shown = try Subprocess.run(Executables.latchkey, ["users", "show", userID], directory: directory)
        #expect(shown.output.contains("apple  \(subject)"))
        #expect(shown.output.contains("Apple token stored") && shown.output.contains("transfer id t.1 imported"))

        let deleted = try Subprocess.run(Executables.latchkey, ["users", "delete", userID], directory: directory)
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(deleted.output.contains("deleted \(userID)"))
        #expect(deleted.output.contains("1 Apple token revocation(s) queued"), "no Apple team is configured for the CLI here")
        let again = try Subprocess.run(Executables.latchkey, ["users", "delete", userID], directory: directory)
        #expect(again.status == 1)
        #expect(again.error.contains("no user"))
    }

    /// The code and the link's token of the newest mail to `address` in the sandbox mailbox.
    static func resetMail(_ baseURL: String, to address: String) async throws -> (code: String, token: String) {
        let (data, _) = try await URLSession.shared.data(from: URL(string: baseURL + "/sandbox/mail.json")!)
        let messages = try JSONValue(parsing: Array(data))["messages"]?.arrayValue ?? []
        let text = try #require(messages.first { $0["to"]?.stringValue == address }?["text"]?.stringValue)
        let code = try #require(text.firstMatch(of: /Your code: ([0-9]{6})/).map { String($0.output.1) })
        let token = try #require(text.firstMatch(of: /token=([A-Za-z0-9_-]+)/).map { String($0.output.1) })
        return (code, token)
    }

    /// Signs in through the server's sandbox, as the demo does; returns the Apple and user ids.
    static func signIn(_ baseURL: String) async throws -> (subject: String, userID: String) {
        let result = try await SandboxSignIn.signIn(at: baseURL)
        return (try #require(result.credential["sub"]?.stringValue), try result.tokens.user.id)
    }
}
