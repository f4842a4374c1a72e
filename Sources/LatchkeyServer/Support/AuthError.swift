import LatchkeyErrors

/// An expected "no" from the auth domain: the one error services throw for a request they
/// refuse (a bad field, an unknown token, a wrong password, a full queue).
///
/// Its ``code`` is extensible, in the shape of `CryptoError`: the domain names what went wrong,
/// and the route layer alone decides the status, the wire code and the headers (`AuthError+HTTP`
/// in `Routes/`). ``message`` reaches the client as `error_description`, so it never holds a
/// secret. Equality compares ``code`` only, so a test writes `#expect(throws: AuthError.notFound(""))`.
///
/// It has the shape of every error of the package (`CodedError`, in LatchkeyErrors).
package struct AuthError: CodedError {
    /// What went wrong.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// A field is missing, mistyped, too long or malformed; a password is refused (``reason``).
        package static let invalidRequest = Code(rawValue: "invalid_request")
        /// A grant (refresh token, challenge, `mfa_token`, code, proof) does not hold; ``reason`` says why.
        package static let invalidGrant = Code(rawValue: "invalid_grant")
        /// A grant type this endpoint does not take.
        package static let unsupportedGrantType = Code(rawValue: "unsupported_grant_type")
        /// The caller's access token does not hold (absent, invalid, or its session ended).
        package static let invalidToken = Code(rawValue: "invalid_token")
        /// A DPoP proof (RFC 9449) is missing where one is needed, malformed, or not for this
        /// request, key or token.
        package static let invalidDPoPProof = Code(rawValue: "invalid_dpop_proof")
        /// A DPoP proof lacks the current server nonce (``dpopNonce`` holds one to use).
        package static let useDPoPNonce = Code(rawValue: "use_dpop_nonce")
        /// An OAuth client failed to authenticate: unknown, wrong or missing secret, or a secret
        /// from a public client (RFC 6749 §5.2).
        package static let invalidClient = Code(rawValue: "invalid_client")
        /// Wrong username or password.
        package static let invalidCredentials = Code(rawValue: "invalid_credentials")
        /// An Apple identity token failed a check.
        package static let invalidIdentityToken = Code(rawValue: "invalid_identity_token")
        /// The first factor held; a second is needed (``secondFactor``).
        package static let secondFactorRequired = Code(rawValue: "mfa_required")
        /// The action needs a second factor proved in the last five minutes.
        package static let insufficientAuthentication = Code(rawValue: "insufficient_authentication")
        /// The account is disabled (by an operator or an admin) and cannot sign in by any method.
        package static let accountDisabled = Code(rawValue: "account_disabled")
        /// The caller is signed in but may not do this: the admin API without the `admin` scope
        /// or a role, or a support account on an admin-only action.
        package static let forbidden = Code(rawValue: "forbidden")
        /// No such resource of the caller's.
        package static let notFound = Code(rawValue: "not_found")
        /// An OAuth request the client is not registered for (RFC 6749 §5.2).
        package static let unauthorizedClient = Code(rawValue: "unauthorized_client")
        /// Scopes a client may not ask for (RFC 6749 §5.2).
        package static let invalidScope = Code(rawValue: "invalid_scope")
        /// A bearer token whose grant lacks the scope an endpoint needs (RFC 6750 §3.1).
        package static let insufficientScope = Code(rawValue: "insufficient_scope")
        /// It already exists (a username, a device key, a confirmed TOTP).
        package static let conflict = Code(rawValue: "conflict")
        /// Too many failed attempts; ``retryAfter`` says when to come back.
        package static let rateLimited = Code(rawValue: "rate_limited")
        /// A bounded queue is full; ``retryAfter`` says when to come back.
        package static let overloaded = Code(rawValue: "overloaded")
        /// Storage cannot be written now; nothing was written.
        package static let unavailable = Code(rawValue: "unavailable")
        /// Apple cannot be reached or used now.
        package static let appleUnavailable = Code(rawValue: "apple_unavailable")
        /// RFC 8628 §3.5: the user has not answered the device authorization yet.
        package static let authorizationPending = Code(rawValue: "authorization_pending")
        /// RFC 8628 §3.5: a device polled sooner than its interval, which grows by 5 seconds.
        package static let slowDown = Code(rawValue: "slow_down")
        /// RFC 8628 §3.5: the user denied the device authorization.
        package static let accessDenied = Code(rawValue: "access_denied")
        /// RFC 8628 §3.5: the device code expired before it was redeemed.
        package static let expiredToken = Code(rawValue: "expired_token")
        /// An endpoint under `app_attest.enforce` got no valid `X-Latchkey-App-Check` token (S49).
        package static let appCheckFailed = Code(rawValue: "app_check_failed")
    }

    /// Why a grant or a password was refused, in the wire's words (`reused`, `password_common`).
    package struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        package static let unknown = Reason(rawValue: "unknown")
        package static let reused = Reason(rawValue: "reused")
        package static let expired = Reason(rawValue: "expired")
        package static let revoked = Reason(rawValue: "revoked")
        package static let consentRevoked = Reason(rawValue: "consent_revoked")
        package static let accountDeleted = Reason(rawValue: "account_deleted")
        package static let accountDisabled = Reason(rawValue: "account_disabled")
        package static let transferred = Reason(rawValue: "transferred")
        package static let invalidSignature = Reason(rawValue: "invalid_signature")
        package static let invalidCode = Reason(rawValue: "invalid_code")
        package static let used = Reason(rawValue: "used")
        package static let superseded = Reason(rawValue: "superseded")
        package static let tooManyAttempts = Reason(rawValue: "too_many_attempts")
        package static let passwordTooShort = Reason(rawValue: "password_too_short")
        package static let passwordTooLong = Reason(rawValue: "password_too_long")
        package static let passwordCommon = Reason(rawValue: "password_common")
    }

    /// What the user must prove next after a first factor that held.
    package struct SecondFactorChallenge: Sendable, Hashable {
        /// The short-lived token naming the half-finished sign-in.
        package var token: String
        /// The factors the user can prove.
        package var factors: [SecondFactorOption]
    }

    package var code: Code
    /// A sentence for a developer; sent to the client as is, so never a secret.
    package var message: String
    /// Why, for ``Code/invalidGrant`` and a refused password.
    package var reason: Reason?
    /// Seconds until a retry may succeed, for ``Code/rateLimited``, ``Code/overloaded``,
    /// ``Code/unavailable`` and ``Code/appleUnavailable``.
    package var retryAfter: Int?
    /// For ``Code/secondFactorRequired``.
    package var secondFactor: SecondFactorChallenge?
    /// A server nonce for the client's next DPoP proof (the `DPoP-Nonce` header), when nonces
    /// are on.
    package var dpopNonce: String?

    package init(_ code: Code, _ message: String, reason: Reason? = nil, retryAfter: Int? = nil, secondFactor: SecondFactorChallenge? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
        self.retryAfter = retryAfter
        self.secondFactor = secondFactor
    }

    package var description: String { "\(code): \(message)" }

    package static func invalidRequest(_ message: String, reason: Reason? = nil) -> AuthError {
        AuthError(.invalidRequest, message, reason: reason)
    }

    package static func invalidGrant(_ reason: Reason, _ message: String) -> AuthError {
        AuthError(.invalidGrant, message, reason: reason)
    }

    package static func invalidToken(_ message: String) -> AuthError { AuthError(.invalidToken, message) }

    package static func invalidDPoPProof(_ message: String) -> AuthError { AuthError(.invalidDPoPProof, message) }

    package static func notFound(_ message: String = "no such resource") -> AuthError { AuthError(.notFound, message) }

    package static func conflict(_ message: String = "this already exists") -> AuthError { AuthError(.conflict, message) }

    package static func rateLimited(retryAfter seconds: Int) -> AuthError {
        AuthError(.rateLimited, "too many attempts; try again later", retryAfter: seconds)
    }

    package static func overloaded(retryAfter seconds: Int) -> AuthError {
        AuthError(.overloaded, "the server is busy; try again later", retryAfter: seconds)
    }

    /// The refusal of a sign-in of a disabled account (S50).
    package static func accountDisabled() -> AuthError {
        AuthError(.accountDisabled, "this account is disabled and cannot sign in")
    }

    package static func insufficientAuthentication() -> AuthError {
        AuthError(
            .insufficientAuthentication,
            "this needs a second factor in the last five minutes; verify a device key challenge (step_up) or sign in again")
    }

    package static func secondFactorRequired(token: String, factors: [SecondFactorOption]) -> AuthError {
        AuthError(
            .secondFactorRequired, "this account needs a second factor",
            secondFactor: SecondFactorChallenge(token: token, factors: factors))
    }
}

/// One second factor a user has, as sign-in and the account list it.
package enum SecondFactorOption: Sendable, Hashable {
    case deviceKey(id: String, label: String)
    case totp
    /// Unused recovery codes remain.
    case recoveryCode
    /// The user has a passkey (WebAuthn), proved through `POST /v1/mfa/passkey/options`.
    case passkey
}
