/// Every error the SDK throws: one struct with an extensible code.
///
/// Compare codes, not messages: `catch let error as LatchkeyError where error.code == .network`.
/// A server error the SDK has no code for arrives as ``Code/server(code:)`` with the server's
/// `error` member intact, and ``serverCode`` and ``reason`` carry the body's members. Messages
/// never contain a token, password, key or code.
public struct LatchkeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a value that can grow without breaking a `switch` in an app.
    ///
    /// Two codes are equal when their names are (and, for ``server(code:)``, the server's codes);
    /// the `retryAfter` of ``rateLimited(retryAfter:)`` is detail, not identity.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code's name: `network`, `rate_limited`, `server`, ….
        public let name: String
        /// For ``server(code:)``: the server's `error` member; for ``webSignIn(error:)``: the
        /// callback's `error` parameter.
        public let serverCode: String?
        /// For ``rateLimited(retryAfter:)``: how long the server asked to wait, when it said.
        public let retryAfter: Duration?

        private init(name: String, serverCode: String? = nil, retryAfter: Duration? = nil) {
            self.name = name
            self.serverCode = serverCode
            self.retryAfter = retryAfter
        }

        /// The server could not be reached, or the connection failed before an answer came.
        public static let network = Code(name: "network")
        /// Wrong username or password (`invalid_credentials`).
        public static let invalidCredentials = Code(name: "invalid_credentials")
        /// Too many attempts; try again after `retryAfter` (`rate_limited`).
        public static func rateLimited(retryAfter: Duration?) -> Code { Code(name: "rate_limited", retryAfter: retryAfter) }
        /// Any other error answer of the server, its `error` member intact (`invalid_grant`,
        /// `conflict`, `unavailable`, or a code added after this SDK was built).
        public static func server(code: String) -> Code { Code(name: "server", serverCode: code) }
        /// The credential store cannot be read or written now: the Keychain is locked (before
        /// first unlock, or `errSecInteractionNotAllowed` during prewarming). The session is kept.
        public static let keychainLocked = Code(name: "keychain_locked")
        /// The credential store is set up wrongly (a missing entitlement or access group); not
        /// something a retry fixes.
        public static let keychainMisconfigured = Code(name: "keychain_misconfigured")
        /// The caller canceled (task cancellation, or the user dismissed a system sheet).
        public static let canceled = Code(name: "canceled")
        /// There is no session: sign in first.
        public static let notSignedIn = Code(name: "not_signed_in")
        /// The server ended the session for good during this call; an ``AuthEvent/signedOut(_:)``
        /// with the reason was sent.
        public static let sessionEnded = Code(name: "session_ended")
        /// `stepUp(with:)` got a key this SDK never registered (or registered for another account).
        public static let deviceKeyNotRegistered = Code(name: "device_key_not_registered")
        /// A web sign-in's callback URL is not the answer to its request: another redirect URI,
        /// a repeated parameter, a missing or foreign `iss`, a `state` that is not the request's,
        /// or no code. Nothing was sent; start a new sign-in.
        public static let invalidCallback = Code(name: "invalid_callback")
        /// The server answered a web sign-in with an OAuth error other than `access_denied`
        /// (which is ``canceled``): `error` is its code, e.g. `login_required` for `prompt=none`,
        /// `invalid_scope`, `invalid_request`, or one added later, intact.
        public static func webSignIn(error: String) -> Code { Code(name: "web_sign_in", serverCode: error) }
        /// The call needs something the configuration lacks or has wrong (web sign-in without
        /// ``LatchkeyConfiguration/clientID``, a redirect URI that is not an absolute URI, an
        /// `https` callback on an OS without it, a provider id that is not `[a-z0-9-]{1,32}`);
        /// not something a retry fixes. Nothing was sent.
        public static let invalidConfiguration = Code(name: "invalid_configuration")
        /// The authenticator already holds a passkey of this account (one of the registration's
        /// `excludeCredentials`; `ASAuthorizationError.matchedExcludedCredential` on iOS 18 and
        /// macOS 15). Nothing was created: the account has a passkey on this device already.
        public static let passkeyAlreadyRegistered = Code(name: "passkey_already_registered")
        /// The authenticator holds no passkey the sign-in allows (none for this relying party, or
        /// none of the account's): offer another way to sign in.
        public static let noPasskey = Code(name: "no_passkey")
        /// `link(provider:…)` ended signed in to another account than the signed-in one (the
        /// server's sign-in page was signed in to another account, or the provider's identity
        /// already belongs to one). Nothing was linked; the new session was revoked and the
        /// signed-in one kept.
        public static let identityNotLinked = Code(name: "identity_not_linked")
        /// The server's answer was not what the wire contract describes.
        public static let invalidResponse = Code(name: "invalid_response")
        /// A file or other store failed for a reason other than being locked.
        public static let storage = Code(name: "storage")

        /// Same name and, for server codes, the same server code; `retryAfter` is not compared.
        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.name == rhs.name && lhs.serverCode == rhs.serverCode }
        /// Hashes what ``==`` compares.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(serverCode)
        }

        /// `network`, `rate_limited`, `server(conflict)`, `web_sign_in(login_required)`, ….
        public var description: String { serverCode.map { "\(name)(\($0))" } ?? name }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for a developer; never a secret.
    public var message: String
    /// The HTTP status of the server's answer, when there was one.
    public var status: Int?
    /// The `reason` member of the server's error (for `invalid_grant`, a grant failure reason such
    /// as `reused` or `consent_revoked`), intact even when the SDK does not know it.
    public var reason: String?
    /// The server's request id (`server_error`), to quote to an operator.
    public var requestID: String?
    /// When the SDK ended the session because of this error: why.
    public var signOutReason: SignOutReason?
    /// For a refused email proof (a mailed code or link, `invalid_grant`): why, typed, so an app
    /// can say "wrong code, try again" or "ask for a new email". Set only by the email calls;
    /// a reason this SDK does not know leaves it `nil`, with ``reason`` intact.
    public var emailFlowFailure: EmailFlowFailure?

    /// An error with `code` and a developer-facing `message`.
    public init(
        _ code: Code, _ message: String, status: Int? = nil, reason: String? = nil, requestID: String? = nil,
        signOutReason: SignOutReason? = nil
    ) {
        self.code = code
        self.message = message
        self.status = status
        self.reason = reason
        self.requestID = requestID
        self.signOutReason = signOutReason
    }

    /// The server's `error` member, for an error that came from a server answer (or the OAuth
    /// `error` of a web sign-in's callback).
    public var serverCode: String? { code.serverCode }

    /// Equality compares codes only, so a test can write `#expect(throws: LatchkeyError(.network, ""))`.
    public static func == (lhs: LatchkeyError, rhs: LatchkeyError) -> Bool { lhs.code == rhs.code }

    /// The code, the message, the status and the reason; never a secret.
    public var description: String {
        var text = "\(code): \(message)"
        if let status { text += " (HTTP \(status))" }
        if let reason { text += " [reason \(reason)]" }
        return text
    }
}
