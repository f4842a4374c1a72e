/// An expected "no" from the auth domain: the one error services throw for a request they
/// refuse (a bad field, an unknown token, a wrong password, a full queue).
///
/// Its ``code`` is extensible, in the shape of `CryptoError`: the domain names what went wrong,
/// and the route layer alone decides the status, the wire code and the headers (`AuthError+HTTP`
/// in `Routes/`). ``message`` reaches the client as `error_description`, so it never holds a
/// secret. Equality compares ``code`` only, so a test writes `#expect(throws: AuthError.notFound(""))`.
///
/// ## The shape of every error type in the package
///
/// `AuthError`, `CryptoError`, `JOSEError`, `StoreError`, `JSONError`, `HTTPServerError`,
/// `ConfigurationError` and `WireDecodingError` are built alike:
/// - a struct, `Error & Sendable & Equatable & CustomStringConvertible` (and `Hashable` where it
///   was before);
/// - a nested `Code: RawRepresentable` over `String`, with a public `init(rawValue:)` and its
///   known values as static constants, so a module can add codes: switch with a `default`;
/// - `code`, and `message`: what exactly went wrong, a sentence safe to log, never a secret or the
///   bytes of the input; context of the type's own beside them (``reason`` and ``retryAfter``
///   here, `offset`, `path`, `problems`);
/// - equality (and hashing) compare `code` only, so a test matches the kind of failure;
/// - static factories named after the codes, taking the message.
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A field is missing, mistyped, too long or malformed; a password is refused (``reason``).
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// A grant (refresh token, challenge, `mfa_token`, code, proof) does not hold; ``reason`` says why.
        public static let invalidGrant = Code(rawValue: "invalid_grant")
        /// A grant type this endpoint does not take.
        public static let unsupportedGrantType = Code(rawValue: "unsupported_grant_type")
        /// The caller's access token does not hold (absent, invalid, or its session ended).
        public static let invalidToken = Code(rawValue: "invalid_token")
        /// Wrong username or password.
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        /// An Apple identity token failed a check.
        public static let invalidIdentityToken = Code(rawValue: "invalid_identity_token")
        /// The first factor held; a second is needed (``secondFactor``).
        public static let secondFactorRequired = Code(rawValue: "mfa_required")
        /// The action needs a second factor proved in the last five minutes.
        public static let insufficientAuthentication = Code(rawValue: "insufficient_authentication")
        /// No such resource of the caller's.
        public static let notFound = Code(rawValue: "not_found")
        /// It already exists (a username, a device key, a confirmed TOTP).
        public static let conflict = Code(rawValue: "conflict")
        /// Too many failed attempts; ``retryAfter`` says when to come back.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// A bounded queue is full; ``retryAfter`` says when to come back.
        public static let overloaded = Code(rawValue: "overloaded")
        /// Storage cannot be written now; nothing was written.
        public static let unavailable = Code(rawValue: "unavailable")
        /// Apple cannot be reached or used now.
        public static let appleUnavailable = Code(rawValue: "apple_unavailable")
    }

    /// Why a grant or a password was refused, in the wire's words (`reused`, `password_common`).
    public struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unknown = Reason(rawValue: "unknown")
        public static let reused = Reason(rawValue: "reused")
        public static let expired = Reason(rawValue: "expired")
        public static let revoked = Reason(rawValue: "revoked")
        public static let consentRevoked = Reason(rawValue: "consent_revoked")
        public static let accountDeleted = Reason(rawValue: "account_deleted")
        public static let transferred = Reason(rawValue: "transferred")
        public static let invalidSignature = Reason(rawValue: "invalid_signature")
        public static let invalidCode = Reason(rawValue: "invalid_code")
        public static let passwordTooShort = Reason(rawValue: "password_too_short")
        public static let passwordTooLong = Reason(rawValue: "password_too_long")
        public static let passwordCommon = Reason(rawValue: "password_common")
    }

    /// What the user must prove next after a first factor that held.
    public struct SecondFactorChallenge: Sendable, Hashable {
        /// The short-lived token naming the half-finished sign-in.
        public var token: String
        /// The factors the user can prove.
        public var factors: [SecondFactorOption]
    }

    public var code: Code
    /// A sentence for a developer; sent to the client as is, so never a secret.
    public var message: String
    /// Why, for ``Code/invalidGrant`` and a refused password.
    public var reason: Reason?
    /// Seconds until a retry may succeed, for ``Code/rateLimited``, ``Code/overloaded``,
    /// ``Code/unavailable`` and ``Code/appleUnavailable``.
    public var retryAfter: Int?
    /// For ``Code/secondFactorRequired``.
    public var secondFactor: SecondFactorChallenge?

    public init(_ code: Code, _ message: String, reason: Reason? = nil, retryAfter: Int? = nil, secondFactor: SecondFactorChallenge? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
        self.retryAfter = retryAfter
        self.secondFactor = secondFactor
    }

    public static func == (lhs: AuthError, rhs: AuthError) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code): \(message)" }

    public static func invalidRequest(_ message: String, reason: Reason? = nil) -> AuthError {
        AuthError(.invalidRequest, message, reason: reason)
    }

    public static func invalidGrant(_ reason: Reason, _ message: String) -> AuthError {
        AuthError(.invalidGrant, message, reason: reason)
    }

    public static func invalidToken(_ message: String) -> AuthError { AuthError(.invalidToken, message) }

    public static func notFound(_ message: String = "no such resource") -> AuthError { AuthError(.notFound, message) }

    public static func conflict(_ message: String = "this already exists") -> AuthError { AuthError(.conflict, message) }

    public static func rateLimited(retryAfter seconds: Int) -> AuthError {
        AuthError(.rateLimited, "too many attempts; try again later", retryAfter: seconds)
    }

    public static func overloaded(retryAfter seconds: Int) -> AuthError {
        AuthError(.overloaded, "the server is busy; try again later", retryAfter: seconds)
    }

    public static func insufficientAuthentication() -> AuthError {
        AuthError(
            .insufficientAuthentication,
            "this needs a second factor in the last five minutes; verify a device key challenge (step_up) or sign in again")
    }

    public static func secondFactorRequired(token: String, factors: [SecondFactorOption]) -> AuthError {
        AuthError(
            .secondFactorRequired, "this account needs a second factor; complete it at /v1/mfa/verify",
            secondFactor: SecondFactorChallenge(token: token, factors: factors))
    }
}

/// One second factor a user has, as sign-in and the account list it.
public enum SecondFactorOption: Sendable, Hashable {
    case deviceKey(id: String, label: String)
    case totp
    /// Unused recovery codes remain.
    case recoveryCode
}
