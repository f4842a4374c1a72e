import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient

/// The domain services of one application, each built once with exactly what it uses, and the
/// routes over them. Nothing else builds a service: the CLI's operator commands and the tests
/// reach them through ``LatchkeyApplication/services``.
package struct Services: Sendable {
    package let accessTokens: AccessTokens
    package let sessions: SessionService
    package let browserSessions: BrowserSessionService
    package let refreshTokens: RefreshTokens
    package let signIns: SignInPipeline
    package let accounts: AccountService
    let apple: AppleService
    package let passwords: PasswordService
    package let factors: FactorService
    /// Passkeys of signed-in accounts.
    package let passkeys: PasskeyService
    let grants: GrantService
    /// The OAuth provider's registered clients.
    package let clients: ClientService
    let tokens: TokenService
    /// The device authorization grant (RFC 8628).
    package let devices: DeviceAuthorizationService
    package let authorization: AuthorizationService
    let appleWeb: AppleWebSignIn
    /// Sign-in through upstream providers (`providers`).
    let federation: FederationService
    /// App Attest keys and the app check tokens they earn (`app_attest`).
    let appAttest: AppAttestService
    /// The email flows, when mail can be delivered: to `email.smtp_url`, or in development mode
    /// to ``mailbox``.
    package let email: EmailService?
    let mailOutbox: MailOutbox?
    /// Where development mode delivers mail when no SMTP server is configured.
    let mailbox: DevelopmentMailbox?
    let dependencies: Dependencies
    let keys: SigningKeyRing
    let masterKey: MasterKey
    /// DPoP proofs: binding at issue, enforcement on resource requests.
    let dpop: DPoPService
    /// The admin API's roles and reads; `latchkey admins`.
    package let admin: AdminService
    /// The admin console's sign-in (`/admin`).
    let console: ConsoleService

    init(
        configuration: Configuration, dependencies: Dependencies, keys: SigningKeyRing, masterKey: MasterKey, appleSettings: AppleSettings,
        httpClient: any HTTPClient, appleTimeout: Duration
    ) throws {
        let database = dependencies.database
        let clock = dependencies.clock
        self.dependencies = dependencies
        self.keys = keys
        self.masterKey = masterKey
        accessTokens = AccessTokens(database: database, keys: keys, configuration: configuration)
        dpop = DPoPService(dependencies: dependencies, masterKey: masterKey, configuration: configuration)
        browserSessions = BrowserSessionService(database: database, clock: clock, lifetime: TimeInterval(configuration.browserSessionTTL))
        sessions = SessionService(
            dependencies: dependencies, accessTokens: accessTokens, browserSessions: browserSessions, configuration: configuration)
        refreshTokens = RefreshTokens(
            dependencies: dependencies, sessions: sessions, accessTokens: accessTokens, dpop: dpop, masterKey: masterKey, configuration: configuration)
        signIns = SignInPipeline(dependencies: dependencies, sessions: sessions, browserSessions: browserSessions, accessTokens: accessTokens)
        let appleClient = AppleClient(settings: appleSettings, client: httpClient, timeout: appleTimeout, clock: clock)
        let outbox = AppleRevocationOutbox(client: appleClient, database: database, masterKey: masterKey, clock: clock)
        let deletion = AccountDeletion(dependencies: dependencies, sessions: sessions, masterKey: masterKey, outbox: outbox)
        accounts = AccountService(dependencies: dependencies, sessions: sessions, deletion: deletion, outbox: outbox)
        apple = AppleService(
            dependencies: dependencies, settings: appleSettings, client: appleClient, outbox: outbox, httpClient: httpClient,
            timeout: appleTimeout, signIns: signIns, sessions: sessions, deletion: deletion, masterKey: masterKey)
        passwords = try PasswordService(dependencies: dependencies, signIns: signIns, sessions: sessions, configuration: configuration)
        passkeys = PasskeyService(
            dependencies: dependencies, sessions: sessions, signIns: signIns, masterKey: masterKey, configuration: configuration,
            publicURL: { [accessTokens] in accessTokens.issuer })
        factors = FactorService(
            dependencies: dependencies, sessions: sessions, signIns: signIns, refreshTokens: refreshTokens, accessTokens: accessTokens,
            passkeys: passkeys, masterKey: masterKey, failuresPerAccount: configuration.rateLimits.loginPerAccount15m)
        grants = GrantService(dependencies: dependencies, sessions: sessions)
        admin = AdminService(dependencies: dependencies, sessions: sessions, accounts: accounts, grants: grants, factors: factors, passkeys: passkeys)
        clients = ClientService(database: database, clock: clock)
        tokens = TokenService(
            dependencies: dependencies, sessions: sessions, signIns: signIns, refreshTokens: refreshTokens, accessTokens: accessTokens, keys: keys)
        console = ConsoleService(
            dependencies: dependencies, tokens: tokens, accessTokens: accessTokens, sessions: sessions, clients: clients, admin: admin, masterKey: masterKey)
        devices = DeviceAuthorizationService(
            dependencies: dependencies, signIns: signIns, tokens: tokens, codeTTL: configuration.device.codeTTL,
            publicURL: { [accessTokens] in accessTokens.issuer })
        authorization = AuthorizationService(
            dependencies: dependencies, accessTokens: accessTokens, keys: keys, browserSessions: browserSessions, clients: clients,
            devices: devices)
        appleWeb = AppleWebSignIn(apple: apple, masterKey: masterKey, clock: clock)
        appAttest = AppAttestService(
            dependencies: dependencies, keys: keys, configuration: configuration, issuer: { [accessTokens] in accessTokens.issuer })
        let upstream = UpstreamClient(http: httpClient)
        federation = FederationService(
            dependencies: dependencies, signIns: signIns, masterKey: masterKey,
            providers: configuration.providers.map { UpstreamProvider($0, client: upstream, metrics: dependencies.metrics, clock: clock) })
        if configuration.email.isAvailable(dev: configuration.dev) {
            let transport: any MailTransport
            if configuration.email.smtpURL != nil {
                let helloName = URL(string: accessTokens.issuer)?.host ?? "localhost"
                transport = try SMTPMailTransport(configuration: configuration, helloName: helloName, metrics: dependencies.metrics, clock: clock)
                mailbox = nil
            } else {
                let mailbox = DevelopmentMailbox(clock: clock)
                transport = mailbox
                self.mailbox = mailbox
            }
            let mailOutbox = MailOutbox(dependencies: dependencies, masterKey: masterKey, transport: transport, sender: configuration.email.from)
            mailOutbox.showDepth()
            self.mailOutbox = mailOutbox
            email = try EmailService(
                dependencies: dependencies, signIns: signIns, sessions: sessions, passwords: passwords, outbox: mailOutbox,
                configuration: configuration, masterKey: masterKey, publicURL: { [accessTokens] in accessTokens.issuer })
        } else {
            mailbox = nil
            mailOutbox = nil
            email = nil
        }
    }

    /// Registers every route of the server on `router`.
    func registerRoutes(on router: Router, configuration: Configuration) {
        let clock = dependencies.clock
        let bearer = BearerAuthenticator(accessTokens: accessTokens, dpop: dpop, clock: clock)
        // The sign-in routes' group middleware: a DPoP proof binds what they issue.
        let binding = DPoPBinding(dpop: dpop, accessTokens: accessTokens)
        OperationsRoutes(configuration: configuration, database: dependencies.database, metrics: dependencies.metrics).register(on: router)
        StylesheetRoutes().register(on: router)
        SessionRoutes(sessions: sessions, refreshTokens: refreshTokens, keys: keys, bearer: bearer, binding: binding).register(on: router)
        // Every OAuth endpoint is listed: the provider's routes are mounted alongside.
        DiscoveryRoutes(accessTokens: accessTokens, mounted: .all).register(on: router)
        AccountRoutes(accounts: accounts, bearer: bearer).register(on: router)
        AppleRoutes(apple: apple, binding: binding).register(on: router)
        FactorRoutes(factors: factors, bearer: bearer, binding: binding).register(on: router)
        GrantRoutes(grants: grants, bearer: bearer).register(on: router)
        AdminRoutes(admin: admin, accounts: accounts, clients: clients, keys: keys, email: email, bearer: bearer, clock: clock).register(on: router)
        ConsoleRoutes(
            console: console, admin: admin, accounts: accounts, clients: clients, keys: keys, email: email, csrf: CSRFProtection(masterKey: masterKey),
            clock: clock
        ).register(on: router)
        if configuration.passkeys.enabled { PasskeyRoutes(passkeys: passkeys, bearer: bearer, binding: binding).register(on: router) }
        if configuration.password.enabled { PasswordRoutes(passwords: passwords, bearer: bearer, binding: binding).register(on: router) }
        if let email { EmailRoutes(email: email, bearer: bearer, binding: binding).register(on: router) }
        if let mailbox { SandboxMailRoutes(mailbox: mailbox).register(on: router) }
        OAuthTokenRoutes(
            tokens: tokens, devices: devices, clients: clients, accessTokens: accessTokens,
            userinfoBearer: BearerAuthenticator(accessTokens: accessTokens, dpop: dpop, clock: clock, audiences: [.api, .userinfo]),
            binding: binding
        ).register(on: router)
        AppAttestRoutes(appAttest: appAttest).register(on: router)
        if dpop.currentNonce() != nil { router.add(middleware: DPoPNonceMiddleware(dpop: dpop)) }
        AuthorizeRoutes(
            authorization: authorization, browserSessions: browserSessions, csrf: CSRFProtection(masterKey: masterKey),
            passwords: configuration.password.enabled ? passwords : nil, factors: factors, appleWeb: appleWeb, email: email,
            passkeys: configuration.passkeys.enabled ? passkeys : nil, federation: federation, devices: devices
        ).register(on: router)
    }
}
