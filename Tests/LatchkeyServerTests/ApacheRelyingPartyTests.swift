import Foundation
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// Apache httpd with Debian's mod_auth_openidc as a confidential relying party: a relying party
/// no one here wrote finds the provider through discovery, sends the browser to the hosted
/// pages, exchanges the code with its secret, validates the ID token and shows the claims on
/// the page it protects.
final class ApacheRelyingParty: @unchecked Sendable {
    // @unchecked: the Process is set up in init and afterwards only signalled and waited for.
    static let httpd = "/usr/sbin/apache2"
    static let modules = "/usr/lib/apache2/modules"

    let directory: TemporaryDirectory
    let port: Int
    private let process = Process()

    /// The page it protects.
    var protectedURL: String { "http://127.0.0.1:\(port)/protected/index.html" }
    /// mod_auth_openidc's redirect URI, inside the protected path as it requires.
    static func redirectURI(port: Int) -> String { "http://127.0.0.1:\(port)/protected/redirect_uri" }

    /// Writes a configuration of its own into a new temporary directory (listening on `port` of
    /// 127.0.0.1, its pid, log and runtime files there) and starts httpd in the foreground as the
    /// current user; run as root (CI), httpd serves as `nobody`, as it insists.
    init(port: Int, issuer: String, clientID: String, clientSecret: String, python: URL) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.httpd), "\(Self.httpd) is missing: run scripts/bootstrap test")
        try #require(
            FileManager.default.fileExists(atPath: Self.modules + "/mod_auth_openidc.so"),
            "mod_auth_openidc is missing: run scripts/bootstrap test (libapache2-mod-auth-openidc)")
        self.port = port
        directory = try TemporaryDirectory("apache")
        let root = directory.path
        try FileManager.default.createDirectory(atPath: root + "/htdocs/protected", withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        let page = """
            <!DOCTYPE html><html lang="en"><title>Protected</title><h1>Protected by Apache</h1>
            <p>sub: <span id="sub"><!--#echo var="OIDC_CLAIM_sub" --></span></p>
            <p>email: <span id="email"><!--#echo var="OIDC_CLAIM_email" --></span></p>
            <p>issuer: <span id="iss"><!--#echo var="OIDC_CLAIM_iss" --></span></p>
            <p>REMOTE_USER: <span id="remote_user"><!--#echo var="REMOTE_USER" --></span></p>

            """
        try page.write(toFile: root + "/htdocs/protected/index.html", atomically: true, encoding: .utf8)
        let passphrase = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let asRoot = getuid() == 0 ? "User nobody\nGroup nogroup\n" : ""
        let configuration = """
            ServerRoot \(root)
            DefaultRuntimeDir \(root)
            PidFile \(root)/httpd.pid
            Listen 127.0.0.1:\(port)
            ServerName 127.0.0.1:\(port)
            ErrorLog \(root)/error.log
            LogLevel warn
            \(asRoot)LoadModule mpm_event_module \(Self.modules)/mod_mpm_event.so
            LoadModule authn_core_module \(Self.modules)/mod_authn_core.so
            LoadModule authz_core_module \(Self.modules)/mod_authz_core.so
            LoadModule authz_user_module \(Self.modules)/mod_authz_user.so
            LoadModule include_module \(Self.modules)/mod_include.so
            LoadModule auth_openidc_module \(Self.modules)/mod_auth_openidc.so
            DocumentRoot \(root)/htdocs

            OIDCProviderMetadataURL \(issuer)/.well-known/openid-configuration
            OIDCClientID \(clientID)
            OIDCClientSecret \(clientSecret)
            OIDCRedirectURI \(Self.redirectURI(port: port))
            OIDCCryptoPassphrase \(passphrase)
            OIDCScope "openid email profile"
            OIDCPKCEMethod S256
            OIDCRemoteUserClaim sub
            OIDCPassClaimsAs environment

            <Directory \(root)/htdocs/protected>
                AuthType openid-connect
                Require valid-user
                Options +Includes
                SetOutputFilter INCLUDES
            </Directory>

            """
        // The secret and passphrase are in this file alone, readable by its owner only.
        _ = FileManager.default.createFile(atPath: root + "/httpd.conf", contents: Data(configuration.utf8), attributes: [.posixPermissions: 0o600])
        // httpd in the foreground, through Python, which clears the signal mask first: a child
        // inherits the blocked signals of whichever test thread starts it, and an httpd that
        // missed SIGTERM once left its workers running after the test (stop() checks the log).
        process.executableURL = python
        process.arguments = [
            "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); os.execv(sys.argv[1], sys.argv[1:])",
            Self.httpd, "-f", root + "/httpd.conf", "-DFOREGROUND",
        ]
        _ = FileManager.default.createFile(atPath: root + "/httpd.out", contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/httpd.out"))
        process.standardOutput = output
        process.standardError = output
        try Subprocess.launch(process)
        let deadline = Date().addingTimeInterval(15)
        while !errorLog.contains("resuming normal operations") {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw ServerProcessError(description: "httpd did not start: \(startupOutput)")
            }
            usleep(50_000)
        }
    }

    /// httpd's error log.
    var errorLog: String { (try? String(contentsOfFile: directory.file("error.log"), encoding: .utf8)) ?? "" }

    private var startupOutput: String {
        ((try? String(contentsOfFile: directory.file("httpd.out"), encoding: .utf8)) ?? "") + errorLog
    }

    /// Stops httpd (SIGTERM, then SIGKILL after five seconds) and removes its directory.
    ///
    /// - Returns: Whether httpd shut down on SIGTERM, as its log says.
    @discardableResult
    func stop() -> Bool {
        for signal in [SIGTERM, SIGKILL] where process.isRunning {
            kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning, Date() < deadline { usleep(20_000) }
        }
        let graceful = errorLog.contains("caught SIGTERM, shutting down")
        directory.remove()
        return graceful
    }
}

@Suite("Apache mod_auth_openidc as a relying party", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct ApacheRelyingPartyTests {
    @Test("S20, S21: mod_auth_openidc signs a Chromium user in through discovery, the hosted pages and a confidential code exchange with PKCE")
    func apacheProtectsAPageS21() async throws {
        try await TestServer.with { server in
            let start = Date()
            let port = try DevLANTests.freePort()
            let (client, secret) = try await ClientService(database: server.database, clock: { server.clock.now }).register(
                ClientRegistration(name: "Apache", redirectURIs: [ApacheRelyingParty.redirectURI(port: port)], confidential: true))
            let signUp = try await PasswordAccountTests.signUp(server, "ada@example.com", BrowserFlowTests.password)
            #expect(signUp.status == 201)
            let userID = try signUp.tokens.user.id
            let apache = try ApacheRelyingParty(port: port, issuer: server.baseURL, clientID: client.id, clientSecret: try #require(secret), python: try HeadlessChromium.requireInstalled())
            defer { apache.stop() }

            let seen = try await HeadlessChromium.run(
                "apache",
                ["protected_url": .string(apache.protectedURL), "user": ["username": "ada@example.com", "password": .string(BrowserFlowTests.password)]],
                on: server)

            // Apache sent the browser to the sign-in page with PKCE, state and nonce of its own making.
            #expect(seen["first_page"] == HeadlessChromium.page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["authorize_pkce"] == "S256")
            let parameters = Set(seen["authorize_parameters"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            #expect(parameters.isSuperset(of: ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge"]))
            #expect(seen["after_password"] == HeadlessChromium.page("latchkey", "/oauth/authorize", "Allow Apache access?"))
            // Back at Apache, which shows the user's claims; a second visit stays there.
            #expect(seen["final_url"] == .string(apache.protectedURL))
            #expect(seen["final_h1"] == "Protected by Apache")
            #expect(seen["claims"] == [
                "sub": .string(userID), "email": "ada@example.com", "iss": .string(server.baseURL), "remote_user": .string(userID),
            ])
            #expect(seen["again_url"] == .string(apache.protectedURL))

            // The code was exchanged once, by the client, for a grant of its own.
            let codes = try await server.database.read {
                try $0.query("SELECT client_id, used_at FROM oauth_codes WHERE user_id = ?", [.text(userID)])
            }
            #expect(codes.count == 1 && codes.first?.optionalString("client_id") == client.id && codes.first?.optionalDate("used_at") != nil)
            let grants = try await server.database.read {
                try $0.query("SELECT scope FROM sessions WHERE user_id = ? AND client_id = ?", [.text(userID), .text(client.id)])
            }
            #expect(grants.count == 1)
            #expect(Set(grants.first?.optionalString("scope")?.split(separator: " ").map(String.init) ?? []) == ["openid", "email", "profile"])
            let events = try await BrowserFlowTests.audit(server, userID)
            for event in ["consent.granted", "oauth.code_issued", "oauth.code_exchanged"] {
                #expect(events.filter { $0 == event }.count == 1, "\(event) in \(events)")
            }
            #expect(!apache.errorLog.contains(":error]"), "mod_auth_openidc logged no error: \(apache.errorLog.suffix(2000))")
            BrowserFlowTests.expectScreenshots(["apache-protected-page"], since: start)
            // Nothing outlives the test: httpd stops on SIGTERM and its port is free again.
            #expect(apache.stop())
            let socket = RawHTTP.connect(port: port, timeout: 1)
            if let socket { close(socket) }
            #expect(socket == nil, "nothing listens on httpd's port any more")
        }
    }
}
