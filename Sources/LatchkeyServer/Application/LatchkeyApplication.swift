import Foundation
import LatchkeyHTTP
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
    private let server: HTTPServer
    private let clock: @Sendable () -> Date
    private let keyReloader = Mutex<Task<Void, Never>?>(nil)

    private init(
        configuration: Configuration, database: SQLiteDatabase, masterKey: MasterKey, masterKeyCreated: Bool,
        appliedMigrations: [Migration], metrics: Metrics, signingKeys: SigningKeyRing, sessions: SessionService, server: HTTPServer,
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
        self.server = server
    }

    /// Loads the master key, opens and migrates the database, and builds the routes.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - accessLog: Whether to write JSON access-log lines to standard error.
    ///   - clock: The time; injected so tests can move it.
    /// - Throws: ``ConfigurationError`` for a bad key file or database path; ``LatchkeyStore/StoreError``.
    public static func open(
        configuration: Configuration, accessLog: Bool = true, clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> LatchkeyApplication {
        let (masterKey, created) = try MasterKey.load(path: configuration.masterKeyFile, createIfMissing: configuration.dev)
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
        let router = Router()
        OperationsRoutes(configuration: configuration, database: database, metrics: metrics).register(on: router)
        SessionRoutes(sessions: sessions, bearer: BearerAuthenticator(sessions: sessions)).register(on: router)
        FactorRoutes(factors: FactorService(sessions: sessions, masterKey: masterKey), bearer: BearerAuthenticator(sessions: sessions)).register(on: router)

        let (host, port) = configuration.listenAddress
        var serverConfiguration = HTTPServer.Configuration()
        serverConfiguration.host = host
        serverConfiguration.port = port
        let sink = MetricsAccessLog(metrics: metrics, next: accessLog ? StandardErrorAccessLog() : nil)
        let server = HTTPServer(configuration: serverConfiguration, responder: router, accessLog: sink)
        metrics.gauge(.httpConnections) { Double(server.activeConnections) }
        return LatchkeyApplication(
            configuration: configuration, database: database, masterKey: masterKey, masterKeyCreated: created,
            appliedMigrations: applied, metrics: metrics, signingKeys: signingKeys, sessions: sessions, server: server, clock: clock)
    }

    /// Opens the configured SQLite file, creating its directory.
    public static func openDatabase(_ configuration: Configuration) throws -> SQLiteDatabase {
        let path = configuration.sqlitePath
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            return try SQLiteDatabase(configuration: SQLiteDatabase.Configuration(path: path))
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
        let reloader = signingKeys.reloadPeriodically(clock: clock)
        keyReloader.withLock { $0 = reloader }
    }

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
        keyReloader.withLock { $0?.cancel() }
        await server.shutdown()
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
}
