import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON

extension ConfigurationLoader {
    /// The id of development mode's sandbox upstream.
    static let sandboxProviderID = "sandbox"
    /// The longest `id`, so it fits a metric label, a path segment and an environment name.
    static let maxProviderIDLength = 32

    /// Reads `providers`: from `LATCHKEY_PROVIDERS` (a JSON array) when set, else from the file.
    /// Each entry's problems name it (`providers[1] (github).client_id: …`); secrets are read
    /// from `client_secret_file` or `LATCHKEY_PROVIDER_<ID>_SECRET` and never appear in a problem.
    static func providers(fileValue: JSONValue?, environment: [String: String]) -> (providers: [Configuration.Provider], problems: [String]) {
        var json = fileValue
        if let text = environment["LATCHKEY_PROVIDERS"] {
            guard let parsed = try? JSONValue(parsing: Array(text.utf8)) else { return ([], ["LATCHKEY_PROVIDERS: not valid JSON"]) }
            json = parsed
        }
        guard let json else { return ([], []) }
        guard case .array(let entries) = json else { return ([], ["providers: must be an array of provider objects"]) }
        var providers: [Configuration.Provider] = []
        var problems: [String] = []
        for (index, entry) in entries.enumerated() {
            let (provider, entryProblems) = self.provider(entry, index: index, environment: environment)
            problems += entryProblems
            guard let provider else { continue }
            if providers.contains(where: { $0.id == provider.id }) {
                problems.append("providers[\(index)] (\(provider.id)).id: another entry has this id")
            }
            providers.append(provider)
        }
        return (providers, problems)
    }

    private static let providerMembers: Set<String> = [
        "id", "kind", "display_name", "client_id", "client_secret_file", "scopes", "link_by_email", "algorithms", "issuer",
        "authorize_url", "token_url", "api_url",
    ]

    private static func provider(
        _ entry: JSONValue, index: Int, environment: [String: String]
    ) -> (Configuration.Provider?, [String]) {
        guard case .object(let members) = entry else { return (nil, ["providers[\(index)]: must be an object"]) }
        let id = members["id"]?.stringValue ?? ""
        let name = "providers[\(index)]" + (id.isEmpty ? "" : " (\(id))")
        var problems: [String] = []
        for key in members.keys.sorted() where !providerMembers.contains(key) {
            problems.append("\(name).\(key): unknown setting" + Suggestion.hint(for: key, among: providerMembers.sorted()))
        }
        func string(_ key: String) -> String? {
            guard let value = members[key] else { return nil }
            guard let text = value.stringValue else {
                problems.append("\(name).\(key): must be a string")
                return nil
            }
            return text
        }
        func strings(_ key: String) -> [String]? {
            guard let value = members[key] else { return nil }
            guard case .array(let elements) = value, let texts = Optional(elements.compactMap(\.stringValue)), texts.count == elements.count else {
                problems.append("\(name).\(key): must be an array of strings")
                return nil
            }
            return texts
        }
        guard !id.isEmpty, id.count <= maxProviderIDLength, id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
            return (nil, problems + ["\(name).id: must be 1 to \(maxProviderIDLength) of a-z, 0-9 and -"])
        }
        guard let kind = string("kind").flatMap(Configuration.Provider.Kind.init(rawValue:)) else {
            return (nil, problems + ["\(name).kind: must be oidc or github"])
        }
        if ["apple", "password"].contains(id) {
            problems.append("\(name).id: \(id) is reserved for Latchkey's own sign-in methods")
        }
        let clientID = string("client_id") ?? ""
        if clientID.isEmpty { problems.append("\(name).client_id: required") }
        let defaultScopes = kind == .oidc ? ["openid", "email", "profile"] : ["read:user", "user:email"]
        var provider = Configuration.Provider(
            id: id, kind: kind, displayName: string("display_name") ?? (kind == .github ? "GitHub" : id.capitalized), clientID: clientID,
            scopes: strings("scopes") ?? defaultScopes)
        if provider.displayName.isEmpty || provider.displayName.count > 40 { problems.append("\(name).display_name: must be 1 to 40 characters") }
        if let value = members["link_by_email"] {
            if let flag = value.boolValue { provider.linkByEmail = flag } else { problems.append("\(name).link_by_email: must be true or false") }
        }
        if let algorithms = strings("algorithms") {
            provider.algorithms = algorithms
            let allowed = Set(UpstreamAlgorithms.allowed.map(\.rawValue))
            if algorithms.isEmpty || !algorithms.allSatisfy(allowed.contains) {
                problems.append("\(name).algorithms: must list some of \(allowed.sorted().joined(separator: ", ")) (never none or an HMAC)")
            }
        }
        switch kind {
        case .oidc:
            provider.issuer = string("issuer") ?? ""
            if !provider.scopes.contains("openid") { problems.append("\(name).scopes: must include openid") }
            if provider.issuer.isEmpty {
                problems.append("\(name).issuer: required for kind oidc")
            } else if let problem = urlProblem(provider.issuer, allowHTTP: false) {
                problems.append("\(name).issuer: \(problem)")
            }
            for key in ["authorize_url", "token_url", "api_url"] where members[key] != nil {
                problems.append("\(name).\(key): applies only to kind github; an OpenID provider's endpoints come from its discovery document")
            }
        case .github:
            if members["issuer"] != nil { problems.append("\(name).issuer: applies only to kind oidc") }
            provider.authorizeURL = string("authorize_url") ?? provider.authorizeURL
            provider.tokenURL = string("token_url") ?? provider.tokenURL
            provider.apiURL = string("api_url") ?? provider.apiURL
            for (key, url) in [("authorize_url", provider.authorizeURL), ("token_url", provider.tokenURL), ("api_url", provider.apiURL)] {
                if let problem = urlProblem(url, allowHTTP: false) { problems.append("\(name).\(key): \(problem)") }
            }
        }
        let variable = "LATCHKEY_PROVIDER_" + String(id.uppercased().map { $0 == "-" ? "_" : $0 }) + "_SECRET"
        provider.clientSecretFile = string("client_secret_file")
        if let secret = environment[variable], !secret.isEmpty {
            provider.clientSecret = Configuration.ProviderSecret(secret)
        } else if let file = provider.clientSecretFile {
            do {
                let secret = try password(fromFile: file, setting: "\(name).client_secret_file")
                if secret.isEmpty { problems.append("\(name).client_secret_file: \(file) is empty") }
                provider.clientSecret = Configuration.ProviderSecret(secret)
            } catch {
                problems += error.problems
            }
        } else if kind == .github {
            problems.append("\(name).client_secret_file: GitHub needs the OAuth app's client secret (or set \(variable))")
        }
        return (provider, problems)
    }

    /// Development mode's sandbox upstream (`/sandbox/oidc` on this server), unless the
    /// configuration names a provider `sandbox` itself. Its client secret is made for this
    /// process: the sandbox mounted in the same process is the only one that must know it.
    /// `LATCHKEY_PROVIDER_SANDBOX_SECRET`, when set, is the secret instead, so that another
    /// server can use this one's sandbox as its upstream (the provider benchmark does).
    static func addSandboxProvider(_ configuration: inout Configuration, environment: [String: String] = [:]) {
        guard configuration.dev, !configuration.providers.contains(where: { $0.id == sandboxProviderID }) else { return }
        var sandbox = Configuration.Provider(
            id: sandboxProviderID, kind: .oidc, displayName: "Sandbox", clientID: "latchkey-dev", scopes: ["openid", "email", "profile"])
        let given = environment["LATCHKEY_PROVIDER_SANDBOX_SECRET"] ?? ""
        sandbox.clientSecret = Configuration.ProviderSecret(given.isEmpty ? Identifiers.secret() : given)
        sandbox.algorithms = ["ES256"]
        sandbox.isSandbox = true
        configuration.providers.append(sandbox)
    }
}
