import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// Sign in with Apple from the hosted sign-in page: the browser goes to Apple's authorize URL
/// with a `state` and a hashed `nonce`, and Apple posts `code`, `id_token`, `state` and, the
/// first time, `user` back to the callback (`response_mode=form_post`).
///
/// Apple's post is a cross-site POST, which carries no `SameSite=Lax` cookie, so neither the
/// browser session nor the pre-session CSRF cookie can bind it. Two things bind it instead:
///
/// - `state` is a ``BrowserBoundState`` carrying the authorization request, bound to a short
///   `SameSite=None` cookie (the route layer sets it; `None` so that Apple's post carries it,
///   `__Host-`, `Secure`, `HttpOnly`, ten minutes): an attacker cannot post their own Apple
///   sign-in into someone else's browser (login CSRF).
/// - the raw nonce derives from the state under the same key, never sent anywhere; Apple gets its
///   SHA-256. An identity token minted for another state carries another nonce and is refused,
///   and the token's use is remembered, so each state signs in once (``AppleService`` replays).
///
/// No table is needed: everything the callback must trust is authenticated by the MAC.
final class AppleWebSignIn: Sendable {
    let apple: AppleService
    private let states: BrowserBoundState
    private let clock: @Sendable () -> Date

    /// How long the browser may stay at Apple: the state and its cookie expire after it.
    static let lifetime: TimeInterval = 600
    /// The callback on this server that Apple posts to; register `public_url` + this path as the
    /// Services ID's return URL.
    static let callbackPath = "/oauth/apple/callback"
    /// The longest `user` JSON read; Apple's is a name and an address.
    static let maxUserBytes = 4096
    /// The longest name part kept from `user`.
    static let maxNameLength = 100

    init(apple: AppleService, masterKey: MasterKey, clock: @escaping @Sendable () -> Date) {
        self.apple = apple
        states = BrowserBoundState(name: "apple", keyLabel: "latchkey apple web state v1", lifetime: Self.lifetime, masterKey: masterKey)
        self.clock = clock
    }

    /// Whether web sign-in is configured (`apple.web_client_id`).
    var isConfigured: Bool { apple.settings.webClientID != nil }

    /// Where the browser goes, and the binding for its cookie.
    struct Start: Sendable {
        /// Apple's authorize URL, as configured.
        var authorizeURL: String
        /// The authorize URL's parameters, in order, for the redirect to append.
        var query: [(String, String)]
        /// The cookie's value: 256 random bits, base64url.
        var binding: String
    }

    /// Starts a web sign-in for an authorization request.
    ///
    /// - Parameters:
    ///   - request: The authorization request's parameters, form-encoded; the callback gets it back.
    ///   - callbackURL: This server's callback (issuer + ``callbackPath``), Apple's `redirect_uri`.
    /// - Throws: ``AuthError`` `apple_unavailable` when `apple.web_client_id` is not set.
    func start(request: String, callbackURL: String) throws(AuthError) -> Start {
        guard let clientID = apple.settings.webClientID else {
            throw AuthError(.appleUnavailable, "web sign-in is not configured (apple.web_client_id)", retryAfter: AppleService.unconfiguredRetryAfter)
        }
        let (state, binding) = states.make(request, now: clock())
        let nonce = HashFunction.sha256.hexDigest(Array(states.derived("nonce", from: state).utf8))
        let query = [
            ("response_type", "code id_token"), ("response_mode", "form_post"), ("client_id", clientID), ("redirect_uri", callbackURL),
            ("scope", "name email"), ("state", state), ("nonce", nonce),
        ]
        return Start(authorizeURL: apple.settings.current.authorize.absoluteString, query: query, binding: binding)
    }

    /// What a state that holds gives back.
    struct Resumed: Sendable, Hashable {
        /// The authorization request ``start(request:callbackURL:)`` was given.
        var request: String
        /// The raw nonce whose SHA-256 Apple was sent.
        var rawNonce: String
    }

    /// Checks the `state` Apple posted against the browser's binding cookie.
    ///
    /// - Throws: ``AuthError`` `invalid_identity_token` with check `state`: missing cookie,
    ///   malformed, made for another browser or request, or expired.
    func resume(state: String, binding: String?) throws(AuthError) -> Resumed {
        do {
            let request = try states.open(state, binding: binding, now: clock()).payload
            return Resumed(request: request, rawNonce: states.derived("nonce", from: state))
        } catch {
            let reason =
                switch error {
                case .malformed: "the state is not one this server made"
                case .unbound: "the browser did not bring the sign-in's cookie"
                case .mismatched: "the state was made for another browser or another request"
                case .expired: "the sign-in took longer than \(Int(Self.lifetime / 60)) minutes"
                }
            throw AppleIdentityToken.failure("state", reason)
        }
    }

    /// What Apple posted to the callback, besides `state`.
    struct Callback: Sendable, Hashable {
        var identityToken: String
        var authorizationCode: String
        /// The `user` JSON, sent on the first authorization only.
        var user: String?
    }

    /// Verifies and exchanges what Apple posted, as `/v1/auth/apple` does, and signs the user
    /// in to a browser session; the name from `user` is kept when the account has none.
    ///
    /// - Parameter replacing: The token of the browser session the request's cookie carried,
    ///   ended by the sign-in (``SignInTarget/browser(replacing:)``).
    /// - Throws: ``AuthError`` as ``AppleService/signIn(_:web:context:target:)``: `mfa_required`
    ///   with the pending second factor for a user who has one.
    func signIn(
        _ callback: Callback, resumed: Resumed, callbackURL: String, replacing: String?, context: RequestContext
    ) async throws -> SignedIn {
        guard let clientID = apple.settings.webClientID else {
            throw AuthError(.appleUnavailable, "web sign-in is not configured (apple.web_client_id)", retryAfter: AppleService.unconfiguredRetryAfter)
        }
        let name = Self.name(fromUser: callback.user)
        return try await apple.signIn(
            AppleService.SignInRequest(
                identityToken: callback.identityToken, authorizationCode: callback.authorizationCode, nonce: resumed.rawNonce,
                givenName: name.given, familyName: name.family),
            web: AppleService.WebFlow(clientID: clientID, redirectURI: callbackURL), context: context,
            target: .browser(replacing: replacing))
    }

    /// The audit entry of a callback refused before the sign-in (a bad state).
    func recordFailure(_ error: AuthError, context: RequestContext) async {
        await apple.recordFailure(error, web: true, context: context)
    }

    /// The name in Apple's `user` JSON (`{"name": {"firstName", "lastName"}, "email"}`); parts
    /// that are missing, not strings, blank or too long are left out.
    static func name(fromUser user: String?) -> (given: String?, family: String?) {
        guard let user, user.utf8.count <= maxUserBytes, let json = try? JSONValue(parsing: Array(user.utf8)), let name = json["name"] else {
            return (nil, nil)
        }
        func part(_ key: String) -> String? {
            guard let raw = name[key]?.stringValue else { return nil }
            let text = raw.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
            guard !text.isEmpty, text.count <= maxNameLength else { return nil }
            return String(text)
        }
        return (part("firstName"), part("lastName"))
    }
}
