import FoundationEssentials

extension ConfigurationLoader {
    /// `LATCHKEY_*` variables that name no setting. They are ignored, so a misspelt one would
    /// otherwise leave its setting at the default without a word.
    ///
    /// - Returns: One line per variable, with the nearest setting's variable when one is close.
    public static func environmentWarnings(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let known = Set(settings.map { environmentName($0.path) })
        return environment.keys.filter { $0.hasPrefix("LATCHKEY_") && !known.contains($0) }.sorted().map { name in
            "\(name): no such setting, ignored" + Suggestion.hint(for: name, among: known)
        }
    }

    /// Settings a production server starts with that are probably not what was meant: it listens
    /// beyond loopback, yet its public URL (the `iss` clients check) is plain http or a
    /// loopback address.
    ///
    /// - Returns: One line per problem; empty in development mode and on a loopback listener.
    public static func exposureWarnings(_ configuration: Configuration) -> [String] {
        guard !configuration.dev, let listen = Configuration.parseListen(configuration.listen), !Configuration.isLoopback(listen.host) else {
            return []
        }
        guard let publicURL = configuration.publicURL else {
            return [
                "public_url: not set, so tokens name the plain-http bind address as their issuer while the server listens on "
                    + "\(configuration.listen); set it to the https URL clients use"
            ]
        }
        guard let url = URL(string: publicURL), let host = url.host else { return [] }
        var warnings = [String]()
        if url.scheme?.lowercased() == "http" {
            warnings.append(
                "public_url: \(publicURL) is plain http while the server listens on \(configuration.listen); passwords and tokens "
                    + "would cross the network unencrypted: put a TLS proxy in front and use its https URL")
        }
        if Configuration.isLoopback(host) {
            warnings.append(
                "public_url: \(publicURL) is a loopback address while the server listens on \(configuration.listen); clients on "
                    + "other machines cannot use it, and tokens name it as their issuer")
        }
        return warnings
    }
}
