import Foundation
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// `latchkey passkeys list` and `latchkey passkeys remove`: what an operator sees of an
/// account's passkeys, and removing a lost or stolen one (docs/reference.md, "Passkeys").
@Suite("Passkey operator commands")
struct PasskeyOperatorTests {
    typealias Authenticator = SoftwareAuthenticator
    typealias Registration = PasskeyRegistrationTests

    /// Registers a passkey for `user` with `authenticator`, and returns its id.
    static func register(_ server: TestServer, _ user: User, _ authenticator: Authenticator, name: String? = nil) async throws -> String {
        let token = try await server.startSession(for: user)
        let (flowID, challenge, _) = try await Registration.options(server, token)
        let response = try await Registration.register(server, token, flowID: flowID, try authenticator.registration(challenge: challenge), name: name)
        #expect(response.status == 201, "\(response.text)")
        return try response.decode(WirePasskey.self).id
    }

    @Test("passkeys list shows an account's passkeys by id or username; remove takes one away at once, audited as the operator's, and says when it was the last way to sign in")
    func listAndRemove() async throws {
        try await TestServer.with({
            $0.passkeys.rpID = Authenticator.rpID
            $0.passkeys.origins = [Authenticator.origin]
        }) { server in
            let ada = try await server.createUser()
            _ = try await server.application.setPassword(userID: ada.id, password: "correct horse battery staple", username: "ada")
            var apple = Authenticator.es256()
            apple.aaguid = [UInt8](hex: "fbfc3007154e4ecc8c0b6e020557d7bd")
            let applePasskey = try await Self.register(server, ada, apple)
            let other = Authenticator.es256()
            let otherPasskey = try await Self.register(server, ada, other, name: "YubiKey")

            let run = try server.operatorCommand()

            let list = try #require(await run(["passkeys", "list", "--user", "ADA"]))
            #expect(list.status == 0, "\(list.error)")
            let lines = list.output.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("AUTHENTICATOR") == true, "\(list.output)")
            let appleLine = try #require(lines.first { $0.hasPrefix(applePasskey) }, "\(list.output)")
            #expect(appleLine.contains("Apple Passwords  ") && appleLine.hasSuffix("none"), "named and attributed from the AAGUID: \(appleLine)")
            let otherLine = try #require(lines.first { $0.hasPrefix(otherPasskey) })
            #expect(otherLine.contains("YubiKey") && otherLine.contains("a1a1a1a1-a1a1-a1a1-a1a1-a1a1a1a1a1a1"), "an unknown AAGUID is shown as is: \(otherLine)")
            #expect(try #require(await run(["passkeys", "list", "--user", ada.id])).output == list.output, "the user id names the same account")

            let nobody = try #require(await run(["passkeys", "list", "--user", "nobody"]))
            #expect(nobody.status == 1 && nobody.error.contains("no user with the id, username or email nobody"))
            let wrongID = try #require(await run(["passkeys", "remove", "--user", "ada", "pk_nope"]))
            #expect(wrongID.status == 1 && wrongID.error.contains("has no passkey pk_nope"), "\(wrongID.error)")

            // Ada keeps a password and another passkey: not her last way in.
            let removed = try #require(await run(["passkeys", "remove", "--user", "ada", applePasskey]))
            #expect(removed.status == 0, "\(removed.error)")
            #expect(removed.output.contains("removed \(applePasskey)") && !removed.output.contains("last way to sign in"), "\(removed.output)")
            #expect(try await server.application.services.passkeys.list(userID: ada.id).map(\.id) == [otherPasskey])
            let entry = try #require(try await AuditLog(database: server.database).entries(userID: ada.id, event: "passkey.removed").first)
            #expect(entry.details["by"] == "operator" && entry.details["passkey_id"] == applePasskey && entry.details["last_way_to_sign_in"] == "false")
            #expect(entry.requestID == "cli")

            // Grace has nothing but her passkey, and it was stolen: it goes all the same, with her sessions.
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let gracePasskey = try await Self.register(server, grace, Authenticator.es256())
            #expect(try await server.application.services.sessions.sessions(userID: grace.id).count == 1)
            let last = try #require(await run(["passkeys", "remove", "--user", grace.id, gracePasskey, "--end-sessions"]))
            #expect(last.status == 0, "\(last.error)")
            #expect(last.output.contains("it was the account's last way to sign in"), "\(last.output)")
            #expect(last.output.contains("latchkey users set-password \(grace.id)"))
            #expect(last.output.contains("ended 1 session"))
            #expect(try await server.application.services.passkeys.list(userID: grace.id).isEmpty)
            #expect(try await server.application.services.sessions.sessions(userID: grace.id).isEmpty)
            let graceEntry = try #require(try await AuditLog(database: server.database).entries(userID: grace.id, event: "passkey.removed").first)
            #expect(graceEntry.details["last_way_to_sign_in"] == "true" && graceEntry.details["by"] == "operator")
        }
    }
}
