import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeySandbox
import LatchkeyServer

/// The sandbox Apple of development mode, mounted by the executable under `/sandbox/apple`
/// beside the server's routes: the server does not link it, and points its Apple URLs there in
/// development mode without a team (``LatchkeyApplication/developmentApple``).
struct AppleSandboxMount: RouteMount {
    let sandbox: AppleSandbox

    func register(on router: Router) { sandbox.register(on: router) }

    /// Notifications go to this server's own endpoint.
    func serverStarted(publicURL: String) {
        sandbox.setNotificationURL(URL(string: publicURL + "/v1/apple/notifications")!)
    }

    /// Mounts a sandbox that trusts `application`'s team key when it runs in development mode;
    /// does nothing outside it.
    ///
    /// - Returns: The sandbox, or `nil` outside development mode.
    @discardableResult
    static func mount(on application: LatchkeyApplication) throws -> AppleSandbox? {
        guard let apple = application.developmentApple else { return nil }
        let sandbox = try AppleSandbox(
            issuer: apple.issuer,
            developer: .init(teamID: apple.teamID, keyID: apple.keyID, publicKey: apple.publicKey, clientIDs: apple.clientIDs),
            client: EventHTTPClient())
        application.mount(AppleSandboxMount(sandbox: sandbox))
        return sandbox
    }
}

/// The sandbox OpenID provider of development mode, mounted by the executable under
/// `/sandbox/oidc`: the upstream behind "Continue with Sandbox". Its issuer is
/// `{public_url}/sandbox/oidc`, set once the server listens.
struct OIDCSandboxMount: RouteMount {
    let sandbox: OIDCSandbox

    func register(on router: Router) { sandbox.register(on: router) }

    /// The issuer follows the URL the server is reached at.
    func serverStarted(publicURL: String) {
        sandbox.setIssuer(publicURL + "/sandbox/oidc")
    }

    /// Mounts a sandbox provider that knows one client, `clientID` with `clientSecret`: where
    /// they come from is the server configuration's business.
    ///
    /// - Returns: The sandbox.
    @discardableResult
    static func mount(on application: LatchkeyApplication, clientID: String, clientSecret: String) -> OIDCSandbox {
        let sandbox = OIDCSandbox(clientID: clientID, clientSecret: clientSecret)
        application.mount(OIDCSandboxMount(sandbox: sandbox))
        return sandbox
    }
}
