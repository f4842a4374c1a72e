import FoundationEssentials
import LatchkeyJOSE
import Synchronization

/// The signature algorithms an upstream's ID tokens may use (S37): asymmetric ones only. `none`
/// and the HMACs are never accepted, whatever a provider's discovery document offers: an HMAC
/// key would be the client secret, which this server shares with the upstream.
enum UpstreamAlgorithms {
    static let allowed: [JWSAlgorithm] = [.rs256, .es256, .ps256]
}

/// Where an upstream's endpoints are and what it supports: from its discovery document (`oidc`)
/// or from the configuration (`github`).
struct UpstreamEndpoints: Sendable {
    /// The issuer ID tokens and RFC 9207 `iss` parameters must name; `nil` for GitHub.
    var issuer: String?
    var authorize: URL
    var token: URL
    var jwks: URL?
    var userinfo: URL?
    /// RFC 9207: the upstream puts `iss` on its authorization responses, and so it must be there.
    var issParameter: Bool
    /// Whether the client secret goes in the form (`client_secret_post`) rather than in
    /// `Authorization: Basic`, the default of RFC 6749 §2.3.1.
    var postsClientSecret: Bool
}

/// One configured upstream provider at run time: its settings, its endpoints and, for an
/// OpenID provider, the key set its discovery document names.
final class UpstreamProvider: Sendable {
    let settings: Configuration.Provider
    var id: String { settings.id }
    var kind: Configuration.Provider.Kind { settings.kind }
    /// The ID tokens' allowed algorithms: the configured ones that ``UpstreamAlgorithms`` allows.
    let algorithms: Set<JWSAlgorithm>
    let client: UpstreamClient
    private let discovery: UpstreamDiscovery
    /// The ID tokens' keys (`oidc`); `nil` for GitHub, which signs none. A key that names no
    /// algorithm is RS256, OpenID Connect's default.
    let keys: RemoteKeySet?

    init(_ settings: Configuration.Provider, client: UpstreamClient, metrics: Metrics, clock: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.client = client
        algorithms = Set(settings.algorithms.map(JWSAlgorithm.init(rawValue:))).intersection(UpstreamAlgorithms.allowed)
        let discovery = UpstreamDiscovery(settings, client: client, clock: clock)
        self.discovery = discovery
        keys =
            settings.kind == .oidc
            ? RemoteKeySet(
                source: "provider:" + settings.id,
                url: {
                    guard let url = try await discovery.endpoints().jwks else { throw RemoteKeySetUnavailable(message: "the discovery document has no jwks_uri") }
                    return url
                }, defaultAlgorithm: .rs256, client: client.http, timeout: client.timeout, metrics: metrics, clock: clock)
            : nil
    }

    /// The issuer this provider's tokens must name (`oidc`).
    var issuer: String { discovery.issuer }

    /// Points the sandbox provider at the `/sandbox/oidc` of this server's public URL.
    func useSandbox(at publicURL: String) { discovery.useSandbox(at: publicURL) }

    /// The endpoints (see ``UpstreamDiscovery/endpoints()``).
    func endpoints() async throws(ProviderSignInFailure) -> UpstreamEndpoints { try await discovery.endpoints() }
}

/// An upstream's endpoints: GitHub's from the settings; an OpenID provider's from its discovery
/// document, read on first use and again once it is an hour old (a failed refresh keeps the
/// document it had).
final class UpstreamDiscovery: Sendable {
    /// How long a discovery document is trusted before it is read again.
    static let lifetime: TimeInterval = 3600

    private struct Cached {
        var endpoints: UpstreamEndpoints
        var fetchedAt: Date
    }

    private let settings: Configuration.Provider
    private let client: UpstreamClient
    private let clock: @Sendable () -> Date
    private let cached = Mutex<Cached?>(nil)
    /// The sandbox's issuer, set when the server has bound its port.
    private let sandboxIssuer = Mutex<String?>(nil)

    /// GitHub's endpoints, which come from the settings (validated by ConfigurationLoader).
    private let configured: UpstreamEndpoints?

    init(_ settings: Configuration.Provider, client: UpstreamClient, clock: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.client = client
        self.clock = clock
        configured =
            settings.kind == .github
            ? UpstreamEndpoints(
                issuer: nil, authorize: URL(string: settings.authorizeURL)!, token: URL(string: settings.tokenURL)!, jwks: nil, userinfo: nil,
                issParameter: false, postsClientSecret: true)
            : nil
    }

    var issuer: String { sandboxIssuer.withLock { $0 } ?? settings.issuer }

    func useSandbox(at publicURL: String) {
        sandboxIssuer.withLock { $0 = publicURL + "/sandbox/oidc" }
        cached.withLock { $0 = nil }
    }

    /// - Throws: ``ProviderSignInFailure`` `upstream_unavailable` when the document cannot be had.
    func endpoints() async throws(ProviderSignInFailure) -> UpstreamEndpoints {
        if let configured { return configured }
        let now = clock()
        let current = cached.withLock { $0 }
        if let current, now.timeIntervalSince(current.fetchedAt) < Self.lifetime { return current.endpoints }
        do {
            let endpoints = try await client.discover(issuer: issuer, allowHTTP: settings.isSandbox)
            cached.withLock { $0 = Cached(endpoints: endpoints, fetchedAt: now) }
            return endpoints
        } catch {
            if let current { return current.endpoints }
            throw error
        }
    }
}
