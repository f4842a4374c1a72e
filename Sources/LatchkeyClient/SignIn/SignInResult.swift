/// The outcome of a first factor: a session, or a second factor to prove.
public enum SignInResult: Sendable {
    /// Signed in; the session is stored.
    case signedIn(Session)
    /// The first factor was right and the account has a second factor: complete with
    /// ``LatchkeyClient/completeSignIn(_:with:)``.
    case secondFactorRequired(MFAChallenge)
}
