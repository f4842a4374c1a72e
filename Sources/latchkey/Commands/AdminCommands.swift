import LatchkeyServer

/// `latchkey admins`: the roles of the admin API, granted only here, on the server's machine,
/// through ``AdminService`` (each change audited in its transaction).
enum AdminCommands {
    static let config = ServeCommands.configOption

    static let grant = Command(
        path: ["admins", "grant"], summary: "Give an account the admin or support role of the admin API.", arguments: ["USER"],
        options: [config, Option(name: "role", valueName: "ROLE", help: "admin (everything) or support (users, sessions, audit log)", isRequired: true)],
        details: """
            USER is a user id (`latchkey users list`). admin may do everything the admin API does;
            support may read users, sessions and the audit log, end sessions and send a password
            reset, and nothing about clients, keys, or deleting accounts and factors. Granting a
            role to an account that has one replaces it. The account uses the API with an access
            token carrying the scope admin, from an OAuth client registered with --scope admin.
            """
    ) { arguments in
        guard let role = AdminRole(rawValue: arguments[option: "role"] ?? "") else {
            throw UsageError(message: "--role must be admin or support")
        }
        return try await OperatorCommands.withApplication(arguments) { application in
            let user = arguments[argument: "USER"]
            do {
                try await application.services.admin.grant(userID: user, role: role, context: RequestContext(requestID: "cli"))
            } catch let error as AuthError where error.code == .notFound {
                printError("latchkey: no user \(user)")
                return 1
            }
            print("\(user) is \(role.rawValue)")
            return 0
        }
    }

    static let revoke = Command(
        path: ["admins", "revoke"], summary: "Take an account's role of the admin API away; its next admin request is refused.",
        arguments: ["USER"], options: [config]
    ) { arguments in
        try await OperatorCommands.withApplication(arguments) { application in
            let user = arguments[argument: "USER"]
            guard try await application.services.admin.revoke(userID: user, context: RequestContext(requestID: "cli")) else {
                printError("latchkey: \(user) holds no role")
                return 1
            }
            print("\(user) holds no role now")
            return 0
        }
    }

    static let list = Command(path: ["admins", "list"], summary: "List the accounts holding a role of the admin API.", options: [config]) { arguments in
        try await OperatorCommands.withApplication(arguments) { application in
            var table = Table("USER", "ROLE", "EMAIL", "GRANTED")
            for grant in try await application.services.admin.grantedRoles() {
                table.add(grant.user.id, grant.role.rawValue, grant.user.email ?? "-", OperatorCommands.date(grant.grantedAt))
            }
            print(table.text, terminator: "")
            return 0
        }
    }

    static let all = [grant, revoke, list]
}
