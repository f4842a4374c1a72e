import FoundationEssentials

extension ConfigurationLoader {
    /// Every setting's path in the file (`apple.team_id`), for tests that hold the docs and the
    /// example file to the loader.
    package static var settingPaths: [String] { settings.map(\.path) }

    /// `LATCHKEY_*` variables that name no setting. They are ignored, so a misspelt one would
    /// otherwise leave its setting at the default without a word.
    ///
    /// - Returns: One line per variable, with the nearest setting's variable when one is close.
    package static func environmentWarnings(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        // The passwords are read from the environment only, never from a setting of the file.
        let known = Set(settings.map { environmentName($0.path) } + ["LATCHKEY_DATABASE_PASSWORD", "LATCHKEY_SMTP_PASSWORD"])
        return environment.keys.filter { $0.hasPrefix("LATCHKEY_") && !known.contains($0) }.sorted().map { name in
            "\(name): no such setting, ignored" + Suggestion.hint(for: name, among: known)
        }
    }

    /// Settings a production server starts with that are probably not what was meant: it listens
    /// beyond loopback, yet its public URL (the `iss` clients check) is the plain-http bind
    /// address or a loopback address. (Plain http anywhere else is refused at load.)
    ///
    /// - Returns: One line per problem; empty in development mode and on a loopback listener.
    package static func exposureWarnings(_ configuration: Configuration) -> [String] {
        guard !configuration.dev, let listen = Configuration.parseListen(configuration.listen), !Configuration.isLoopback(listen.host) else {
            return []
        }
        guard let publicURL = configuration.publicURL else {
            return [
                "public_url: not set, so tokens name the plain-http bind address as their issuer while the server listens on "
                    + "\(configuration.listen); set it to the https URL clients use"
            ]
        }
        guard let host = URL(string: publicURL)?.host, Configuration.isLoopback(host) else { return [] }
        return [
            "public_url: \(publicURL) is a loopback address while the server listens on \(configuration.listen): clients on other "
                + "machines cannot use it, yet tokens name it as their issuer; set it to the https URL clients use"
        ]
    }
}
