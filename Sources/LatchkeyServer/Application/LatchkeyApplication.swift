package import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyHTTPServer
package import LatchkeyStore
import Synchronization

/// One Latchkey server: the master key, the database, the routes and the HTTP server, wired
/// from a ``Configuration``.
///
/// ``open(configuration:accessLog:clock:appleTimeout:)`` prepares everything that can fail (key
/// file, database, migrations) before ``start()`` binds the port, so a bad setting stops start-up
/// before any request is accepted. ``shutdown()`` stops accepting, lets in-flight requests
/// finish, then closes the database.
///
/// Between the two, whoever builds the application may ``mount(_:)`` routes of its own: the
/// executable mounts the development sandbox Apple that way (``developmentApple``), so the server
/// does not link it.
package final class LatchkeyApplication: Sendable {
    /// The configuration it runs with.
    package let configuration: Configuration
    /// The database: SQLite or PostgreSQL, as `database` says.
    package let database: any SQLDatabase
    /// The key that seals secrets at rest.
    package let masterKey: MasterKey
    /// Whether the master key file was created by this start (development mode).
    package let masterKeyCreated: Bool
    /// The migrations this start applied.
    package let appliedMigrations: [Migration]
    /// Counters and histograms for `/metrics`.
    package let metrics: Metrics
    /// The signing keys.
    package let signingKeys: SigningKeyRing
    /// The domain services, built once here and handed to the routes.
    package let services: Services
    /// The OAuth provider's registered clients.
    package var clients: ClientService { services.clients }
    /// Password accounts.
    package var passwords: PasswordService { services.passwords }
    /// The routes, for the contract test that holds them against docs/openapi.yaml.
    let router: Router
    private let server: HTTPServer
    private let clock: @Sendable () -> Date
    private let jobs: BackgroundJobs
    private let state = Mutex(State())

    private struct State {
        var mounts: [any RouteMount] = []
        var started = false
        var backgroundTasks: [Task<Void, Never>] = []
        var subscriptions: [SQLChangeSubscription] = []
    }

    private init(
        configuration: Configuration, database: any SQLDatabase, masterKey: MasterKey, masterKeyCreated: Bool,
        appliedMigrations: [Migration], metrics: Metrics, signingKeys: SigningKeyRing, services: Services, router: Router, server: HTTPServer,
        jobs: BackgroundJobs, clock: @escaping @Sendable () -> Date
    ) {
        self.clock = clock
        self.configuration = configuration
        self.database = database
        self.masterKey = masterKey
        self.masterKeyCreated = masterKeyCreated
        self.appliedMigrations = appliedMigrations
        self.metrics = metrics
        self.signingKeys = signingKeys
        self.services = services
        self.router = router
        self.server = server
        self.jobs = jobs
    }

    /// Loads the master key, opens and migrates the database, and builds the routes.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - accessLog: Whether to write JSON access-log lines to standard error.
    ///   - clock: The time; injected so tests can move it.
    ///   - appleTimeout: How long a request to Apple may take.
    ///   - rsaKeys: Makes the RS256 signing keys; injected so tests need not generate each one.
    /// - Throws: ``ConfigurationError`` for a bad key file or database path; ``LatchkeyStore/StoreError``.
    package static func open(
        configuration: Configuration, accessLog: Bool = true, clock: @escaping @Sendable () -> Date = { Date() },
        appleTimeout: Duration = .seconds(10), rsaKeys: @escaping SigningKeyRing.RSAKeys = SigningKeyRing.generatedRSAKeys
    ) async throws -> LatchkeyApplication {
        let (masterKey, created) = try MasterKey.load(path: configuration.masterKeyFile, createIfMissing: configuration.dev)
        let appleSettings = try AppleSettings(configuration)
        // Apple's and the upstream providers' endpoints: at 64 sign-ins at a time, 8 idle
        // connections per origin left a quarter of the code exchanges opening a new one.
        var clientSettings = EventHTTPClient.Configuration()
        clientSettings.maxIdleConnectionsPerOrigin = 64
        let httpClient = try EventHTTPClient(configuration: clientSettings)
        let database = try await openDatabase(configuration)
        let applied: [Migration]
        let signingKeys: SigningKeyRing
        let metrics = Metrics()
        let services: Services
        do {
            applied = try await Migrator.migrate(database)
            signingKeys = try await SigningKeyRing.open(
                database: database, masterKey: masterKey, accessTokenTTL: configuration.accessTokenTTL, now: clock(), rsaKeys: rsaKeys)
            // Refuses settings only a service can check (the SMTP client's CA file).
            services = try Services(
                configuration: configuration, dependencies: Dependencies(database: database, metrics: metrics, clock: clock), keys: signingKeys,
                masterKey: masterKey, appleSettings: appleSettings, httpClient: httpClient, appleTimeout: appleTimeout)
        } catch {
            await database.close()
            throw error
        }
        let jobs = BackgroundJobs(metrics: metrics)
        jobs.showCounters()
        let router = Router()
        router.add(middleware: StoreErrorMiddleware())
        services.registerRoutes(on: router, configuration: configuration)

        let (host, port) = configuration.listenAddress
        var serverConfiguration = HTTPServer.Configuration()
        serverConfiguration.host = host
        serverConfiguration.port = port
        serverConfiguration.trustedProxies = TrustedProxies(networks: configuration.trustedProxies.compactMap(IPNetwork.init))
        let sink = MetricsAccessLog(metrics: metrics, next: accessLog ? try StandardErrorAccessLog() : nil)
        let server = HTTPServer(
            configuration: serverConfiguration, responder: router, accessLog: sink,
            onUnexpectedError: { error, request, route in
                ServerLog.unexpectedError(error, requestID: request.requestID, method: request.method.rawValue, route: route)
            })
        metrics.gauge(.httpConnections) { Double(server.activeConnections) }
        return LatchkeyApplication(
            configuration: configuration, database: database, masterKey: masterKey, masterKeyCreated: created,
            appliedMigrations: applied, metrics: metrics, signingKeys: signingKeys, services: services, router: router, server: server, jobs: jobs,
            clock: clock)
    }

    /// Opens the configured database: the SQLite file, creating its directory, or a pool of
    /// PostgreSQL connections (the first one opened now, so a wrong URL or password stops
    /// start-up).
    ///
    /// - Throws: ``ConfigurationError`` naming the database (its password redacted).
    package static func openDatabase(_ configuration: Configuration) async throws -> any SQLDatabase {
        if configuration.usesPostgreSQL { return try await openPostgreSQL(configuration) }
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

    private static func openPostgreSQL(_ configuration: Configuration) async throws -> PostgreSQLDatabase {
        var password = configuration.databasePassword
        if let file = configuration.databasePasswordFile {
            password = try ConfigurationLoader.password(fromFile: file, setting: "database_password_file")
        }
        var settings = PostgreSQLDatabase.Configuration(url: configuration.database, password: password)
        settings.poolSize = configuration.databasePoolSize
        settings.waitTimeout = .seconds(configuration.databasePoolTimeout)
        settings.statementTimeout = .seconds(configuration.databaseStatementTimeout)
        do {
            return try await PostgreSQLDatabase(configuration: settings)
        } catch {
            throw ConfigurationError(problems: ["database: \(configuration.databaseForDisplay) cannot be opened (\(error))"])
        }
    }

    // MARK: Routes from outside

    /// What a development sandbox Apple must be to stand in for Apple with this server's
    /// settings: who it signs as, and whose client secrets it accepts.
    package struct DevelopmentApple: Sendable {
        /// The `iss` this server expects of identity tokens and notifications (`apple.issuer`).
        package var issuer: String
        /// The team id that signs this server's client secrets: the generated sandbox team's,
        /// or the configured `apple.team_id`.
        package var teamID: String
        /// The key id of the client secrets.
        package var keyID: String
        /// The public half of the key that signs them.
        package var publicKey: P256.Signing.PublicKey
        /// The client ids this server accepts, sorted, then the web Services ID; the first is the
        /// sandbox's default `aud`.
        package var clientIDs: [String]
    }

    /// In development mode, what a sandbox Apple needs to answer for Apple (``DevelopmentApple``);
    /// `nil` outside it. Without an `apple.team_id`, this server's Apple URLs point at
    /// `/sandbox/apple/auth/…` on its own public URL once started, so a sandbox mounted there
    /// with the default prefix is the Apple it talks to.
    package var developmentApple: DevelopmentApple? {
        let settings = services.apple.settings
        guard configuration.dev, let teamKey = settings.teamKey else { return nil }
        return DevelopmentApple(
            issuer: settings.issuer, teamID: teamKey.teamID, keyID: teamKey.keyID, publicKey: teamKey.privateKey.publicKey,
            clientIDs: settings.clientIDs.sorted() + [settings.webClientID].compactMap { $0 }.filter { !settings.clientIDs.contains($0) })
    }

    /// In development mode, the client the sandbox upstream (`/sandbox/oidc`) must accept: the
    /// provider `sandbox` this server signs in through; `nil` outside it.
    package var developmentProvider: (clientID: String, clientSecret: String)? {
        guard configuration.dev, let sandbox = configuration.providers.first(where: \.isSandbox), let secret = sandbox.clientSecret else { return nil }
        return (sandbox.clientID, secret.value)
    }

    /// Adds routes of the caller's beside the server's own: registered now, behind the same
    /// middleware, and told the public URL when the server starts.
    ///
    /// Call it between ``open(configuration:accessLog:clock:appleTimeout:)`` and ``start()``; a
    /// route that clashes with one already registered stops the process.
    package func mount(_ routes: some RouteMount) {
        state.withLock { precondition(!$0.started, "LatchkeyApplication: mount(_:) after start()") }
        routes.register(on: router)
        state.withLock { $0.mounts.append(routes) }
    }

    /// The first mounted routes of type `M`, for whoever mounted them to find them again.
    package func mounted<M: RouteMount>(_ type: M.Type) -> M? {
        state.withLock { $0.mounts.lazy.compactMap { $0 as? M }.first }
    }

    // MARK: Running

    /// Binds the listening address and starts serving and the background jobs.
    ///
    /// - Throws: when the address cannot be bound (in use, not permitted).
    package func start() throws {
        let mounts = state.withLock { state in
            precondition(!state.started, "LatchkeyApplication: start() twice")
            state.started = true
            return state.mounts
        }
        try server.start()
        adoptPublicURL()
        if services.apple.settings.usesSandbox { services.apple.settings.useSandbox(at: publicURL) }
        for provider in services.federation.providers where provider.settings.isSandbox { provider.useSandbox(at: publicURL) }
        for routes in mounts { routes.serverStarted(publicURL: publicURL) }
        let tasks = [signingKeyReload(), housekeeping.start()] + [services.mailOutbox.map(mailDelivery)].compactMap { $0 }
        let subscriptions = [signingKeyChanges(), services.clients.followChanges(), services.devices.followChanges()]
        state.withLock {
            $0.backgroundTasks = tasks
            $0.subscriptions = subscriptions
        }
    }

    /// Sends the outbox's due mail every second, so a message leaves within a second or two of
    /// the commit that queued it.
    private func mailDelivery(_ outbox: MailOutbox) -> Task<Void, Never> {
        jobs.repeating(every: { .seconds(1) }) { [jobs] in
            await jobs.run(.mailOutbox) { try await outbox.runDue() }
        }
    }

    /// Re-reads the key table every ``SigningKeyRing/reloadInterval`` seconds, so the JWKS of a
    /// process that signs nothing still shows keys that other processes added.
    private func signingKeyReload() -> Task<Void, Never> {
        jobs.repeating(every: { .seconds(SigningKeyRing.reloadInterval) }) { [jobs, signingKeys, clock] in
            await jobs.run(.signingKeyReload) { try await signingKeys.reload(now: clock()) }
        }
    }

    /// Reloads the key table when the database announces a key change, so a rotation through
    /// any process reaches this one's JWKS within about a second. Reloads that pile up (a burst
    /// of announcements, SQLite's every commit) coalesce: one runs at a time, one more after it.
    private func signingKeyChanges() -> SQLChangeSubscription {
        let coalescer = ReloadCoalescer()
        let subscription = signingKeys.followChanges { [jobs, signingKeys, clock] in
            coalescer.request {
                _ = await jobs.run(.signingKeyReload) { try await signingKeys.reload(now: clock()) }
            }
        }
        return SQLChangeSubscription {
            subscription.cancel()
            coalescer.stop()
        }
    }

    /// Runs the periodic work once, now (``Housekeeping``): the Apple revocation outbox, the
    /// daily Apple refresh-token validation and the purge of expired rows. It also runs every
    /// 30–60 seconds on its own; operators and tests call this to not wait.
    ///
    /// Every job runs even when one fails; each failure is logged and counted as in the periodic
    /// runs.
    ///
    /// - Throws: The first job's failure.
    package func runBackgroundJobs() async throws {
        if let failure = await housekeeping.runOnce() { throw failure }
    }

    private var housekeeping: Housekeeping { Housekeeping(apple: services.apple, database: database, jobs: jobs, clock: clock) }

    /// The port the server listens on (the real one when `listen` asked for port 0).
    package var boundPort: Int { server.boundPort }

    /// Answers a request as the server would, without a socket (`HTTPServer.respond(head:body:peer:)`):
    /// for tests whose subject is not the wire.
    package func respond(head: [UInt8], body: [UInt8], peer: String = "127.0.0.1") async -> HTTPResponse {
        await server.respond(head: head, body: body, peer: peer)
    }

    /// The URL clients reach this server at: `public_url`, or the bound address (before
    /// ``start()``, the configured one).
    package var publicURL: String {
        if let publicURL = configuration.publicURL { return publicURL }
        let host = configuration.listenAddress.host
        let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : (host.contains(":") ? "[\(host)]" : host)
        return "http://\(shown):\(boundPort == 0 ? configuration.listenAddress.port : boundPort)"
    }

    /// Makes the tokens this process signs name ``publicURL`` as their issuer (and the audience
    /// it implies). ``start()`` does it; a tool that signs tokens for a server of the same
    /// configuration without serving (the benchmark's seeders) calls it, or the server refuses
    /// them as `wrong_issuer`.
    package func adoptPublicURL() {
        services.accessTokens.setPublicURL(publicURL, audience: configuration.audience)
    }

    /// Stops accepting, finishes in-flight requests within the deadline, closes the database.
    package func shutdown() async {
        state.withLock {
            $0.backgroundTasks.forEach { $0.cancel() }
            $0.subscriptions.forEach { $0.cancel() }
        }
        await server.shutdown()
        await services.passwords.shutdown()
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

/// Routes that whoever builds a ``LatchkeyApplication`` adds beside the server's own
/// (``LatchkeyApplication/mount(_:)``): the executable mounts the development sandbox Apple this
/// way, so the server neither links nor knows it.
package protocol RouteMount: Sendable {
    /// Adds the routes; called once, before the server starts.
    func register(on router: Router)
    /// Called once the server listens, with the URL clients reach it at
    /// (``LatchkeyApplication/publicURL``).
    func serverStarted(publicURL: String)
}

extension RouteMount {
    /// Does nothing: routes that need not know the URL.
    package func serverStarted(publicURL: String) {}
}
