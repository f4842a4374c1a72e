import FoundationEssentials
import LatchkeyJSON
import LatchkeyServer

/// `latchkey clients`: the OAuth clients an operator registers, lists, shows, removes and gives
/// new secrets, through the same ``ClientService`` the server uses (each change audited).
enum ClientCommands {
    static let config = ServeCommands.configOption
    static let json = Option(name: "json", valueName: nil, help: "print JSON")

    static let add = Command(
        path: ["clients", "add"], summary: "Register an OAuth client; prints its client_id and, once, its client_secret.",
        options: [
            config,
            Option(name: "name", valueName: "NAME", help: "the name users see on the consent page", isRequired: true),
            Option(
                name: "redirect-uri", valueName: "URI", help: "where authorization responses may go (repeat for more; required but for --grant device_code alone)",
                isRepeatable: true),
            Option(
                name: "grant", valueName: "G",
                help: "a grant it may use: authorization_code, client_credentials, device_code (repeat; default authorization_code)",
                isRepeatable: true),
            Option(name: "confidential", valueName: nil, help: "give it a secret (a web app's server side)"),
            Option(name: "first-party", valueName: nil, help: "one of ours: skips the consent page"),
            Option(name: "post-logout-redirect-uri", valueName: "URI", help: "where logout may send the browser (repeat for more)", isRepeatable: true),
            Option(name: "scope", valueName: "S", help: "a scope it may be granted (repeat; default openid profile email offline_access)", isRepeatable: true),
            Option(name: "id-token-alg", valueName: "ALG", help: "RS256 (default) or ES256"),
            Option(name: "jwks-file", valueName: "FILE", help: "its public keys (a JWK Set): it authenticates with private_key_jwt, no secret"),
            Option(name: "require-dpop", valueName: nil, help: "issue it only DPoP-bound tokens (RFC 9449): token requests need a DPoP proof"),
            json,
        ],
        details: """
            Redirect URIs are matched as exact strings. Allowed: https://host/…; http only on the
            loopback addresses http://127.0.0.1/… and http://[::1]/… (registered without a port,
            any port matches); for public clients also a private-use scheme in reverse-DNS form,
            such as com.example.app:/oauth/callback. Refused: localhost, fragments, wildcards,
            userinfo. A confidential client's secret is printed once and stored only as a SHA-256
            hash; `clients rotate-secret` makes a new one. A client registered with --jwks-file is
            confidential without a secret: it signs a client_assertion (private_key_jwt, RS256 or
            ES256) with one of those keys. A client registered with --require-dpop gets tokens
            only with a DPoP proof. --grant device_code is for a device without a browser (an
            Apple TV): it signs in with a code typed on a phone (RFC 8628) and needs no redirect URI.
            Every client with authorization_code or device_code may use refresh_token too. With --json the output is
            {"client_id": …, "client_secret": …}, without client_secret when there is none.
            """
    ) { arguments in
        var jwks: String?
        if let path = arguments[option: "jwks-file"] {
            guard let data = FileManager.default.contents(atPath: path) else { throw AuthError.invalidRequest("cannot read --jwks-file \(path)") }
            jwks = String(decoding: data, as: UTF8.self)
        }
        let grants = try ClientService.grantTypes(arguments[all: "grant"], field: "--grant")
        var registration = ClientRegistration(
            name: arguments[option: "name"] ?? "", redirectURIs: arguments[all: "redirect-uri"],
            postLogoutRedirectURIs: arguments[all: "post-logout-redirect-uri"], confidential: arguments.flags.contains("confidential"),
            firstParty: arguments.flags.contains("first-party"), grantTypes: grants,
            scopes: arguments[all: "scope"].isEmpty ? nil : Set(arguments[all: "scope"]),
            idTokenAlgorithm: arguments[option: "id-token-alg"] ?? "RS256", jwks: jwks)
        registration.requiresDPoP = arguments.flags.contains("require-dpop")
        return try await withClients(arguments) { clients in
            let (client, secret) = try await clients.register(registration)
            if arguments.flags.contains("json") {
                print(credentials(client.id, secret).serializedString)
            } else {
                print("client_id      \(client.id)")
                if let secret {
                    print("client_secret  \(secret)")
                    print("the secret is shown this once; only its hash is stored")
                }
            }
            return 0
        }
    }

    static let list = Command(path: ["clients", "list"], summary: "List the registered OAuth clients, oldest first.", options: [config, json]) { arguments in
        try await withClients(arguments) { clients in
            let all = try await clients.list()
            if arguments.flags.contains("json") {
                print(JSONValue.object(["clients": .array(all.map(describe))]).serializedString)
                return 0
            }
            var table = Table("CLIENT", "NAME", "TYPE", "REDIRECT URIS", "CREATED")
            for client in all {
                table.add(client.id, client.name, type(client), client.redirectURIs.joined(separator: " "), OperatorCommands.date(client.createdAt))
            }
            print(table.text, terminator: "")
            return 0
        }
    }

    static let show = Command(path: ["clients", "show"], summary: "Show one OAuth client.", arguments: ["ID"], options: [config, json]) { arguments in
        try await withClients(arguments) { clients in
            let id = arguments[argument: "ID"]
            guard let client = try await clients.client(id: id) else {
                printError("latchkey: no client \(id)")
                return 1
            }
            if arguments.flags.contains("json") {
                print(describe(client).serializedString)
                return 0
            }
            print("client_id                  \(client.id)")
            print("name                       \(client.name)")
            print("type                       \(type(client))")
            print("redirect uris              \(client.redirectURIs.joined(separator: " "))")
            print("post-logout redirect uris  \(client.postLogoutRedirectURIs.isEmpty ? "-" : client.postLogoutRedirectURIs.joined(separator: " "))")
            print("grant types                \(client.grantTypes.map(\.rawValue).sorted().joined(separator: " "))")
            print("scopes                     \(client.scopes.sorted().joined(separator: " "))")
            print("id token algorithm         \(client.idTokenAlgorithm)")
            if client.requiresDPoP { print("dpop                       required") }
            print("created                    \(OperatorCommands.date(client.createdAt))")
            return 0
        }
    }

    static let remove = Command(
        path: ["clients", "remove"], summary: "Remove an OAuth client; its sessions, codes and consents end with it.", arguments: ["ID"],
        options: [config]
    ) { arguments in
        try await withClients(arguments) { clients in
            let id = arguments[argument: "ID"]
            guard try await clients.remove(id: id) else {
                printError("latchkey: no client \(id)")
                return 1
            }
            print("removed \(id)")
            return 0
        }
    }

    static let rotateSecret = Command(
        path: ["clients", "rotate-secret"], summary: "Give a confidential client a new secret; the old one stops working at once.",
        arguments: ["ID"], options: [config, json]
    ) { arguments in
        try await withClients(arguments) { clients in
            let id = arguments[argument: "ID"]
            let secret = try await clients.rotateSecret(id: id)
            if arguments.flags.contains("json") {
                print(credentials(id, secret).serializedString)
            } else {
                print("client_id      \(id)")
                print("client_secret  \(secret)")
                print("the secret is shown this once; only its hash is stored")
            }
            return 0
        }
    }

    static let all = [add, list, show, remove, rotateSecret]

    /// Opens the configured database as the other operator commands do, runs `body` with the
    /// client service, and turns a refusal (a bad redirect URI, an unknown client) into one line
    /// on standard error and exit status 1.
    static func withClients(_ arguments: ParsedArguments, _ body: (ClientService) async throws -> Int32) async throws -> Int32 {
        try await OperatorCommands.withApplication(arguments) { application in
            do {
                return try await body(application.clients)
            } catch let error as AuthError {
                printError("latchkey: \(error.message)")
                return 1
            }
        }
    }

    /// `{"client_id": …, "client_secret": …}`, the secret left out when there is none.
    static func credentials(_ id: String, _ secret: String?) -> JSONValue {
        var members: [String: JSONValue] = ["client_id": .string(id)]
        if let secret { members["client_secret"] = .string(secret) }
        return .object(members)
    }

    /// A client as `list --json` and `show --json` print it; never its secret.
    static func describe(_ client: OAuthClient) -> JSONValue {
        .object([
            "client_id": .string(client.id), "name": .string(client.name), "confidential": .bool(client.isConfidential),
            "first_party": .bool(client.isFirstParty), "redirect_uris": .array(client.redirectURIs.map(JSONValue.string)),
            "post_logout_redirect_uris": .array(client.postLogoutRedirectURIs.map(JSONValue.string)),
            "grant_types": .array(client.grantTypes.map(\.rawValue).sorted().map(JSONValue.string)),
            "scopes": .array(client.scopes.sorted().map(JSONValue.string)), "id_token_algorithm": .string(client.idTokenAlgorithm),
            "created_at": .string(OperatorCommands.date(client.createdAt)), "require_dpop": .bool(client.requiresDPoP),
        ])
    }

    /// `confidential` or `public`, and `first-party` when it is.
    static func type(_ client: OAuthClient) -> String {
        (client.isConfidential ? "confidential" : "public") + (client.isFirstParty ? ", first-party" : "")
    }
}
