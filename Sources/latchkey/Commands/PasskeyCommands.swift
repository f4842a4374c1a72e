import FoundationEssentials
import LatchkeyServer

/// `latchkey passkeys list` and `latchkey passkeys remove`: an account's passkeys, as an
/// operator sees and removes them, through the service the server uses.
enum PasskeyCommands {
    static let user = Option(name: "user", valueName: "ID_OR_USERNAME", help: "the account: its user id, username or email", isRequired: true)

    static let list = Command(
        path: ["passkeys", "list"], summary: "List an account's passkeys.", options: [OperatorCommands.config, user],
        details: """
            One line per passkey, oldest first: its id (for `passkeys remove`), its name, when it
            was registered and last used, whether it is backed up (synced, as iCloud Keychain
            passkeys are), the provider its AAGUID names (or the AAGUID when the list of known
            providers does not name it) and how its attestation was taken (none, self, verified).
            """
    ) { arguments in
        try await OperatorCommands.withApplication(arguments) { application in
            guard let userID = try await account(arguments, application) else { return 1 }
            var table = Table("ID", "NAME", "CREATED", "LAST USED", "BACKED UP", "AUTHENTICATOR", "ATTESTATION")
            for passkey in try await application.services.passkeys.summaries(userID: userID) {
                table.add(
                    passkey.id, passkey.name, OperatorCommands.date(passkey.createdAt), OperatorCommands.date(passkey.lastUsedAt),
                    passkey.backedUp ? "yes" : "no", passkey.authenticator ?? passkey.aaguid, passkey.attestation)
            }
            print(table.text, terminator: "")
            return 0
        }
    }

    static let remove = Command(
        path: ["passkeys", "remove"], summary: "Remove a lost or stolen passkey from an account.", arguments: ["ID"],
        options: [
            OperatorCommands.config, user,
            Option(name: "end-sessions", valueName: nil, help: "also end every live session of the account"),
        ],
        details: """
            The passkey stops working at once; the removal is audited as passkey.removed with
            by: operator. It may be the account's last way to sign in (no password, no Sign in
            with Apple, no other passkey): it is removed all the same, since a stolen passkey
            must not keep working, and the command says so; `latchkey users set-password` gives
            the holder a way back in. Sessions the passkey already opened go on unless
            --end-sessions ends them all. `latchkey passkeys list --user …` shows the ids.
            """
    ) { arguments in
        try await OperatorCommands.withApplication(arguments) { application in
            guard let userID = try await account(arguments, application) else { return 1 }
            let id = arguments[argument: "ID"]
            let context = RequestContext(requestID: "cli")
            let removal: PasskeyRemoval
            do {
                removal = try await application.services.passkeys.removeAsOperator(id, userID: userID, context: context)
            } catch let error as AuthError where error.code == .notFound {
                printError("latchkey: user \(userID) has no passkey \(id)")
                return 1
            }
            print("removed \(id)")
            if removal.wasLastWayToSignIn {
                print("it was the account's last way to sign in: it has no password, Apple identity or other passkey now;")
                print("give the holder one with `latchkey users set-password \(userID)`")
            }
            if arguments.flags.contains("end-sessions") {
                let ended = try await application.services.sessions.revokeSessions(userID: userID, sessionIDs: nil, reason: "operator", context: context)
                print("ended \(ended.count) session\(ended.count == 1 ? "" : "s")")
            } else {
                let live = try await application.services.sessions.sessions(userID: userID).count
                if live > 0 { print("\(live) live session\(live == 1 ? " goes" : "s go") on; --end-sessions ends them") }
            }
            return 0
        }
    }

    static let all = [list, remove]

    /// The user id `--user` names, or nil after saying that no account has it.
    static func account(_ arguments: ParsedArguments, _ application: LatchkeyApplication) async throws -> String? {
        try await OperatorCommands.account(named: arguments[option: "user"] ?? "", application)
    }
}
