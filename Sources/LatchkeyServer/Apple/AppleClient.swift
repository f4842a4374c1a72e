import FoundationEssentials
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON
import Synchronization

/// Apple's token and revoke endpoints (docs/reference.md "Code exchange", "Revocation"), authenticated
/// with a client secret signed by the team's `.p8` key.
final class AppleClient: Sendable {
    /// What Apple's token endpoint returns that we keep.
    struct Tokens: Sendable {
        /// Present on code exchange only.
        var refreshToken: String?
        var idToken: String?
    }

    /// How long a client secret lives; it is renewed at half that age. Apple allows six months,
    /// but a short life bounds the damage of a leaked secret.
    static let clientSecretLifetime: TimeInterval = 86_400

    private let settings: AppleSettings
    private let client: any HTTPClient
    private let clock: @Sendable () -> Date
    private let timeout: Duration
    private let secrets = Mutex<[String: (secret: String, issuedAt: Date)]>([:])

    init(settings: AppleSettings, client: any HTTPClient, timeout: Duration, clock: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.client = client
        self.timeout = timeout
        self.clock = clock
    }

    /// Whether a team key is configured, so codes can be exchanged and tokens revoked.
    var isConfigured: Bool { settings.teamKey != nil }

    /// Exchanges an authorization code (single use, five minutes) for Apple's tokens.
    ///
    /// - Parameter redirectURI: The `redirect_uri` of the web flow that got the code; `nil` for
    ///   a code from an app.
    func exchange(code: String, clientID: String, redirectURI: String? = nil) async throws(AppleError) -> Tokens {
        var fields = ["grant_type": "authorization_code", "code": code, "client_id": clientID, "client_secret": try clientSecret(for: clientID)]
        if let redirectURI { fields["redirect_uri"] = redirectURI }
        let body = try await post(settings.current.token, fields)
        return Tokens(refreshToken: body["refresh_token"]?.stringValue, idToken: body["id_token"]?.stringValue)
    }

    /// Checks that Apple still honours a refresh token; `false` means the user's authorization
    /// is gone (Apple answered `invalid_grant`).
    func validate(refreshToken: String, clientID: String) async throws(AppleError) -> Bool {
        do {
            _ = try await post(
                settings.current.token,
                ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID, "client_secret": try clientSecret(for: clientID)])
            return true
        } catch .rejected("invalid_grant") {
            return false
        }
    }

    /// Revokes a refresh token at Apple; Apple answers 200 whether or not it was still valid.
    func revoke(refreshToken: String, clientID: String) async throws(AppleError) {
        _ = try await post(
            settings.current.revoke,
            ["token": refreshToken, "token_type_hint": "refresh_token", "client_id": clientID, "client_secret": try clientSecret(for: clientID)])
    }

    /// The client secret for `clientID`: an ES256 JWT, cached and renewed at half its life.
    func clientSecret(for clientID: String) throws(AppleError) -> String {
        guard let key = settings.teamKey else { throw .unavailable("no Apple team key is configured (apple.team_id, apple.key_id, apple.private_key_file)") }
        let now = clock()
        if let cached = secrets.withLock({ $0[clientID] }), now.timeIntervalSince(cached.issuedAt) < Self.clientSecretLifetime / 2,
            cached.issuedAt <= now
        {
            return cached.secret
        }
        var claims = JWTClaims()
        claims.issuer = key.teamID
        claims.subject = clientID
        claims.audience = [settings.issuer]
        claims.issuedAt = now
        claims.expiresAt = now.addingTimeInterval(Self.clientSecretLifetime)
        guard let secret = try? JWSSigner.es256(key.privateKey, keyID: key.keyID).sign(claims, type: nil) else {
            throw .unavailable("the client secret could not be signed")
        }
        secrets.withLock { $0[clientID] = (secret, now) }
        return secret
    }

    private func post(_ url: URL, _ fields: [String: String]) async throws(AppleError) -> JSONValue {
        let response: OutboundResponse
        do {
            response = try await client.send(.form(url, fields, timeout: timeout))
        } catch {
            throw .unavailable("Apple did not answer (\(error))")
        }
        let body = response.body.isEmpty ? JSONValue.object([:]) : try? JSONValue(parsing: response.body)
        switch response.status {
        case 200:
            guard let body else { throw .unavailable("Apple answered 200 with a body that is not JSON") }
            return body
        case 400..<500:
            throw .rejected(body?["error"]?.stringValue ?? "http_\(response.status)")
        default:
            throw .unavailable("Apple answered \(response.status)")
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
