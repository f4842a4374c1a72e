/// The `error` member of an error body (docs/reference.md, "Errors").
///
/// A string struct rather than an enum, so a client built today still reads a code the server
/// adds tomorrow: it arrives as a value with that raw string.
public struct WireErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// 400: malformed JSON or form, a missing, mistyped or oversized member; a refused password.
    public static let invalidRequest = WireErrorCode(rawValue: "invalid_request")
    /// 400: a refresh token, challenge, `mfa_token` or code that is unknown, used, expired or
    /// revoked, or a proof that does not verify; `reason` says which (``GrantFailureReason``).
    public static let invalidGrant = WireErrorCode(rawValue: "invalid_grant")
    /// 400: a `grant_type` this endpoint does not take.
    public static let unsupportedGrantType = WireErrorCode(rawValue: "unsupported_grant_type")
    /// 401: the bearer token is missing, invalid, expired, or its session has ended.
    public static let invalidToken = WireErrorCode(rawValue: "invalid_token")
    /// 400 at a token endpoint, 401 on a resource: a DPoP proof is missing, malformed, or not
    /// for this request, key or token (RFC 9449 §7.1).
    public static let invalidDPoPProof = WireErrorCode(rawValue: "invalid_dpop_proof")
    /// 400 at a token endpoint, 401 on a resource: the proof must carry the server nonce the
    /// `DPoP-Nonce` header holds (RFC 9449 §8).
    public static let useDPoPNonce = WireErrorCode(rawValue: "use_dpop_nonce")
    /// 401: wrong username or password.
    public static let invalidCredentials = WireErrorCode(rawValue: "invalid_credentials")
    /// 401: an Apple identity token failed a check.
    public static let invalidIdentityToken = WireErrorCode(rawValue: "invalid_identity_token")
    /// 403: the first factor was right; `mfa_token` and `factors` say how to go on.
    public static let mfaRequired = WireErrorCode(rawValue: "mfa_required")
    /// 403: the action needs a second factor proved in the last five minutes.
    public static let insufficientAuthentication = WireErrorCode(rawValue: "insufficient_authentication")
    /// 403: the account is disabled and cannot sign in by any method; at a token endpoint the
    /// refusal is `invalid_grant` with reason ``GrantFailureReason/accountDisabled``.
    public static let accountDisabled = WireErrorCode(rawValue: "account_disabled")
    /// 404.
    public static let notFound = WireErrorCode(rawValue: "not_found")
    /// 403: signed in, but not allowed this: the admin API without the `admin` scope or a role,
    /// or a `support` account on an admin-only action.
    public static let forbidden = WireErrorCode(rawValue: "forbidden")
    /// 400: an OAuth client asked for a grant it is not registered for.
    public static let unauthorizedClient = WireErrorCode(rawValue: "unauthorized_client")
    /// 400: an OAuth client asked for scopes it may not have.
    public static let invalidScope = WireErrorCode(rawValue: "invalid_scope")
    /// 403: the access token's grant lacks the scope the endpoint needs.
    public static let insufficientScope = WireErrorCode(rawValue: "insufficient_scope")
    /// 400 from `/oauth/token` (RFC 8628 §3.5): the user has not answered the device
    /// authorization yet; poll again after the interval.
    public static let authorizationPending = WireErrorCode(rawValue: "authorization_pending")
    /// 400 from `/oauth/token` (RFC 8628 §3.5): polled too soon; the interval is now 5 seconds longer.
    public static let slowDown = WireErrorCode(rawValue: "slow_down")
    /// 400 from `/oauth/token` (RFC 8628 §3.5): the user denied the device authorization.
    public static let accessDenied = WireErrorCode(rawValue: "access_denied")
    /// 400 from `/oauth/token` (RFC 8628 §3.5): the device code expired; start again.
    public static let expiredToken = WireErrorCode(rawValue: "expired_token")
    /// 405, with `Allow`.
    public static let methodNotAllowed = WireErrorCode(rawValue: "method_not_allowed")
    /// 409: a username, device key or confirmed TOTP already exists.
    public static let conflict = WireErrorCode(rawValue: "conflict")
    /// 413: the body is over the limit.
    public static let payloadTooLarge = WireErrorCode(rawValue: "payload_too_large")
    /// 415: another media type, or a content coding.
    public static let unsupportedMediaType = WireErrorCode(rawValue: "unsupported_media_type")
    /// 429: too many failed attempts; `retry_after` says when to come back.
    public static let rateLimited = WireErrorCode(rawValue: "rate_limited")
    /// 503: a bounded queue is full.
    public static let overloaded = WireErrorCode(rawValue: "overloaded")
    /// 503: storage cannot be written now.
    public static let unavailable = WireErrorCode(rawValue: "unavailable")
    /// 503: Apple is unreachable, slow or failing, or code exchange is not configured.
    public static let appleUnavailable = WireErrorCode(rawValue: "apple_unavailable")
    /// 401: an endpoint that needs an app check token (`X-Latchkey-App-Check`) got none, or
    /// one that does not verify.
    public static let appCheckFailed = WireErrorCode(rawValue: "app_check_failed")
    /// 503 from `GET /readyz`.
    public static let notReady = WireErrorCode(rawValue: "not_ready")
    /// 500: a defect; the body carries only `request_id`.
    public static let serverError = WireErrorCode(rawValue: "server_error")
}

/// Why a grant failed: the `reason` member of `invalid_grant` (docs/reference.md).
///
/// A client ends a session only on a definite reason; one it does not know arrives intact.
public struct GrantFailureReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The token, challenge or code was never issued here (or has been purged).
    public static let unknown = GrantFailureReason(rawValue: "unknown")
    /// A refresh token came back after it was rotated: the session is revoked.
    public static let reused = GrantFailureReason(rawValue: "reused")
    /// The session or challenge outlived its lifetime.
    public static let expired = GrantFailureReason(rawValue: "expired")
    /// The session was ended (logout, an operator, a password change).
    public static let revoked = GrantFailureReason(rawValue: "revoked")
    /// The user stopped using Sign in with Apple with this app.
    public static let consentRevoked = GrantFailureReason(rawValue: "consent_revoked")
    /// The account was deleted.
    public static let accountDeleted = GrantFailureReason(rawValue: "account_deleted")
    /// The account was disabled: its sessions ended, and no grant is answered until it is
    /// enabled again (a new sign-in is needed then).
    public static let accountDisabled = GrantFailureReason(rawValue: "account_disabled")
    /// The app moved to another Apple developer team.
    public static let transferred = GrantFailureReason(rawValue: "transferred")
    /// A device signature did not verify.
    public static let invalidSignature = GrantFailureReason(rawValue: "invalid_signature")
    /// A TOTP or recovery code was wrong or already used.
    public static let invalidCode = GrantFailureReason(rawValue: "invalid_code")
}

/// Why a password was refused: the `reason` member of `invalid_request` on sign-up or change.
public struct PasswordRefusalReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let tooShort = PasswordRefusalReason(rawValue: "password_too_short")
    public static let tooLong = PasswordRefusalReason(rawValue: "password_too_long")
    public static let common = PasswordRefusalReason(rawValue: "password_common")
}
