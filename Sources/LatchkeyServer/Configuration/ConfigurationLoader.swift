import FoundationEssentials
import LatchkeyBasics
import LatchkeyCrypto
import LatchkeyErrors
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import LatchkeyStore

/// A configuration that cannot be used: one line per bad setting, each naming it.
///
/// Errors compare by ``code`` only; the ``problems`` are for the operator, each naming the
/// setting, and never hold a secret's value (a key, a password). It has the shape of every error
/// of the package (`CodedError`).
package struct ConfigurationError: CodedError {
    /// The kind of failure; new codes may be added, so switch with a `default`.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// A setting is missing, unknown, mistyped or out of range, or a file or database it
        /// names cannot be read or used.
        package static let invalid = Code(rawValue: "invalid")
    }

    /// The kind of failure.
    package var code: Code
    /// One sentence per problem, each starting with the setting's name.
    package var problems: [String]

    /// Creates an error listing `problems`.
    package init(_ code: Code = .invalid, problems: [String]) {
        self.code = code
        self.problems = problems
    }

    /// The problems, one a line.
    package var message: String { problems.joined(separator: "\n") }

    /// The ``message``.
    package var description: String { message }
}

/// Reads ``Configuration`` from a JSON file and the environment, and validates it.
///
/// One table, ``settings``, lists every setting once: its path in the file, and so its
/// environment variable (`apple.team_id` → `LATCHKEY_APPLE_TEAM_ID`), its type and where it goes.
/// Unknown keys, wrong types and values that make no sense are all collected, so an operator
/// sees every problem at once.
package enum ConfigurationLoader {
    enum Field: Sendable {
        case string(any WritableKeyPath<Configuration, String> & Sendable)
        case optionalString(any WritableKeyPath<Configuration, String?> & Sendable)
        case int(any WritableKeyPath<Configuration, Int> & Sendable, ClosedRange<Int>)
        case uint32(any WritableKeyPath<Configuration, UInt32> & Sendable, ClosedRange<UInt32>)
        case bool(any WritableKeyPath<Configuration, Bool> & Sendable)
        case strings(any WritableKeyPath<Configuration, [String]> & Sendable)
    }

    static let day = 86_400
    static let settings: [(path: String, field: Field)] = [
        ("listen", .string(\.listen)),
        ("public_url", .optionalString(\.publicURL)),
        ("audience", .optionalString(\.audience)),
        ("database", .string(\.database)),
        ("database_durability", .string(\.databaseDurability)),
        ("database_password_file", .optionalString(\.databasePasswordFile)),
        ("database_pool_size", .int(\.databasePoolSize, 1...500)),
        ("database_pool_timeout", .int(\.databasePoolTimeout, 1...60)),
        ("database_statement_timeout", .int(\.databaseStatementTimeout, 1...600)),
        ("master_key_file", .string(\.masterKeyFile)),
        ("access_token_ttl", .int(\.accessTokenTTL, 60...86_400)),
        ("refresh_token_idle_ttl", .int(\.refreshTokenIdleTTL, 300...(400 * day))),
        ("refresh_token_absolute_ttl", .int(\.refreshTokenAbsoluteTTL, 300...(400 * day))),
        ("refresh_token_reuse_grace", .int(\.refreshTokenReuseGrace, 0...300)),
        ("browser_session_ttl", .int(\.browserSessionTTL, 300...(30 * day))),
        ("apple.team_id", .string(\.apple.teamID)),
        ("apple.key_id", .string(\.apple.keyID)),
        ("apple.private_key_file", .string(\.apple.privateKeyFile)),
        ("apple.client_ids", .strings(\.apple.clientIDs)),
        ("apple.issuer", .string(\.apple.issuer)),
        ("apple.keys_url", .string(\.apple.keysURL)),
        ("apple.token_url", .string(\.apple.tokenURL)),
        ("apple.revoke_url", .string(\.apple.revokeURL)),
        ("apple.nonce", .string(\.apple.nonce)),
        ("apple.authorize_url", .string(\.apple.authorizeURL)),
        ("apple.web_client_id", .string(\.apple.webClientID)),
        ("password.enabled", .bool(\.password.enabled)),
        ("password.min_length", .int(\.password.minLength, 8...64)),
        ("password.argon2.memory_kib", .uint32(\.password.argon2.memoryKiB, 19_456...4_194_304)),
        ("password.argon2.iterations", .uint32(\.password.argon2.iterations, 2...100)),
        ("password.argon2.parallelism", .uint32(\.password.argon2.parallelism, 1...64)),
        ("password.hashing_threads", .int(\.password.hashingThreads, 0...64)),
        ("password.hashing_queue_limit", .int(\.password.hashingQueueLimit, 1...10_000)),
        ("rate_limits.login_per_account_15m", .int(\.rateLimits.loginPerAccount15m, 1...1_000)),
        ("rate_limits.login_per_ip_15m", .int(\.rateLimits.loginPerIP15m, 1...100_000)),
        ("rate_limits.email_per_address_hour", .int(\.rateLimits.emailPerAddressHour, 1...1_000)),
        ("rate_limits.email_per_ip_hour", .int(\.rateLimits.emailPerIPHour, 1...100_000)),
        ("email.code_ttl", .int(\.email.codeTTL, 60...3_600)),
        ("device.code_ttl", .int(\.device.codeTTL, 5...3_600)),
        ("email.from", .string(\.email.from)),
        ("email.product_name", .string(\.email.productName)),
        ("email.smtp_url", .optionalString(\.email.smtpURL)),
        ("email.smtp_username", .optionalString(\.email.smtpUsername)),
        ("email.smtp_password_file", .optionalString(\.email.smtpPasswordFile)),
        ("email.ca_file", .optionalString(\.email.caFile)),
        ("email.templates_dir", .optionalString(\.email.templatesDir)),
        ("passkeys.enabled", .bool(\.passkeys.enabled)),
        ("passkeys.rp_id", .optionalString(\.passkeys.rpID)),
        ("passkeys.rp_name", .optionalString(\.passkeys.rpName)),
        ("passkeys.origins", .strings(\.passkeys.origins)),
        ("passkeys.user_verification", .string(\.passkeys.userVerification)),
        ("passkeys.attestation", .string(\.passkeys.attestation)),
        ("passkeys.attestation_roots", .strings(\.passkeys.attestationRoots)),
        ("passkeys.timeout", .int(\.passkeys.timeout, 30...3_600)),
        ("dpop.required", .bool(\.dpop.required)),
        ("dpop.nonce", .string(\.dpop.nonce)),
        ("app_attest.app_ids", .strings(\.appAttest.appIDs)),
        ("app_attest.environment", .string(\.appAttest.environment)),
        ("app_attest.root_ca_file", .optionalString(\.appAttest.rootCAFile)),
        ("app_attest.token_ttl", .int(\.appAttest.tokenTTL, 60...86_400)),
        ("app_attest.enforce", .strings(\.appAttest.enforce)),
        ("app_attest.enforce_mode", .string(\.appAttest.enforceMode)),
        ("associated_domains.webcredentials", .strings(\.associatedDomains.webcredentials)),
        ("associated_domains.applinks", .strings(\.associatedDomains.applinks)),
        ("trusted_proxies", .strings(\.trustedProxies)),
        ("dev", .bool(\.dev)),
    ]

    /// Every path the file may hold: the settings and the objects that group them (`apple`).
    static let knownPaths: Set<String> = Set(settings.flatMap { setting in
        let parts = setting.path.split(separator: ".")
        return (1...parts.count).map { parts.prefix($0).joined(separator: ".") }
    })

    /// The environment variable of a setting path.
    static func environmentName(_ path: String) -> String {
        "LATCHKEY_" + String(path.uppercased().map { $0 == "." ? "_" : $0 })
    }

    /// Loads and validates the configuration.
    ///
    /// - Parameters:
    ///   - file: The JSON file, or `nil` for defaults and environment only.
    ///   - environment: The process environment (injected for tests).
    ///   - dev: `--dev`: forces development mode on.
    ///   - listen: `--listen`: overrides `listen`.
    ///   - publicURL: `--public-url`: overrides `public_url`.
    ///   - lan: `--lan`: development mode on every interface (``Configuration/lan``).
    ///   - lanAddresses: This machine's LAN addresses, the first of which names the server in
    ///     `--lan` mode without `public_url` (injected for tests).
    /// - Throws: ``ConfigurationError`` with every problem found.
    package static func load(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment, dev: Bool = false,
        listen: String? = nil, publicURL: String? = nil, lan: Bool = false,
        lanAddresses: @autoclosure () -> [String] = NetworkInterfaces.lanAddresses()
    ) throws(ConfigurationError) -> Configuration {
        var problems = [String]()
        var values = [String: JSONValue]()
        var providersValue: JSONValue?
        if let file {
            guard FileManager.default.fileExists(atPath: file) else { throw ConfigurationError(problems: ["\(file): no such file"]) }
            do {
                let json = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                guard case .object(var members) = json else { throw ConfigurationError(problems: ["\(file): the configuration must be a JSON object"]) }
                // An array of objects, read by its own rules.
                providersValue = members.removeValue(forKey: "providers")
                flatten(.object(members), prefix: "", into: &values, problems: &problems)
            } catch let error as ConfigurationError {
                throw error
            } catch let error as JSONError {
                throw ConfigurationError(problems: ["\(file): not valid JSON (\(error))"])
            } catch {
                throw ConfigurationError(problems: ["\(file): cannot be read"])
            }
        }

        var configuration = Configuration()
        for (path, field) in settings {
            if let text = environment[environmentName(path)] {
                apply(text: text, to: field, path: environmentName(path), in: &configuration, problems: &problems)
            } else if let value = values[path] {
                apply(json: value, to: field, path: path, in: &configuration, problems: &problems)
            }
        }
        // The password itself only from the environment: a file setting would sit beside the rest.
        if let password = environment["LATCHKEY_DATABASE_PASSWORD"], !password.isEmpty {
            configuration.databasePassword = password
        }
        if let password = environment["LATCHKEY_SMTP_PASSWORD"], !password.isEmpty {
            configuration.email.smtpPassword = password
        }
        if dev { configuration.dev = true }
        if let listen { configuration.listen = listen }
        if let publicURL { configuration.publicURL = publicURL }
        if lan { problems += openToLAN(&configuration, addresses: lanAddresses) }
        let listenGiven = listen != nil || environment[environmentName("listen")] != nil || values["listen"] != nil
        nameDevelopmentServerLocalhost(&configuration, listenGiven: listenGiven)
        if configuration.dev, configuration.apple.clientIDs.isEmpty {
            configuration.apple.clientIDs = ["com.example.app"]
        }
        // The sandbox Apple plays web sign-in too, so a browser can walk it in development.
        if configuration.dev, configuration.apple.teamID.isEmpty, configuration.apple.webClientID.isEmpty {
            configuration.apple.webClientID = "com.example.web"
        }
        problems += readAttestationRoots(&configuration.passkeys)
        problems += readAppAttestRoot(&configuration.appAttest)
        let providers = self.providers(fileValue: providersValue, environment: environment)
        configuration.providers = providers.providers
        problems += providers.problems
        addSandboxProvider(&configuration, environment: environment)
        problems += validate(configuration)
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        return configuration
    }

    /// Development mode on the default address (`latchkey serve --dev`, `make run`) names itself
    /// `http://localhost:PORT` rather than the address it binds, 127.0.0.1: WebAuthn has no RP ID
    /// for an IP address, and `localhost` is the one name a browser treats as a secure context
    /// over plain http, so a browser on this machine can register and use passkeys on the hosted
    /// pages. The socket stays on 127.0.0.1, where `localhost` resolves (a browser that tries
    /// ::1 first is refused there and falls back to it).
    ///
    /// A `public_url`, `--lan`, or a listen address the operator chose (tests bind
    /// 127.0.0.1:0) are left as they are.
    static func nameDevelopmentServerLocalhost(_ configuration: inout Configuration, listenGiven: Bool) {
        guard configuration.dev, !configuration.lan, configuration.publicURL == nil, !listenGiven,
            let listen = Configuration.parseListen(configuration.listen), Configuration.isLoopback(listen.host), listen.port != 0
        else { return }
        configuration.publicURL = "http://localhost:\(listen.port)"
    }

    /// Walks the file's objects into dotted paths; anything that is not a known setting or one
    /// of its parent objects is reported.
    private static func flatten(_ json: JSONValue, prefix: String, into values: inout [String: JSONValue], problems: inout [String]) {
        guard case .object(let members) = json else { return }
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            let path = prefix.isEmpty ? name : prefix + "." + name
            if settings.contains(where: { $0.path == path }) {
                values[path] = value
            } else if case .object = value, settings.contains(where: { $0.path.hasPrefix(path + ".") }) {
                flatten(value, prefix: path, into: &values, problems: &problems)
            } else {
                problems.append("\(path): unknown setting" + Suggestion.hint(for: path, among: knownPaths))
            }
        }
    }

    private static func apply(json: JSONValue, to field: Field, path: String, in configuration: inout Configuration, problems: inout [String]) {
        switch (field, json) {
        case (.string(let keyPath), .string(let value)): configuration[keyPath: keyPath] = value
        case (.optionalString(let keyPath), .string(let value)): configuration[keyPath: keyPath] = value
        case (.optionalString(let keyPath), .null): configuration[keyPath: keyPath] = nil
        case (.bool(let keyPath), .bool(let value)): configuration[keyPath: keyPath] = value
        case (.int, .number(let value)), (.uint32, .number(let value)):
            guard let integer = Int(exactly: value) else {
                problems.append("\(path): must be a whole number")
                return
            }
            apply(integer: integer, to: field, path: path, in: &configuration, problems: &problems)
        case (.strings(let keyPath), .array(let elements)):
            let strings = elements.compactMap(\.stringValue)
            guard strings.count == elements.count else {
                problems.append("\(path): must be an array of strings")
                return
            }
            configuration[keyPath: keyPath] = strings
        default:
            problems.append("\(path): must be \(field.expected)")
        }
    }

    private static func apply(text: String, to field: Field, path: String, in configuration: inout Configuration, problems: inout [String]) {
        switch field {
        case .string(let keyPath): configuration[keyPath: keyPath] = text
        case .optionalString(let keyPath): configuration[keyPath: keyPath] = text.isEmpty || text == "null" ? nil : text
        case .bool(let keyPath):
            switch text.lowercased() {
            case "true", "1", "yes": configuration[keyPath: keyPath] = true
            case "false", "0", "no": configuration[keyPath: keyPath] = false
            default: problems.append("\(path): must be true or false")
            }
        case .int, .uint32:
            guard let integer = Int(text) else {
                problems.append("\(path): must be a whole number")
                return
            }
            apply(integer: integer, to: field, path: path, in: &configuration, problems: &problems)
        case .strings(let keyPath):
            configuration[keyPath: keyPath] = text.split(separator: ",").map { String($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        }
    }

    private static func apply(integer: Int, to field: Field, path: String, in configuration: inout Configuration, problems: inout [String]) {
        switch field {
        case .int(let keyPath, let range):
            guard range.contains(integer) else {
                problems.append("\(path): must be between \(range.lowerBound) and \(range.upperBound)")
                return
            }
            configuration[keyPath: keyPath] = integer
        case .uint32(let keyPath, let range):
            guard let value = UInt32(exactly: integer), range.contains(value) else {
                problems.append("\(path): must be between \(range.lowerBound) and \(range.upperBound)")
                return
            }
            configuration[keyPath: keyPath] = value
        default:
            problems.append("\(path): must be \(field.expected)")
        }
    }

    /// Rules that span settings or need more than a type check.
    static func validate(_ configuration: Configuration) -> [String] {
        var problems = [String]()
        guard let listen = Configuration.parseListen(configuration.listen) else {
            return ["listen: must be host:port, e.g. 127.0.0.1:8080"]
        }
        if configuration.dev, !configuration.lan, !Configuration.isLoopback(listen.host) {
            problems.append(
                "listen: development mode mounts the Apple sandbox, so it listens on a loopback address unless --lan asks for the local network")
        }
        if !["off", "on"].contains(configuration.dpop.nonce) { problems.append("dpop.nonce: must be off or on") }
        if let publicURL = configuration.publicURL {
            if let problem = urlProblem(publicURL, allowHTTP: configuration.dev) { problems.append("public_url: \(problem)") }
        }
        if configuration.usesPostgreSQL {
            do {
                let url = try PostgreSQLURL(configuration.database)
                if url.hasPassword, configuration.databasePasswordFile != nil || configuration.databasePassword != nil {
                    problems.append(
                        "database: the URL holds a password and so does database_password_file or LATCHKEY_DATABASE_PASSWORD; keep one")
                }
            } catch let error as StoreError {
                problems.append("database: \(error.message)")
            } catch {
                problems.append("database: not a PostgreSQL URL")
            }
            if let file = configuration.databasePasswordFile, !FileManager.default.isReadableFile(atPath: file) {
                problems.append("database_password_file: \(file) cannot be read")
            }
        } else if !configuration.database.hasPrefix("sqlite:") || configuration.sqlitePath.isEmpty {
            problems.append("database: must be sqlite:PATH or postgres://USER@HOST:PORT/DATABASE")
        }
        problems += smtpProblems(configuration.email)
        problems += passkeyProblems(configuration)
        problems += appAttestProblems(configuration.appAttest)
        if configuration.email.templatesDir != nil, !configuration.email.isAvailable(dev: configuration.dev) {
            problems.append("email.templates_dir: applies only when mail can be sent; set email.smtp_url")
        }
        if !["full", "normal"].contains(configuration.databaseDurability) {
            problems.append("database_durability: must be full or normal")
        }
        if configuration.masterKeyFile.isEmpty {
            problems.append("master_key_file: must name a file")
        }
        for proxy in configuration.trustedProxies where IPNetwork(proxy) == nil {
            problems.append("trusted_proxies: \(proxy) is not an IP address or a network such as 10.0.0.0/8")
        }
        if configuration.refreshTokenAbsoluteTTL < configuration.refreshTokenIdleTTL {
            problems.append("refresh_token_absolute_ttl: must be at least refresh_token_idle_ttl")
        }
        for (path, url) in [
            ("apple.keys_url", configuration.apple.keysURL), ("apple.token_url", configuration.apple.tokenURL),
            ("apple.revoke_url", configuration.apple.revokeURL), ("apple.authorize_url", configuration.apple.authorizeURL),
        ] {
            if let problem = urlProblem(url, allowHTTP: false) { problems.append("\(path): \(problem)") }
        }
        if !["required", "optional"].contains(configuration.apple.nonce) {
            problems.append("apple.nonce: must be required or optional")
        }
        let apple = configuration.apple
        if !apple.teamID.isEmpty, !configuration.dev, apple.keyID.isEmpty || apple.privateKeyFile.isEmpty {
            problems.append("apple.key_id: the key id and apple.private_key_file are needed with apple.team_id")
        }
        if !configuration.dev, !apple.clientIDs.isEmpty, apple.teamID.isEmpty {
            problems.append("apple.team_id: needed with apple.client_ids, to exchange codes and revoke tokens when an account is deleted")
        }
        if !configuration.dev, !apple.webClientID.isEmpty, apple.teamID.isEmpty {
            problems.append("apple.team_id: needed with apple.web_client_id, to exchange the codes Apple posts to the sign-in page")
        }
        let privateKeyFile = apple.privateKeyFile
        if !privateKeyFile.isEmpty, !FileManager.default.isReadableFile(atPath: privateKeyFile) {
            problems.append("apple.private_key_file: \(privateKeyFile) cannot be read")
        }
        for (path, ids) in [
            ("associated_domains.webcredentials", configuration.associatedDomains.webcredentials),
            ("associated_domains.applinks", configuration.associatedDomains.applinks),
        ] {
            for id in ids where !isAppID(id) {
                problems.append("\(path): \(id) is not an app id (TEAMID.bundle.id)")
            }
        }
        return problems
    }

    /// The password in `file`: its first line (the newline an editor or `echo` leaves is not
    /// part of it).
    ///
    /// - Throws: ``ConfigurationError`` naming `setting` when the file cannot be read.
    static func password(fromFile file: String, setting: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(problems: ["\(setting): \(file) cannot be read"])
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }

    /// Outbound URLs must be https, except on loopback, where http lets local stand-ins work.
    static func urlProblem(_ text: String, allowHTTP: Bool) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            return "\(text) is not an absolute URL"
        }
        switch scheme {
        case "https": return nil
        case "http" where allowHTTP || Configuration.isLoopback(host): return nil
        default: return "must be https (http only on a loopback address)"
        }
    }

    /// `TEAMID.bundle.id`: a ten-character team id, a dot, and a bundle id.
    static func isAppID(_ id: String) -> Bool {
        let parts = id.split(separator: ".", maxSplits: 1)
        return parts.count == 2 && parts[0].count == 10 && parts[0].allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
            && !parts[1].isEmpty && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.".contains($0)) }
    }
}

extension ConfigurationLoader.Field {
    var expected: String {
        switch self {
        case .string: "a string"
        case .optionalString: "a string or null"
        case .int, .uint32: "a whole number"
        case .bool: "true or false"
        case .strings: "an array of strings"
        }
    }
}
