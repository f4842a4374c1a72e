import LatchkeyHTTP
import Synchronization

/// `GET /.well-known/openid-configuration` and `GET /.well-known/oauth-authorization-server`:
/// the provider's metadata (``ProviderMetadata``), one document at both paths.
///
/// The issuer is known only once the server has bound its port, so the answer is built at the
/// first request after that and then kept: the routes run on the event loop and are
/// benchmarked, so every request but the first returns the stored bytes after one lock.
struct DiscoveryRoutes {
    /// How long caches may keep the documents (`Cache-Control: max-age`).
    static let maxAge = 3600

    let accessTokens: AccessTokens
    /// The endpoints the application mounts; only they are listed.
    let mounted: ProviderMetadata.Endpoints

    func register(on router: Router) {
        let responder = DiscoveryResponder(accessTokens: accessTokens, mounted: mounted)
        router.get("/.well-known/openid-configuration", synchronous: { _ in responder.response })
        router.get("/.well-known/oauth-authorization-server", synchronous: { _ in responder.response })
    }
}

/// Builds the discovery answer once, when the issuer is known, and keeps it.
final class DiscoveryResponder: Sendable {
    private let accessTokens: AccessTokens
    private let mounted: ProviderMetadata.Endpoints
    private let built = Mutex<HTTPResponse?>(nil)

    init(accessTokens: AccessTokens, mounted: ProviderMetadata.Endpoints) {
        self.accessTokens = accessTokens
        self.mounted = mounted
    }

    /// The stored answer; before the issuer is known (the instant between binding the port and
    /// learning the public URL) a 503 that is not stored.
    var response: HTTPResponse {
        built.withLock { built in
            if let built { return built }
            let issuer = accessTokens.issuer
            guard !issuer.isEmpty else {
                var unavailable = HTTPResponse.empty(status: 503)
                unavailable.headers.set("Retry-After", "1")
                return unavailable
            }
            var response = HTTPResponse.json(ProviderMetadata(issuer: issuer, mounted: mounted).json)
            response.headers.set("Cache-Control", "public, max-age=\(DiscoveryRoutes.maxAge)")
            built = response
            return response
        }
    }
}
