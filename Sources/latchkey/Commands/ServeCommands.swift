import Dispatch
import FoundationEssentials
import Glibc
import LatchkeyServer
import LatchkeyStore
import Synchronization

/// `latchkey serve` and `latchkey migrate`.
enum ServeCommands {
    static let configOption = Option(name: "config", valueName: "FILE", help: "the JSON configuration (default: built-in defaults)")

    static let serve = Command(
        path: ["serve"], summary: "Run the server until SIGTERM or SIGINT.",
        options: [
            configOption,
            Option(name: "dev", valueName: nil, help: "development mode: local data, sandbox Apple, banner"),
            Option(name: "listen", valueName: "HOST:PORT", help: "override the listen address"),
            Option(name: "public-url", valueName: "URL", help: "override public_url, the URL clients use"),
            Option(name: "lan", valueName: nil, help: "with --dev: listen on every interface, for a Simulator or phone"),
        ],
        details: """
            Settings come from --config and LATCHKEY_* environment variables (see docs/configuration.md).
            On SIGTERM or SIGINT the server stops accepting, lets requests in flight finish, closes the
            database and exits 0; a second signal exits at once.

            --dev --lan opens the development server to the local network: it binds 0.0.0.0 on the
            listen port (8080 unless --listen says otherwise) and names itself by this machine's LAN
            address, or --public-url. Its sandbox Apple signs a token for anyone who asks, so anyone
            who can reach the port can sign in as any user: a trusted network only, never the
            internet (docs/ios.md).
            """
    ) { arguments in
        MallocTuning.apply()
        // Only at start: operator commands keep their standard error for what they did.
        for warning in ConfigurationLoader.environmentWarnings() { printError("latchkey: warning: \(warning)") }
        let configuration = try loadConfiguration(arguments, dev: arguments.flags.contains("dev"))
        for warning in ConfigurationLoader.exposureWarnings(configuration) + ConfigurationLoader.mailWarnings(configuration) {
            printError("latchkey: warning: \(warning)")
        }
        try checkServerData(configuration, forOperator: false)
        // Catch the signals before the port opens, so no SIGTERM can arrive unhandled; a client
        // that hangs up mid-write must not end the process.
        let signals = SignalWaiter([SIGTERM, SIGINT])
        signal(SIGPIPE, SIG_IGN)
        let application = try await LatchkeyApplication.open(configuration: configuration)
        do {
            try AppleSandboxMount.mount(on: application)
            if let provider = application.developmentProvider {
                OIDCSandboxMount.mount(on: application, clientID: provider.clientID, clientSecret: provider.clientSecret)
            }
            if configuration.dev { try await application.clients.registerDevelopmentClient() }
        } catch {
            await application.shutdown()
            throw error
        }
        do {
            try application.start()
        } catch {
            await application.shutdown()
            throw CLIError("listen: cannot serve on \(configuration.listen) (\(error))")
        }
        let trimmer = MallocTuning.trimWhenIdle { [metrics = application.metrics] in metrics.value(.httpConnections) }
        // Written unbuffered: scripts and tests wait for the "listening on" line.
        StandardStreams.write(Banner.text(for: application), to: STDOUT_FILENO)
        let signal = await signals.next()
        printError("latchkey: \(signal == SIGINT ? "SIGINT" : "SIGTERM"): finishing requests in flight, then stopping")
        trimmer.cancel()
        await application.shutdown()
        printError("latchkey: stopped")
        return 0
    }

    static let migrate = Command(
        path: ["migrate"], summary: "Apply database migrations and exit.", options: [configOption]
    ) { arguments in
        let configuration = try loadConfiguration(arguments, dev: false)
        let database = try await LatchkeyApplication.openDatabase(configuration)
        do {
            for migration in try await Migrator.migrate(database) {
                print("applied \(migration.version): \(migration.name)")
            }
            let versions = try await Migrator.appliedVersions(database)
            print("database \(configuration.databaseForDisplay) is at version \(versions.max() ?? 0)")
            await database.close()
            return 0
        } catch {
            await database.close()
            throw error
        }
    }

    /// Loads the configuration or prints every problem, one line each, and fails.
    ///
    /// `--listen`, `--public-url` and `--lan` apply when the command has them.
    static func loadConfiguration(_ arguments: ParsedArguments, dev: Bool) throws -> Configuration {
        do {
            return try ConfigurationLoader.load(
                file: arguments[option: "config"], dev: dev, listen: arguments[option: "listen"], publicURL: arguments[option: "public-url"],
                lan: arguments.flags.contains("lan"))
        } catch {
            throw CLIError(error.problems.map { "configuration: \($0)" }.joined(separator: "\nlatchkey: "))
        }
    }

    /// Stops a command that would otherwise make something new where an operator meant to reach
    /// an existing server's data: an operator command (`users`, `keys`, ...) whose database does
    /// not exist (it would create an empty one), or any command whose database exists without
    /// its master key (a new key could not open the secrets sealed under the old one).
    static func checkServerData(_ configuration: Configuration, forOperator isOperator: Bool) throws {
        // A PostgreSQL database is not a file here; an unreachable one fails when it is opened.
        guard !configuration.usesPostgreSQL else { return }
        let files = FileManager.default
        let database = configuration.sqlitePath
        let key = configuration.masterKeyFile
        if isOperator, !files.fileExists(atPath: database) {
            throw CLIError(
                "no Latchkey database at \(database): this is not the server's directory, or the server has not run yet. "
                    + "Run the command where the server runs, or point at the server's settings with --config FILE "
                    + "(or LATCHKEY_DATABASE and LATCHKEY_MASTER_KEY_FILE).")
        }
        if !configuration.dev, files.fileExists(atPath: database), !files.fileExists(atPath: key) {
            throw CLIError(
                "master_key_file: \(key) does not exist, but the database \(database) does, and its secrets are sealed with the "
                    + "master key it was first used with. Point master_key_file at that key (--config FILE or LATCHKEY_MASTER_KEY_FILE); "
                    + "a new key cannot open them.")
        }
    }
}

/// The lines `serve` prints once it listens: where, on what, and in development mode what to try.
enum Banner {
    static func text(for application: LatchkeyApplication) -> String {
        let configuration = application.configuration
        let host = configuration.listenAddress.host
        let bound = "http://\(host.contains(":") ? "[\(host)]" : host):\(application.boundPort)"
        var text = "latchkey \(Latchkey.version) listening on \(bound)\n"
        text += "  public URL  \(application.publicURL)\(configuration.publicURL == nil ? " (public_url is not set: the bind address)" : "")\n"
        text += "  database    \(configuration.databaseForDisplay)\n"
        text += "  master key  \(configuration.masterKeyFile)\(application.masterKeyCreated ? " (created now, mode 0600)" : "")\n"
        guard configuration.dev else { return text }
        if configuration.lan { text += lanWarning(bound: bound, publicURL: application.publicURL) }
        text += """

            DEVELOPMENT MODE: local data, generated keys. Never expose this server to the internet.

            Sandbox Apple at \(application.publicURL)/sandbox/apple (client id \(configuration.apple.clientIDs.joined(separator: ", "))).
            Mail the server sends (password resets, sign-in codes) lands at \(application.publicURL)/sandbox/mail.
            \(application.developmentProvider == nil ? "" : "Sandbox OpenID provider at \(application.publicURL)/sandbox/oidc: \"Continue with Sandbox\" on the sign-in page.")
            OAuth client \(ClientService.development.id) (first party, public; redirect URIs \(ClientService.development.registration.redirectURIs.joined(separator: ", "))).
            \(passkeyLine(configuration, publicURL: application.publicURL))

            Try:
              latchkey demo --url \(application.publicURL)     (the whole Sign in with Apple story)
              curl \(application.publicURL)/healthz
              curl \(application.publicURL)/metrics
              curl \(application.publicURL)/.well-known/jwks.json
            Stop with Ctrl-C.

            """
        return text
    }
}

extension Banner {
    /// Where passkeys work in development mode, or why they do not.
    static func passkeyLine(_ configuration: Configuration, publicURL: String) -> String {
        guard let party = configuration.relyingParty(publicURL: publicURL) else {
            return configuration.passkeys.enabled
                ? "Passkeys are off: \(publicURL) is an IP address, and an RP ID must be a domain (plain `serve --dev` uses localhost)."
                : "Passkeys are off (passkeys.enabled)."
        }
        let place = party.id == "localhost" ? "in a browser on this machine " : ""
        return "Passkeys work \(place)at \(party.origins.joined(separator: ", ")) (RP ID \(party.id))\(party.id == "localhost" ? ", not at 127.0.0.1" : "")."
    }

    /// The warning `--lan` prints: loud, because the sandbox Apple trusts any caller.
    static func lanWarning(bound: String, publicURL: String) -> String {
        let others = NetworkInterfaces.lanAddresses().filter { !publicURL.contains("//\($0):") }
        let rule = String(repeating: "!", count: 100)
        return """

            \(rule)
            !!  LAN MODE: this development server listens on every interface (\(bound)).
            !!  Its sandbox Apple signs an identity token for anyone who asks, so anyone who can reach this port
            !!  can sign in as any user. Use it on a network you trust only; never let it face the internet.
            !!  Devices reach it at \(publicURL)\(others.isEmpty ? "" : " (this machine's other addresses: \(others.joined(separator: ", ")))").
            \(rule)

            """
    }
}

/// Waits for a termination signal without a handler that could run at a bad moment: the
/// signals are ignored and read from dispatch sources instead. After the first one the default
/// action is restored, so a second Ctrl-C ends the process at once.
final class SignalWaiter: Sendable {
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }

    private let state = Mutex(State())
    // DispatchSource is thread-safe; the array is set once in init.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    /// Starts catching `signals` at once: one that arrives before ``next()`` is kept.
    init(_ signals: [Int32]) {
        for number in signals { signal(number, SIG_IGN) }
        sources = signals.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                for number in signals { signal(number, SIG_DFL) }
                self?.deliver(number)
            }
            source.resume()
            return source
        }
    }

    private func deliver(_ number: Int32) {
        let waiter: CheckedContinuation<Int32, Never>? = state.withLock { state in
            guard state.received == nil else { return nil }
            state.received = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }

    /// The first of the signals to arrive.
    func next() async -> Int32 {
        let number = await withCheckedContinuation { continuation in
            let received: Int32? = state.withLock { state in
                if state.received == nil { state.waiter = continuation }
                return state.received
            }
            if let received { continuation.resume(returning: received) }
        }
        sources.forEach { $0.cancel() }
        return number
    }
}
