import LatchkeyHTTP
import LatchkeyJOSE
import Synchronization

/// `GET /.well-known/jwks.json`: the published keys, JSON, cacheable for
/// ``SigningKeyRing/jwksMaxAge`` seconds.
///
/// The route runs synchronously on the event loop and is benchmarked, so the response is built
/// once per key-set change and every other request returns the stored bytes after one atomic
/// read of the ring's ``SigningKeyRing/publishedRevision`` and one lock of its own.
final class JWKSResponder: Sendable {
    private let keys: SigningKeyRing
    private let built: Mutex<(revision: Int, response: HTTPResponse)>

    init(keys: SigningKeyRing) {
        self.keys = keys
        let (revision, published) = keys.publishedKeySet
        self.built = Mutex((revision, Self.response(published)))
    }

    /// The answer for the keys published now.
    var response: HTTPResponse {
        let current = keys.publishedRevision
        return built.withLock { built in
            if built.revision != current, let changed = keys.publishedKeySet(ifChangedSince: built.revision) {
                built = (changed.revision, Self.response(changed.keys))
            }
            return built.response
        }
    }

    private static func response(_ set: JWKSet) -> HTTPResponse {
        var response = HTTPResponse.json(set.json)
        response.headers.set("Cache-Control", "public, max-age=\(SigningKeyRing.jwksMaxAge)")
        return response
    }
}
