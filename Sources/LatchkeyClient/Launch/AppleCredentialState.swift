/// Apple's answer for an Apple user id on this device
/// (`ASAuthorizationAppleIDProvider.CredentialState`).
public enum AppleCredentialState: Sendable, Hashable {
    /// The user is signed in with Apple to this app.
    case authorized
    /// The user stopped using Sign in with Apple with this app, or signed out of the device.
    case revoked
    /// Apple knows no such credential on this device.
    case notFound
    /// The app moved to another developer team; the user must sign in again to be linked.
    case transferred
}

/// Asks Apple for the state of a credential: `ASAuthorizationAppleIDProvider` on Apple
/// platforms, anything else in tests.
public protocol AppleCredentialStateSource: Sendable {
    /// The state of `forUserID`'s credential.
    ///
    /// - Throws: when Apple cannot be asked now (offline); the launch check then keeps the session.
    func state(forUserID: String) async throws -> AppleCredentialState
}
