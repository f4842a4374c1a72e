import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import Synchronization

/// A published JWK Set, cached and looked up by `kid`: Apple's signing keys (`keys_url`), and
/// each upstream OpenID provider's (its discovery document's `jwks_uri`).
///
/// - The set is fetched on first use. Apple's is refreshed in the background every
///   ``refreshInterval`` (``refreshIfStale()``, the housekeeping), so a new Apple key is usually
///   known before the first token signed with it arrives; an upstream's is refetched on a miss.
/// - A token whose `kid` is unknown causes one refetch, at most once per
///   ``missRefetchInterval`` (docs/security.md S6): a stream of made-up `kid`s cannot turn us into
///   a request amplifier against Apple or an upstream.
/// - Concurrent fetches share one request; verification runs outside the lock, on the caller's
///   thread, so sign-ins verify in parallel.
/// - A key in the set that we cannot use (too weak, another curve, malformed) is skipped, logged
///   and counted in `latchkey_jwks_keys_skipped_total` at every fetch, and the rest serve
///   (docs/security.md S30). A token naming a skipped key fails with the reason and causes no refetch:
///   the key is known, just unusable, until the hourly refresh sees a new set.
final class RemoteKeySet: Sendable {
    /// Background refresh period.
    static let refreshInterval: TimeInterval = 3600
    /// The least time between two fetches caused by an unknown `kid` (S6).
    static let missRefetchInterval: TimeInterval = 60

    private struct State {
        var keys: JWSKeySet?
        var fetchedAt: Date?
        var inFlight: Task<JWSKeySet, any Error>?
    }

    /// What fetches the set: `apple`, or `provider:<id>`; the `source` of logs and metrics.
    let source: String
    /// Where the set is, asked at each fetch (the sandbox Apple's URL is known only once the
    /// server has bound; an upstream's comes from its discovery document).
    private let url: @Sendable () async throws -> URL
    private let defaultAlgorithm: JWSAlgorithm?
    private let client: any HTTPClient
    private let clock: @Sendable () -> Date
    private let timeout: Duration
    private let metrics: Metrics
    private let state = Mutex(State())

    /// - Parameters:
    ///   - defaultAlgorithm: The algorithm of keys that name none (Apple's are RS256).
    init(
        source: String, url: @escaping @Sendable () async throws -> URL, defaultAlgorithm: JWSAlgorithm? = nil, client: any HTTPClient,
        timeout: Duration, metrics: Metrics, clock: @escaping @Sendable () -> Date
    ) {
        self.source = source
        self.url = url
        self.defaultAlgorithm = defaultAlgorithm
        self.client = client
        self.timeout = timeout
        self.metrics = metrics
        self.clock = clock
    }

    /// Verifies a JWS-signed token against the set, refetching once on an unknown `kid`.
    ///
    /// - Throws: ``JOSEError`` for a token that fails; ``RemoteKeySetUnavailable`` when the key
    ///   set cannot be fetched.
    func verify(_ token: String, policy: JWTValidationPolicy) async throws -> VerifiedJWT {
        let now = clock()
        let current: JWSKeySet
        if let cached = state.withLock({ $0.keys }) {
            current = cached
        } else {
            current = try await fetch()
        }
        let missed: JOSEError
        do {
            return try JWTVerifier(keys: current, policy: policy).verify(token, now: now)
        } catch {
            missed = error
        }
        let fetchedAt = state.withLock { $0.fetchedAt }
        guard missed.code == .unknownKey, let fetchedAt, now.timeIntervalSince(fetchedAt) >= Self.missRefetchInterval else { throw missed }
        return try JWTVerifier(keys: try await fetch(), policy: policy).verify(token, now: now)
    }

    /// Refetches the set when it is older than ``refreshInterval``; a failure keeps the old set.
    ///
    /// - Throws: What the fetch threw (the host unreachable, a set that does not parse), for the
    ///   caller to log and count.
    func refreshIfStale() async throws {
        if let fetchedAt = state.withLock({ $0.fetchedAt }), clock().timeIntervalSince(fetchedAt) < Self.refreshInterval { return }
        _ = try await fetch()
    }

    /// Fetches the set, or joins the fetch already under way.
    private func fetch() async throws -> JWSKeySet {
        let task = state.withLock { state in
            if let inFlight = state.inFlight { return inFlight }
            let task = Task { [self] in
                defer { self.state.withLock { $0.inFlight = nil } }
                let keys = try await self.download()
                let now = clock()
                self.report(keys.skipped, now: now)
                self.state.withLock { state in
                    state.keys = keys
                    state.fetchedAt = now
                }
                return keys
            }
            state.inFlight = task
            return task
        }
        return try await task.value
    }

    /// Logs and counts each key of the fetched set that was skipped as unusable (S30). The kid
    /// goes to the log, cut short, and never into a metric label: it is Apple's document data.
    private func report(_ skipped: [SkippedKey], now: Date) {
        for key in skipped {
            metrics.increment(.jwksKeysSkipped, ["source": source, "reason": key.reason.description])
            ServerLog.write(
                .warning, "jwks_key_skipped", time: now,
                ["source": .string(source), "kid": key.keyID.map { .string(String($0.prefix(64))) } ?? .null,
                 "reason": .string(key.reason.description), "detail": .string(key.detail)])
        }
    }

    private func download() async throws -> JWSKeySet {
        let response: OutboundResponse
        do {
            response = try await client.send(OutboundRequest(url: try await url(), headers: ["Accept": "application/json"], timeout: timeout))
        } catch let error as RemoteKeySetUnavailable {
            throw error
        } catch {
            throw RemoteKeySetUnavailable(message: "the \(source) keys could not be fetched (\(error))")
        }
        guard response.status == 200 else { throw RemoteKeySetUnavailable(message: "the \(source) keys answered \(response.status)") }
        do {
            return try JWSKeySet(jwks: try JWKSet(parsing: response.body), defaultAlgorithm: defaultAlgorithm)
        } catch {
            throw RemoteKeySetUnavailable(message: "the \(source) key set is not usable (\(error.message))")
        }
    }
}

/// A key set that cannot be had just now: its host did not answer, answered an error, or sent
/// a set that does not parse. Retrying later may help.
struct RemoteKeySetUnavailable: Error, Sendable {
    /// A sentence for the log: names the source and the status, never a body.
    var message: String
}
