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
        ],
        details: """
            Settings come from --config and LATCHKEY_* environment variables (see docs/configuration.md).
            On SIGTERM or SIGINT the server stops accepting, lets requests in flight finish, closes the
            database and exits 0; a second signal exits at once.
            """
    ) { arguments in
        MallocTuning.apply()
        let configuration = try loadConfiguration(arguments, dev: arguments.flags.contains("dev"), listen: arguments[option: "listen"])
        // Catch the signals before the port opens, so no SIGTERM can arrive unhandled; a client
        // that hangs up mid-write must not end the process.
        let signals = SignalWaiter([SIGTERM, SIGINT])
        signal(SIGPIPE, SIG_IGN)
        let application = try await LatchkeyApplication.open(configuration: configuration)
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
        let configuration = try loadConfiguration(arguments, dev: false, listen: nil)
        let database = try LatchkeyApplication.openDatabase(configuration)
        do {
            for migration in try await Migrator.migrate(database) {
                print("applied \(migration.version): \(migration.name)")
            }
            let versions = try await Migrator.appliedVersions(database)
            print("database \(configuration.database) is at version \(versions.max() ?? 0)")
            await database.close()
            return 0
        } catch {
            await database.close()
            throw error
        }
    }

    /// Loads the configuration or prints every problem, one line each, and fails.
    static func loadConfiguration(_ arguments: ParsedArguments, dev: Bool, listen: String?) throws -> Configuration {
        do {
            return try ConfigurationLoader.load(file: arguments[option: "config"], dev: dev, listen: listen)
        } catch {
            throw CLIError(error.problems.map { "configuration: \($0)" }.joined(separator: "\nlatchkey: "))
        }
    }
}

/// The lines `serve` prints once it listens: where, on what, and in development mode what to try.
enum Banner {
    static func text(for application: LatchkeyApplication) -> String {
        let configuration = application.configuration
        var text = "latchkey \(Latchkey.version) listening on \(application.publicURL)\n"
        text += "  database    \(configuration.database)\n"
        text += "  master key  \(configuration.masterKeyFile)\(application.masterKeyCreated ? " (created now, mode 0600)" : "")\n"
        guard configuration.dev else { return text }
        text += """

            DEVELOPMENT MODE: local data, generated keys. Never expose this server to the internet.

            Sandbox Apple at \(application.publicURL)/sandbox/apple (client id \(configuration.apple.clientIDs.joined(separator: ", "))).

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
