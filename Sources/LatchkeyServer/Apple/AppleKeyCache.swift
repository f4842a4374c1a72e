import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import Synchronization

/// Apple's signing keys (`keys_url`), cached and looked up by `kid`.
///
/// - The set is fetched on first use and refreshed in the background every
///   ``refreshInterval`` (``refreshIfStale()``), so a new Apple key is usually known before the
///   first token signed with it arrives.
/// - A token whose `kid` is unknown causes one refetch, at most once per
///   ``missRefetchInterval`` (docs/security.md S6): a stream of made-up `kid`s cannot turn us into
///   a request amplifier against Apple.
/// - Concurrent fetches share one request; verification runs outside the lock, on the caller's
///   thread, so sign-ins verify in parallel.
/// - A key in the set that we cannot use (too weak, another curve, malformed) is skipped, logged
///   and counted in `latchkey_jwks_keys_skipped_total` at every fetch, and the rest serve
///   (docs/security.md S30). A token naming a skipped key fails with the reason and causes no refetch:
///   the key is known, just unusable, until the hourly refresh sees a new set.
final class AppleKeyCache: Sendable {
    /// Background refresh period.
    static let refreshInterval: TimeInterval = 3600
    /// The least time between two fetches caused by an unknown `kid` (S6).
    static let missRefetchInterval: TimeInterval = 60

    private struct State {
        var keys: JWSKeySet?
        var fetchedAt: Date?
        var inFlight: Task<JWSKeySet, any Error>?
    }

    private let settings: AppleSettings
    private let client: any HTTPClient
    private let clock: @Sendable () -> Date
    private let timeout: Duration
    private let metrics: Metrics
    private let state = Mutex(State())

    init(settings: AppleSettings, client: any HTTPClient, timeout: Duration, metrics: Metrics, clock: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.client = client
        self.timeout = timeout
        self.metrics = metrics
        self.clock = clock
    }

    /// Verifies a JWS-signed token against Apple's keys, refetching once on an unknown `kid`.
    ///
    /// - Throws: ``JOSEError`` for a token that fails; ``AppleError/unavailable(_:)`` when the key
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
    /// - Throws: What the fetch threw (Apple unreachable, a set that does not parse), for the
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
                let keys = try await Self.download(from: settings.current.keys, client: client, timeout: timeout)
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
            metrics.increment(.jwksKeysSkipped, ["source": "apple", "reason": key.reason.description])
            ServerLog.write(
                .warning, "jwks_key_skipped", time: now,
                ["source": "apple", "kid": key.keyID.map { .string(String($0.prefix(64))) } ?? .null,
                 "reason": .string(key.reason.description), "detail": .string(key.detail)])
        }
    }

    private static func download(from url: URL, client: any HTTPClient, timeout: Duration) async throws -> JWSKeySet {
        let response: OutboundResponse
        do {
            response = try await client.send(OutboundRequest(url: url, headers: ["Accept": "application/json"], timeout: timeout))
        } catch {
            throw AppleError.unavailable("Apple's keys could not be fetched (\(error))")
        }
        guard response.status == 200 else { throw AppleError.unavailable("Apple's keys answered \(response.status)") }
        do {
            return try JWSKeySet(jwks: try JWKSet(parsing: response.body), defaultAlgorithm: .rs256)
        } catch {
            throw AppleError.unavailable("Apple's key set is not usable (\(error.message))")
        }
    }
}

/// A failure talking to Apple.
enum AppleError: Error, Sendable {
    /// Apple answered 400 with this OAuth error code (`invalid_grant`, `invalid_client`, …).
    case rejected(String)
    /// No usable answer: a timeout, a transport error, a 5xx or a body we cannot read.
    case unavailable(String)

    /// The domain's refusal: a rejected code is the app's problem (`invalid_grant`); anything
    /// else is ours or Apple's, and retrying later may help, so it always says when.
    var authError: AuthError {
        switch self {
        case .rejected("invalid_grant"):
            .invalidGrant(.unknown, "Apple refused the authorization code: it is unknown, used, expired or for another client")
        case .rejected(let code):
            AuthError(.appleUnavailable, "Apple refused the request (\(code)); check the apple settings", retryAfter: 30)
        case .unavailable(let reason):
            AuthError(.appleUnavailable, reason, retryAfter: 5)
        }
    }
}
