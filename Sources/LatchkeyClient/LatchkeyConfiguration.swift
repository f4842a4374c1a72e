public import Foundation

/// How a ``LatchkeyClient`` reaches its server and keeps its session.
public struct LatchkeyConfiguration: Sendable {
    /// The server's public URL, e.g. `https://auth.example.com`.
    public var baseURL: URL
    /// The OAuth client for web sign-in, when the app uses it.
    public var clientID: String?
    /// Where the session lives.
    public var store: any CredentialStore
    /// How long before expiry ``LatchkeyClient/authorize(_:)`` and the launch check refresh the
    /// access token (default 60 s).
    public var refreshLeeway: Duration
    /// Who else may refresh the same stored session (default ``RefreshCoordination/inProcess``).
    public var coordination: RefreshCoordination
    /// The wall clock the client reads expiry against; injected so tests can move time.
    public var now: @Sendable () -> Date
    /// The DPoP key (RFC 9449) that signs a proof for every request, so the server binds the
    /// session's tokens to this device (``DPoPKeySource/secureEnclave`` on a device); `nil` for
    /// plain bearer tokens.
    public var dpop: DPoPKeySource?
    /// App Attest for the client's own calls: an app check token goes with every sign-up,
    /// sign-in and token request (for a server with `app_attest.enforce`); `nil` for none.
    public var appAttest: AppAttestSetup?

    /// A configuration for the server at `baseURL` with the session in `store`, and DPoP-bound
    /// tokens when `dpop` names a key, and app check tokens on sign-in and token calls with `appAttest`.
    public init(
        baseURL: URL, store: any CredentialStore, clientID: String? = nil, dpop: DPoPKeySource? = nil, appAttest: AppAttestSetup? = nil
    ) {
        self.dpop = dpop
        self.appAttest = appAttest
        self.baseURL = baseURL
        self.store = store
        self.clientID = clientID
        self.refreshLeeway = .seconds(60)
        self.coordination = .inProcess
        self.now = { Date() }
    }
}
