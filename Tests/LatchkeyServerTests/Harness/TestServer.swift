import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyHTTP
import LatchkeyCrypto
import LatchkeyHTTPClient
import LatchkeyJSON
import LatchkeySandbox
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import Synchronization

/// A real Latchkey in this process: port 0, a fresh temporary directory with its own SQLite file
/// and master key, development mode with the sandbox Apple mounted as the executable mounts it.
/// Tests talk HTTP to it and look into its database.
///
/// Use ``with(_:_:)`` so the server is always stopped and its directory removed.
final class TestServer: Sendable {
    let directory: URL
    let application: LatchkeyApplication
    let clock: TestClock

    var baseURL: String { application.publicURL }
    var database: any SQLDatabase { application.database }

    private init(directory: URL, application: LatchkeyApplication, clock: TestClock) {
        self.directory = directory
        self.application = application
        self.clock = clock
    }

    /// A configuration for a test server in `directory`.
    static func configuration(in directory: URL) -> Configuration {
        var configuration = Configuration()
        configuration.listen = "127.0.0.1:0"
        configuration.database = "sqlite:" + directory.appendingPathComponent("latchkey.sqlite").path
        configuration.masterKeyFile = directory.appendingPathComponent("master.key").path
        configuration.dev = true
        configuration.apple.clientIDs = ["com.example.app"]
        configuration.password.argon2 = lightArgon2
        return configuration
    }

    /// The Argon2id cost of test servers: the real hash, about forty times cheaper than the
    /// OWASP parameters the product enforces (at those, hashing was most of the CPU of the
    /// password suites, and a large share of `make test`). The suites about the cost itself set
    /// ``Argon2id/Parameters/owaspMinimum`` back: the stored parameters and their upgrade (S11),
    /// a refused login's time (S13), the hashing pool under a flood (S15).
    static let lightArgon2 = Argon2id.Parameters(memoryKiB: 1024, iterations: 1, parallelism: 1)

    /// A handle on an application the test opened and stops itself (for restarts).
    static func attached(_ application: LatchkeyApplication, clock: TestClock, directory: URL) -> TestServer {
        TestServer(directory: directory, application: application, clock: clock)
    }

    /// Starts a server, runs `body`, and stops the server whatever happens.
    ///
    /// - Parameter mounts: Routes of the test's own, mounted besides the sandbox Apple before the
    ///   server starts.
    static func with<T>(
        clock: TestClock = TestClock(), appleTimeout: Duration = .seconds(10), mounts: [any RouteMount] = [],
        _ configure: (inout Configuration) -> Void = { _ in }, _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = configuration(in: directory)
        // LATCHKEY_TEST_ENGINE=postgres runs the suites on a database of the private cluster.
        var postgresDatabase: String?
        if ProcessInfo.processInfo.environment["LATCHKEY_TEST_ENGINE"] == "postgres" {
            let cluster = try PostgreSQLCluster.shared()
            let name = "server_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            try cluster.createDatabase(name)
            postgresDatabase = name
            configuration.database = cluster.url(database: name)
            configuration.databasePasswordFile = cluster.passwordFile
        }
        defer { if let postgresDatabase { try? PostgreSQLCluster.shared().dropDatabase(postgresDatabase) } }
        configure(&configuration)
        let application = try await LatchkeyApplication.open(
            configuration: configuration, accessLog: false, clock: { clock.now }, appleTimeout: appleTimeout,
            rsaKeys: SharedRSAKeys.signing.source())
        let server = TestServer(directory: directory, application: application, clock: clock)
        do {
            try SandboxMount.mount(on: application, clock: clock)
            if let provider = application.developmentProvider {
                OIDCSandboxTestMount.mount(on: application, clientID: provider.clientID, clientSecret: provider.clientSecret, clock: clock)
            }
            for routes in mounts { application.mount(routes) }
            try application.start()
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    private func stop() async {
        await application.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A user made directly in the database: no sign-in endpoint is involved.
    func createUser(email: String = "ada@example.com", givenName: String? = "Ada") async throws -> User {
        let users = UserRepository(database: database)
        let now = clock.now
        return try await database.write { try users.create(email: email, emailVerified: true, givenName: givenName, now: now, on: $0) }
    }

    /// A session for `user`, made through the session service as a sign-in would.
    func startSession(for user: User, amr: [String] = ["pwd"]) async throws -> TokenResponse {
        try await application.services.signIns.startSession(userID: user.id, amr: amr, context: RequestContext(ip: "127.0.0.1"))
    }

    /// Where ``requestOverSocket(_:_:json:body:headers:)`` sends: the public URL, or the bound
    /// address when the test gave a `public_url` (several instances behind one name, as behind a
    /// load balancer, each reached at its own port).
    var requestURL: String {
        application.configuration.publicURL == nil ? baseURL : "http://127.0.0.1:\(application.boundPort)"
    }

    /// Sends a request through the server's parser, router, middleware and error mapping, with
    /// no socket (the router-level harness), and returns the response.
    ///
    /// Nothing is added that the test did not give but `Host`, `Content-Type` for `json`, and
    /// `Content-Length`: no cookie is kept and no redirect followed. The answer has the route's
    /// headers and `X-Request-Id`, not those only the wire writes (`Date`, `Content-Length`).
    /// Tests whose subject is the wire (framing, the access log and the HTTP metrics it feeds,
    /// what a real client sees) use ``requestOverSocket(_:_:json:body:headers:)``.
    func request(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, body: [UInt8]? = nil, headers: [String: String] = [:],
        from peer: String = "127.0.0.1"
    ) async throws -> TestResponse {
        let given = Set(headers.keys.map { $0.lowercased() })
        var fields = headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if !given.contains("host") { fields.insert(("Host", "127.0.0.1:\(application.boundPort)"), at: 0) }
        let content = json.map(\.serialized) ?? body ?? []
        if json != nil && !given.contains("content-type") { fields.append(("Content-Type", "application/json")) }
        if !content.isEmpty || method == .post || method == .put || method == .patch { fields.append(("Content-Length", "\(content.count)")) }
        let head = "\(method.rawValue) \(path) HTTP/1.1\r\n" + fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        let response = await application.respond(head: Array(head.utf8), body: content, peer: peer)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// Sends a request over a socket with URLSession, as a client on the network would: for tests
    /// whose subject is the wire. URLSession follows redirects.
    func requestOverSocket(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, body: [UInt8]? = nil, headers: [String: String] = [:]
    ) async throws -> TestResponse {
        var request = URLRequest(url: URL(string: requestURL + path)!)
        request.httpMethod = method.rawValue
        for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.serialized)
        } else if let body {
            request.httpBody = Data(body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var responseHeaders = HTTPHeaders()
        for case (let name as String, let value as String) in http.allHeaderFields { responseHeaders.add(name, value) }
        return TestResponse(status: http.statusCode, headers: responseHeaders, body: Array(data))
    }
}

/// A clock tests can move; the server reads it for every time check.
final class TestClock: Sendable {
    private let time = Mutex(Date())
    var now: Date { time.withLock { $0 } }
    func advance(by seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// What a test server answered.
struct TestResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    /// The body as JSON.
    var json: JSONValue {
        get throws { try JSONValue(parsing: body) }
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The sandbox Apple mounted on a test server as `latchkey serve --dev` mounts it (the
/// executable's `AppleSandboxMount`), with the test's clock.
struct SandboxMount: RouteMount {
    let sandbox: AppleSandbox

    func register(on router: Router) { sandbox.register(on: router) }

    func serverStarted(publicURL: String) {
        sandbox.setNotificationURL(URL(string: publicURL + "/v1/apple/notifications")!)
    }

    /// Mounts a sandbox trusting `application`'s team key in development mode; nothing outside it.
    static func mount(on application: LatchkeyApplication, clock: TestClock) throws {
        guard let apple = application.developmentApple else { return }
        let sandbox = try AppleSandbox(
            issuer: apple.issuer,
            developer: .init(teamID: apple.teamID, keyID: apple.keyID, publicKey: apple.publicKey, clientIDs: apple.clientIDs),
            client: EventHTTPClient(), clock: { clock.now }, rsaKeys: SharedRSAKeys.apple.source())
        application.mount(SandboxMount(sandbox: sandbox))
    }
}

/// The sandbox OpenID provider mounted on a test server as the executable's `OIDCSandboxMount`
/// mounts it under `/sandbox/oidc`, with the test's clock. `TestServer.with` does not mount it:
/// a test passes one in `mounts:` (``init(clientID:clientSecret:clock:)``).
struct OIDCSandboxTestMount: RouteMount {
    static let clientID = "sandbox-broker"
    static let clientSecret = "sandbox-broker-secret"

    let sandbox: OIDCSandbox

    /// A mount of a new sandbox knowing one client, on the test's clock.
    init(clientID: String = Self.clientID, clientSecret: String = Self.clientSecret, clock: TestClock) {
        sandbox = OIDCSandbox(clientID: clientID, clientSecret: clientSecret, clock: { clock.now })
    }

    func register(on router: Router) { sandbox.register(on: router) }

    func serverStarted(publicURL: String) {
        sandbox.setIssuer(publicURL + "/sandbox/oidc")
    }

    /// Mounts a sandbox provider knowing one client, on the test's clock (before the server starts).
    @discardableResult
    static func mount(on application: LatchkeyApplication, clientID: String, clientSecret: String, clock: TestClock) -> OIDCSandbox {
        let mount = OIDCSandboxTestMount(clientID: clientID, clientSecret: clientSecret, clock: clock)
        application.mount(mount)
        return mount.sandbox
    }
}

extension LatchkeyApplication {
    /// The sandbox Apple mounted under `/sandbox/apple` in development mode; `nil` outside it.
    var sandbox: AppleSandbox? { mounted(SandboxMount.self)?.sandbox }
}

extension TestServer {
    /// Runs `latchkey ARGUMENTS` as an operator on the server's machine would: with a
    /// configuration naming this server's database and master key (written once, here). The
    /// answer is `nil` when the process could not start.
    func operatorCommand() throws -> @Sendable ([String]) async -> Subprocess.Result? {
        let config = directory.appendingPathComponent("operator.json")
        let settings: JSONValue = [
            "database": .string(application.configuration.database),
            "database_password_file": application.configuration.databasePasswordFile.map(JSONValue.string) ?? .null,
            "master_key_file": .string(directory.appendingPathComponent("master.key").path),
        ]
        try Data(settings.serialized).write(to: config)
        return { arguments in
            await BlockingWorkers.run(1, { _ in try? Subprocess.run(Executables.latchkey, arguments + ["--config", config.path]) })[0]
        }
    }
}
