import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyHTTPServer
public import LatchkeySandbox
public import LatchkeyStore
import Synchronization

/// One Latchkey server: the master key, the database, the routes and the HTTP server, wired
/// from a ``Configuration``.
///
/// ``open(configuration:accessLog:)`` prepares everything that can fail (key file, database,
/// migrations) before ``start()`` binds the port, so a bad setting stops start-up before any
/// request is accepted. ``shutdown()`` stops accepting, lets in-flight requests finish, then
/// closes the database.
public final class LatchkeyApplication: Sendable {
    /// The configuration it runs with.
    public let configuration: Configuration
    /// The database.
    public let database: SQLiteDatabase
    /// The key that seals secrets at rest.
    public let masterKey: MasterKey
    /// Whether the master key file was created by this start (development mode).
    public let masterKeyCreated: Bool
    /// The migrations this start applied.
    public let appliedMigrations: [Migration]
    /// Counters and histograms for `/metrics`.
    public let metrics: Metrics
    /// The signing keys.
    public let signingKeys: SigningKeyRing
    /// Sessions and their tokens.
    public let sessions: SessionService
    /// Sign in with Apple.
    let apple: AppleService
    /// The Apple stand-in mounted under `/sandbox/apple` in development mode.
    public let sandbox: AppleSandbox?
    /// Password accounts.
    public let passwords: PasswordService
    /// The routes, for the contract test that holds them against docs/openapi.yaml.
    let router: Router
    private let server: HTTPServer
    private let clock: @Sendable () -> Date
    private let backgroundJobs = Mutex<[Task<Void, Never>]>([])

    private init(
        configuration: Configuration, database: SQLiteDatabase, masterKey: MasterKey, masterKeyCreated: Bool,
        appliedMigrations: [Migration], metrics: Metrics, signingKeys: SigningKeyRing, sessions: SessionService, apple: AppleService,
        sandbox: AppleSandbox?, passwords: PasswordService, router: Router, server: HTTPServer,
        clock: @escaping @Sendable () -> Date
    ) {
        self.clock = clock
        self.configuration = configuration
        self.database = database
        self.masterKey = masterKey
        self.masterKeyCreated = masterKeyCreated
        self.appliedMigrations = appliedMigrations
        self.metrics = metrics
        self.signingKeys = signingKeys
        self.sessions = sessions
        self.apple = apple
        self.sandbox = sandbox
        self.passwords = passwords
        self.router = router
        self.server = server
    }

    /// Loads the master key, opens and migrates the database, and builds the routes.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - accessLog: Whether to write JSON access-log lines to standard error.
    ///   - clock: The time; injected so tests can move it.
    ///   - appleTimeout: How long a request to Apple may take.
    /// - Throws: ``ConfigurationError`` for a bad key file or database path; ``LatchkeyStore/StoreError``.
    public static func open(
        configuration: Configuration, accessLog: Bool = true, clock: @escaping @Sendable () -> Date = { Date() },
        appleTimeout: Duration = .seconds(10)
    ) async throws -> LatchkeyApplication {
        let (masterKey, created) = try MasterKey.load(path: configuration.masterKeyFile, createIfMissing: configuration.dev)
        let appleSettings = try AppleSettings(configuration)
        let httpClient = EventHTTPClient()
        var sandbox: AppleSandbox?
        if configuration.dev, let developer = appleSettings.sandboxDeveloper {
            sandbox = try AppleSandbox(issuer: appleSettings.issuer, developer: developer, client: httpClient, clock: clock)
        }
        let database = try openDatabase(configuration)
        let applied: [Migration]
        let signingKeys: SigningKeyRing
        do {
            applied = try await Migrator.migrate(database)
            signingKeys = try await SigningKeyRing.open(
                database: database, masterKey: masterKey, accessTokenTTL: configuration.accessTokenTTL, now: clock())
        } catch {
            await database.close()
            throw error
        }
        let metrics = Metrics()
        let sessions = SessionService(database: database, keys: signingKeys, metrics: metrics, configuration: configuration, clock: clock)
        let apple = AppleService(
            settings: appleSettings, httpClient: httpClient, timeout: appleTimeout, sessions: sessions, masterKey: masterKey, clock: clock)
        let bearer = BearerAuthenticator(sessions: sessions)
        let router = Router()
        router.add(middleware: StoreErrorMiddleware())
        OperationsRoutes(configuration: configuration, database: database, metrics: metrics).register(on: router)
        SessionRoutes(sessions: sessions, bearer: bearer).register(on: router)
        AccountRoutes(sessions: sessions, apple: apple, bearer: bearer).register(on: router)
        AppleRoutes(apple: apple).register(on: router)
        let factors = FactorService(sessions: sessions, masterKey: masterKey, failuresPerAccount: configuration.rateLimits.loginPerAccount15m)
        FactorRoutes(factors: factors, bearer: bearer).register(on: router)
        let passwords = try PasswordService(database: database, sessions: sessions, metrics: metrics, configuration: configuration)
        if configuration.password.enabled { PasswordRoutes(passwords: passwords, bearer: bearer).register(on: router) }
        sandbox?.register(on: router)

        let (host, port) = configuration.listenAddress
        var serverConfiguration = HTTPServer.Configuration()
        serverConfiguration.host = host
        serverConfiguration.port = port
        serverConfiguration.trustedProxies = TrustedProxies(networks: configuration.trustedProxies.compactMap(IPNetwork.init))
        let sink = MetricsAccessLog(metrics: metrics, next: accessLog ? try StandardErrorAccessLog() : nil)
        let server = HTTPServer(configuration: serverConfiguration, responder: router, accessLog: sink)
        metrics.gauge(.httpConnections) { Double(server.activeConnections) }
        return LatchkeyApplication(
            configuration: configuration, database: database, masterKey: masterKey, masterKeyCreated: created,
            appliedMigrations: applied, metrics: metrics, signingKeys: signingKeys, sessions: sessions, apple: apple, sandbox: sandbox,
            passwords: passwords, router: router, server: server, clock: clock)
    }

    /// Opens the configured SQLite file, creating its directory.
    public static func openDatabase(_ configuration: Configuration) throws -> SQLiteDatabase {
        let path = configuration.sqlitePath
        let directory = URL(filePath: path).deletingLastPathComponent().path(percentEncoded: false)
        do {
            if !FileManager.default.fileExists(atPath: directory) {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            return try SQLiteDatabase(
                configuration: SQLiteDatabase.Configuration(
                    path: path, durability: SQLiteDatabase.Durability(rawValue: configuration.databaseDurability) ?? .full,
                    onStorageEvent: ServerLog.storage))
        } catch {
            throw ConfigurationError(problems: ["database: \(configuration.database) cannot be opened (\(error))"])
        }
    }

    /// Binds the listening address and starts serving.
    ///
    /// - Throws: when the address cannot be bound (in use, not permitted).
    public func start() throws {
        try server.start()
        sessions.setPublicURL(publicURL, audience: configuration.audience)
        if apple.settings.usesSandbox { apple.settings.useSandbox(at: publicURL) }
        sandbox?.setNotificationURL(URL(string: publicURL + "/v1/apple/notifications")!)
        let jobs = [signingKeys.reloadPeriodically(clock: clock), housekeeping.start()]
        backgroundJobs.withLock { $0 = jobs }
    }

    /// Runs the periodic work once, now (``Housekeeping``): the Apple revocation outbox, the
    /// daily Apple refresh-token validation and the purge of expired rows. It also runs every
    /// 30–60 seconds on its own; operators and tests call this to not wait.
    public func runBackgroundJobs() async throws {
        try await housekeeping.runOnce()
    }

    private var housekeeping: Housekeeping { Housekeeping(apple: apple, database: database, clock: clock) }

    /// The port the server listens on (the real one when `listen` asked for port 0).
    public var boundPort: Int { server.boundPort }

    /// The URL clients reach this server at: `public_url`, or the bound address.
    public var publicURL: String {
        if let publicURL = configuration.publicURL { return publicURL }
        let host = configuration.listenAddress.host
        let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : (host.contains(":") ? "[\(host)]" : host)
        return "http://\(shown):\(boundPort)"
    }

    /// Stops accepting, finishes in-flight requests within the deadline, closes the database.
    public func shutdown() async {
        backgroundJobs.withLock { $0.forEach { $0.cancel() } }
        await server.shutdown()
        await passwords.shutdown()
        await database.close()
    }
}

/// Counts every request in ``Metrics`` and passes the entry on to the access log.
struct MetricsAccessLog: AccessLogSink {
    let metrics: Metrics
    let next: (any AccessLogSink)?

    func record(_ entry: AccessLogEntry) {
        // Unmatched paths share one label value, so a scan cannot grow the metric without bound.
        metrics.recordRequest(method: entry.method.rawValue, route: entry.route ?? "unmatched", status: entry.status, seconds: entry.durationSeconds)
        next?.record(entry)
    }

    func flush() { next?.flush() }
}

