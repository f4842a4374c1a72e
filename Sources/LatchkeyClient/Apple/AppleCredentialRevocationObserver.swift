#if canImport(AuthenticationServices)
import AuthenticationServices
public import Foundation

/// Signs the client out the moment Apple posts
/// `ASAuthorizationAppleIDProvider.credentialRevokedNotification` (the user stopped using Sign in
/// with Apple with this app while it runs), with ``SignOutReason/credentialRevoked``. Keep the
/// observer as long as the client; it stops observing when released or on ``stop()``.
public final class AppleCredentialRevocationObserver {
    private let center: NotificationCenter
    private var token: (any NSObjectProtocol)?

    /// Starts observing for `client`.
    ///
    /// - Parameter center: where Apple posts the notification (the default center).
    public init(client: LatchkeyClient, center: NotificationCenter = .default) {
        self.center = center
        token = center.addObserver(
            forName: ASAuthorizationAppleIDProvider.credentialRevokedNotification, object: nil, queue: nil
        ) { _ in
            Task { await client.signOut(because: .credentialRevoked) }
        }
    }

    /// Stops observing.
    public func stop() {
        if let token { center.removeObserver(token) }
        token = nil
    }

    deinit {
        stop()
    }
}
#endif
