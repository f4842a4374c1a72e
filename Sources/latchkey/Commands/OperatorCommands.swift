import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyHTTP
import LatchkeyServer

/// `latchkey keys`, `latchkey users` and `latchkey sessions`: what an operator does to a
/// database, through the same services the server uses.
enum OperatorCommands {
    static let config = ServeCommands.configOption

    static let keysList = Command(path: ["keys", "list"], summary: "List signing keys with their state and dates.", options: [config]) { arguments in
        try await withApplication(arguments) { application in
            let now = Date()
            let keys = try await application.signingKeys.allKeys()
            var table = Table("KID", "ALG", "STATE", "CREATED", "ACTIVATES", "RETIRES", "LEAVES JWKS")
            for key in keys {
                table.add(key.id, key.algorithm.rawValue, key.state(at: now), date(key.createdAt), date(key.activatesAt), date(key.retiresAt), date(key.expiresAt))
            }
            print(table.text, terminator: "")
            return 0
        }
    }

    static let keysRotate = Command(
        path: ["keys", "rotate"], summary: "Publish new signing keys now; they sign after the activation delay.",
        options: [
            config, Option(name: "activate-in", valueName: "SECONDS", help: "delay before it signs (default 900, at least 330)"),
            Option(name: "algorithm", valueName: "ALG", help: "rotate only the ES256 or the RS256 key (default both)"),
        ],
        details: """
            Each algorithm has its own key: ES256 signs access tokens (and the ID tokens of
            clients that ask for ES256), RS256 signs ID tokens. The new key appears in the JWKS
            at once and starts signing after the delay, so caches (max-age 300 s) and other
            server processes (told within seconds, re-reading every 30 s at the latest) know it
            first. The old key keeps being published until every token it signed has expired.
            """
    ) { arguments in
        guard let delay = TimeInterval(arguments[option: "activate-in"] ?? "900"), delay >= 330 else {
            throw UsageError(message: "--activate-in must be at least 330 seconds (JWKS max-age plus the reload interval)")
        }
        var algorithms = SigningKeyRing.algorithms
        if let name = arguments[option: "algorithm"] {
            guard let algorithm = algorithms.first(where: { $0.rawValue == name.uppercased() }) else {
                throw UsageError(message: "--algorithm must be ES256 or RS256")
            }
            algorithms = [algorithm]
        }
        return try await withApplication(arguments) { application in
            for algorithm in algorithms {
                let key = try await application.signingKeys.rotate(algorithm, activationDelay: delay, now: Date())
                print("published \(key.algorithm) key \(key.id); it signs from \(date(key.activatesAt))")
            }
            return 0
        }
    }

    static let usersList = Command(path: ["users", "list"], summary: "List users, newest first.", options: [config]) { arguments in
        try await withApplication(arguments) { application in
            var table = Table("ID", "EMAIL", "NAME", "CREATED")
            for user in try await UserRepository(database: application.database).list(limit: 1000) {
                let name = [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
                table.add(user.id, user.email ?? "-", name.isEmpty ? "-" : name, date(user.createdAt))
            }
            print(table.text, terminator: "")
            return 0
        }
    }

    static let usersShow = Command(path: ["users", "show"], summary: "Show one user, their second factors and live sessions.", arguments: ["ID"], options: [config]) { arguments in
        try await withApplication(arguments) { application in
            let id = arguments[argument: "ID"]
            guard let user = try await UserRepository(database: application.database).find(id) else {
                printError("latchkey: no user \(id)")
                return 1
            }
            print("id          \(user.id)")
            print("email       \(user.email ?? "-") (verified: \(user.emailVerified), private relay: \(user.isPrivateEmail))")
            print("name        \([user.givenName, user.familyName].compactMap { $0 }.joined(separator: " "))")
            print("created     \(date(user.createdAt))")
            if let disabledAt = try await application.services.accounts.disabledAt(userID: user.id) {
                print("disabled    \(date(disabledAt)); it cannot sign in until enabled")
            }
            let identities = try await application.identities(userID: user.id)
            print("identities  \(identities.count)")
            for identity in identities {
                var state = identity.revokedAt.map { "revoked \(date($0))" } ?? "active"
                if identity.provider == "apple" {
                    state += identity.hasAppleRefreshToken ? ", Apple token stored, validated \(date(identity.lastValidatedAt))" : ", no Apple token"
                }
                if let transfer = identity.transferSubject { state += ", transfer id \(transfer) imported" }
                print("  \(identity.provider)  \(identity.subject)  \(identity.email ?? "-")  \(state)")
            }
            let factors = application.services.factors
            let devices = try await factors.devices(userID: user.id)
            let totp = try await factors.totpStatus(userID: user.id)
            print("factors     \(devices.count) device key\(devices.count == 1 ? "" : "s"), TOTP \(totp)")
            for device in devices {
                print("  \(device.id)  \(device.label)  added \(date(device.createdAt))  last used \(date(device.lastUsedAt))")
            }
            let sessions = try await application.services.sessions.sessions(userID: user.id)
            print("sessions    \(sessions.count) live")
            for session in sessions {
                print("  \(session.id)  \(session.amr.joined(separator: ","))  last used \(date(session.lastUsedAt))  \(session.ip ?? "")")
            }
            return 0
        }
    }

    static let usersSetPassword = Command(
        path: ["users", "set-password"], summary: "Set a user's password, read as one line from standard input; ends the user's sessions.",
        arguments: ["ID"],
        options: [config, Option(name: "username", valueName: "NAME", help: "also set the username (needed when the user has neither a password nor an email)")],
        details: """
            The password is the first line of standard input, without its line ending, so it never
            appears in the process list or the shell history: for example
            `printf '%s\\n' "$NEW_PASSWORD" | latchkey users set-password usr_… --config latchkey.json`.
            The same rules as for users apply (length, not a common password). Every session of
            the user ends, a lockout after failed sign-ins on the account is lifted, so the new
            password works at once, and both are written to the audit log.
            """
    ) { arguments in
        guard let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw UsageError(message: "the new password must be the first line of standard input")
        }
        return try await withApplication(arguments) { application in
            let id = arguments[argument: "ID"]
            let lifted: Bool
            do {
                lifted = try await application.setPassword(userID: id, password: password, username: arguments[option: "username"])
            } catch let error as AuthError {
                printError("latchkey: \(error.message)")
                return 1
            } catch let error as HTTPError {
                printError("latchkey: \(error.errorDescription)")
                return 1
            }
            print("password set for \(id); their sessions have ended")
            if lifted { print("the lockout after failed sign-ins is lifted") }
            return 0
        }
    }

    static let usersRemoveDevice = Command(
        path: ["users", "remove-device"], summary: "Remove a lost device key from a user.", arguments: ["USER", "DEVICE"], options: [config],
        details: """
            For a user who lost the device and cannot sign in with it. The key stops working at
            once; the removal is audited. `latchkey users show USER` lists the user's device keys.
            """
    ) { arguments in
        try await withApplication(arguments) { application in
            let user = arguments[argument: "USER"]
            let device = arguments[argument: "DEVICE"]
            do {
                try await application.services.factors.removeDevice(
                    device, userID: user, principal: nil, context: RequestContext(requestID: "cli"))
            } catch let error as AuthError where error.code == .notFound {
                printError("latchkey: user \(user) has no device key \(device)")
                return 1
            }
            print("removed \(device)")
            return 0
        }
    }

    static let usersDisable = Command(
        path: ["users", "disable"], summary: "Disable an account: it cannot sign in, and its sessions end at once.", arguments: ["USER"],
        options: [config],
        details: """
            USER is a user id, a username or the email of one account. Every sign-in of the account
            is refused with account_disabled, whatever the method; its sessions, OAuth grants and
            hosted-page sessions end now, and its access tokens stop working within a second.
            Audited as account.disabled with actor: operator. Exits 0 when the account is disabled
            (saying so when it was already), 1 when there is no such account.
            """
    ) { arguments in
        try await withApplication(arguments) { application in
            guard let id = try await account(named: arguments[argument: "USER"], application) else { return 1 }
            if try await application.services.accounts.disable(userID: id, context: .operatorCLI) {
                print("disabled \(id); its sessions have ended")
            } else {
                print("\(id) was already disabled; nothing changed")
            }
            return 0
        }
    }

    static let usersEnable = Command(
        path: ["users", "enable"], summary: "Enable a disabled account again.", arguments: ["USER"], options: [config],
        details: """
            USER is a user id, a username or the email of one account. The account can sign in
            again; the sessions that ended when it was disabled stay ended. Audited as
            account.enabled with actor: operator. Exits 0 when the account is enabled (saying so
            when it was not disabled), 1 when there is no such account.
            """
    ) { arguments in
        try await withApplication(arguments) { application in
            guard let id = try await account(named: arguments[argument: "USER"], application) else { return 1 }
            if try await application.services.accounts.enable(userID: id, context: .operatorCLI) {
                print("enabled \(id); it can sign in again")
            } else {
                print("\(id) was not disabled; nothing changed")
            }
            return 0
        }
    }

    static let sessionsList = Command(
        path: ["sessions", "list"], summary: "List a user's live sessions.",
        options: [config, Option(name: "user", valueName: "ID", help: "the user", isRequired: true)]
    ) { arguments in
        try await withApplication(arguments) { application in
            var table = Table("SESSION", "AMR", "CREATED", "LAST USED", "EXPIRES", "IP")
            for session in try await application.services.sessions.sessions(userID: arguments[option: "user"] ?? "") {
                table.add(session.id, session.amr.joined(separator: ","), date(session.createdAt), date(session.lastUsedAt), date(session.expiresAt), session.ip ?? "-")
            }
            print(table.text, terminator: "")
            return 0
        }
    }

    static let sessionsRevoke = Command(path: ["sessions", "revoke"], summary: "End a session at once.", arguments: ["ID"], options: [config]) { arguments in
        try await withApplication(arguments) { application in
            let id = arguments[argument: "ID"]
            let revoked = try await application.services.sessions.revokeSessions(
                userID: nil, sessionIDs: [id], reason: "operator", context: RequestContext(requestID: "cli"))
            guard !revoked.isEmpty else {
                printError("latchkey: no live session \(id)")
                return 1
            }
            print("revoked \(id)")
            return 0
        }
    }

    static let usersDelete = Command(
        path: ["users", "delete"], summary: "Delete an account as DELETE /v1/me does.", arguments: ["ID"], options: [config],
        details: """
            Ends every session, deletes the user's personal data (the audit log keeps the user id and
            events only) and revokes their Apple tokens at Apple. A revocation Apple does not accept
            now stays queued in the database; a running server retries it until Apple does.
            """
    ) { arguments in
        try await withApplication(arguments) { application in
            let id = arguments[argument: "ID"]
            guard try await UserRepository(database: application.database).find(id) != nil else {
                printError("latchkey: no user \(id)")
                return 1
            }
            let queued = try await application.deleteUser(id: id)
            print("deleted \(id)")
            if queued > 0 { print("\(queued) Apple token revocation(s) queued: Apple was not reachable from here; the server retries them") }
            return 0
        }
    }

    static let appleImportTransfers = Command(
        path: ["apple", "import-transfers"], summary: "Import team-transfer ids so returning users keep their accounts.",
        arguments: ["FILE"], options: [config],
        details: """
            FILE is a JSON array from the sending team's migration: each entry has "transfer_sub" and
            either "sub" (the user's Apple id at the sending team, as stored here) or "user_id". A
            later Sign in with Apple whose token carries that transfer_sub links to the account.
            """
    ) { arguments in
        let path = arguments[argument: "FILE"]
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError(message: "\(path) cannot be read") }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data))
        } catch {
            throw UsageError(message: "\(path) is not JSON (\(error))")
        }
        return try await withApplication(arguments) { application in
            let result = try await application.importAppleTransfers(json)
            print("recorded \(result.recorded) transfer ids; \(result.unknown) entries matched no Apple account")
            return 0
        }
    }

    static let all = [
        keysList, keysRotate, usersList, usersShow, usersSetPassword, usersDelete, usersRemoveDevice, usersDisable, usersEnable, sessionsList,
        sessionsRevoke, appleImportTransfers,
    ]

    /// The user id an operator's USER names (an id, a username, or the email of one account), or
    /// nil after saying why none.
    static func account(named name: String, _ application: LatchkeyApplication) async throws -> String? {
        do {
            guard let userID = try await application.services.accounts.account(named: name) else {
                printError("latchkey: no user with the id, username or email \(name)")
                return nil
            }
            return userID
        } catch let error as AuthError where error.code == .conflict {
            printError("latchkey: \(error.message)")
            return nil
        }
    }

    /// Opens the configured database (migrating it) without serving, runs `body`, closes.
    static func withApplication(_ arguments: ParsedArguments, _ body: (LatchkeyApplication) async throws -> Int32) async throws -> Int32 {
        let configuration = try ServeCommands.loadConfiguration(arguments, dev: false)
        try ServeCommands.checkServerData(configuration, forOperator: true)
        let application = try await LatchkeyApplication.open(configuration: configuration, accessLog: false)
        do {
            let status = try await body(application)
            await application.shutdown()
            return status
        } catch {
            await application.shutdown()
            throw error
        }
    }

    static func date(_ date: Date?) -> String {
        date?.ISO8601Format() ?? "-"
    }
}
