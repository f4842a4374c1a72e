#if canImport(AuthenticationServices) && !os(watchOS)
import AuthenticationServices
import Foundation

/// One `ASAuthorizationController` run as one `async` call: the controller's delegate and
/// presentation provider, resuming a checked continuation exactly once.
///
/// The controller holds its delegate weakly, so whoever performs the requests keeps the bridge
/// alive until ``perform(_:preferImmediatelyAvailable:)`` returns (the `await` does). Cancelling
/// the awaiting task cancels the sheet, which then ends as a cancel.
@MainActor
final class AuthorizationBridge: NSObject, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding
{
    private let anchor: ASPresentationAnchor
    private var continuation: CheckedContinuation<AuthorizedCredential, any Error>?
    private var controller: ASAuthorizationController?

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// Performs `requests` with the sheet over this bridge's anchor.
    ///
    /// - Parameter preferImmediatelyAvailable: only offer credentials already on the device, and
    ///   fail with `.notInteractive` rather than show the sheet when there are none (the
    ///   existing-account flow at launch).
    /// - Returns: the credential the user chose, copied out of Apple's (non-`Sendable`) objects.
    /// - Throws: what the controller reported (an `ASAuthorizationError` for a cancel, …).
    func perform(_ requests: [ASAuthorizationRequest], preferImmediatelyAvailable: Bool) async throws -> AuthorizedCredential {
        let controller = ASAuthorizationController(authorizationRequests: requests)
        controller.delegate = self
        controller.presentationContextProvider = self
        self.controller = controller
        defer { self.controller = nil }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                self.continuation = continuation
                #if !os(tvOS)
                    if preferImmediatelyAvailable {
                        controller.performRequests(options: .preferImmediatelyAvailableCredentials)
                        return
                    }
                #endif
                controller.performRequests()
            }
        } onCancel: {
            Task { @MainActor in self.cancel() }
        }
    }

    /// Cancels the running sheet; the delegate then reports `.canceled`.
    private func cancel() {
        #if !os(tvOS)
            controller?.cancel()
        #endif
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        continuation?.resume(returning: AuthorizedCredential(authorization.credential))
        continuation = nil
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        continuation?.resume(throwing: error)
        continuation = nil
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        anchor
    }
}

/// What an authorization carried, as values that may cross from the delegate callback to the
/// awaiting caller.
enum AuthorizedCredential: Sendable {
    /// A Sign in with Apple credential.
    case appleID(AppleIDCredentialFields)
    /// A saved password (`ASPasswordCredential`).
    case password(user: String, password: String)
    /// A kind of credential the SDK did not ask for.
    case unsupported

    init(_ credential: any ASAuthorizationCredential) {
        if let apple = credential as? ASAuthorizationAppleIDCredential {
            self = .appleID(
                AppleIDCredentialFields(
                    user: apple.user, identityToken: apple.identityToken, authorizationCode: apple.authorizationCode,
                    fullName: apple.fullName, email: apple.email))
        } else if let password = credential as? ASPasswordCredential {
            self = .password(user: password.user, password: password.password)
        } else {
            self = .unsupported
        }
    }
}
#endif
