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
