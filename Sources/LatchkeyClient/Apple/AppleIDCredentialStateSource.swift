#if canImport(AuthenticationServices)
import AuthenticationServices

/// Apple's view of a Sign in with Apple user on this device,
/// `ASAuthorizationAppleIDProvider.credentialState(forUserID:)`, for
/// ``LatchkeyClient/restore(appleState:)`` at launch: `restore(appleState: .appleID)`.
public struct AppleIDCredentialStateSource: AppleCredentialStateSource {
    /// The source.
    public init() {}

    /// Asks Apple for the state of `userID`'s credential.
    ///
    /// - Throws: Apple's error (no network, …); ``LatchkeyClient/restore(appleState:)`` then keeps
    ///   the cached session (``LaunchOutcome/offline(_:)``).
    public func state(forUserID userID: String) async throws -> AppleCredentialState {
        let provider = ASAuthorizationAppleIDProvider()
        switch try await provider.credentialState(forUserID: userID) {
        case .authorized: return .authorized
        case .revoked: return .revoked
        case .notFound: return .notFound
        case .transferred: return .transferred
        @unknown default:
            // A state added after this SDK: treat it as "not known here", which asks the user to
            // sign in again rather than keep a session Apple no longer vouches for.
            return .notFound
        }
    }
}

extension AppleCredentialStateSource where Self == AppleIDCredentialStateSource {
    /// Apple's credential state on this device (``AppleIDCredentialStateSource``).
    public static var appleID: AppleIDCredentialStateSource { AppleIDCredentialStateSource() }
}
#endif
