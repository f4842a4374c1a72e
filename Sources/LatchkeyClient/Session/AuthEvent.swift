/// What happens to the session, in order, on ``LatchkeyClient/authEvents``.
public enum AuthEvent: Sendable, Hashable {
    /// The first event of every stream: the session the store held when the stream began (`nil`
    /// when signed out).
    case initialSession(Session?)
    /// A sign-in (first factor, MFA completion or step-up) gave a new session.
    case signedIn(Session)
    /// The tokens were rotated (by this process, or adopted from a sibling process).
    case tokenRefreshed(Session)
    /// The session ended, and why.
    case signedOut(SignOutReason)
    /// The server's view of the user changed (names, email).
    case userUpdated(Account.User)
    /// The app lock closed (Apple glue).
    case locked
    /// The app lock opened (Apple glue).
    case unlocked
}

/// Why a session ended. Only the user, the launch-time check, or one of the server's definite
/// `invalid_grant` reasons ends a session; an ambiguous failure never does.
public enum SignOutReason: Sendable, Hashable {
    /// The user signed out (``LatchkeyClient/signOut(everywhere:)``).
    case userInitiated
    /// The user stopped using Sign in with Apple with this app (`consent_revoked`).
    case consentRevoked
    /// The account was deleted (`account_deleted`, or ``LatchkeyClient/deleteAccount()``).
    case accountDeleted
    /// The session was ended elsewhere: a logout on another device, an operator, a password
    /// change (`revoked`), or the server no longer knows the token (`unknown`).
    case sessionRevoked
    /// A rotated refresh token was presented again, so the server revoked the session (`reused`).
    case tokenReused
    /// The app moved to another Apple developer team (`transferred`, or Apple's `.transferred`
    /// state at launch): sign in with Apple again to link the account.
    case transferred
    /// Apple says the Apple ID credential was revoked (at launch, or the revocation notification).
    case credentialRevoked
    /// Apple does not know the Apple ID credential on this device.
    case credentialNotFound
    /// The session outlived its lifetime (`expired`).
    case expired
}
