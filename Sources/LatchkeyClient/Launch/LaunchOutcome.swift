/// What the launch-time check found (``LatchkeyClient/restore(appleState:)``).
public enum LaunchOutcome: Sendable, Hashable {
    /// The session is good; show the signed-in app.
    case signedIn(Session)
    /// There is no session (`nil`: none was stored), or the check ended it for `reason`.
    case signedOut(SignOutReason?)
    /// Apple or the server could not be asked; the cached session is kept, as Apple's sample does
    /// when offline.
    case offline(Session)
}
