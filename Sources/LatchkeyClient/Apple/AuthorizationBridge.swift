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

    /// How the controller shows its requests.
    enum Presentation {
        /// The sheet.
        case modal
        /// Only credentials already on the device, failing with `.notInteractive` rather than
        /// showing the sheet when there are none (the existing-account flow at launch).
        case immediatelyAvailable
        /// In the QuickType bar of the focused username field (passkey AutoFill, iOS and visionOS).
        case autoFill
    }

    /// Performs `requests` over this bridge's anchor.
    ///
    /// - Returns: the credential the user chose, copied out of Apple's (non-`Sendable`) objects.
    /// - Throws: what the controller reported (an `ASAuthorizationError` for a cancel, …).
    func perform(_ requests: [ASAuthorizationRequest], presentation: Presentation) async throws -> AuthorizedCredential {
        let controller = ASAuthorizationController(authorizationRequests: requests)
        controller.delegate = self
        controller.presentationContextProvider = self
        self.controller = controller
        defer { self.controller = nil }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                self.continuation = continuation
                switch presentation {
                case .modal:
                    controller.performRequests()
                case .immediatelyAvailable:
                    #if os(tvOS)
                        controller.performRequests()
                    #else
                        controller.performRequests(options: .preferImmediatelyAvailableCredentials)
                    #endif
                case .autoFill:
                    #if os(macOS) || os(tvOS)
                        // No AutoFill-assisted requests there; PlatformPasskeyAuthenticator never asks.
                        controller.performRequests()
                    #else
                        controller.performAutoFillAssistedRequests()
                    #endif
                }
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
    /// A new passkey (`ASAuthorizationPlatformPublicKeyCredentialRegistration`).
    case passkeyRegistration(PasskeyRegistration)
    /// A passkey's assertion (`ASAuthorizationPlatformPublicKeyCredentialAssertion`).
    case passkeyAssertion(PasskeyAssertion)
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
        } else if let passkey = credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration, let attestation = passkey.rawAttestationObject {
            let attachment = Self.attachment { passkey.attachment }
            self = .passkeyRegistration(
                PasskeyRegistration(
                    credentialID: passkey.credentialID, clientDataJSON: passkey.rawClientDataJSON, attestationObject: attestation,
                    transports: attachment == "cross-platform" ? ["hybrid"] : ["internal", "hybrid"], attachment: attachment))
        } else if let passkey = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion {
            self = .passkeyAssertion(
                PasskeyAssertion(
                    credentialID: passkey.credentialID, clientDataJSON: passkey.rawClientDataJSON, authenticatorData: passkey.rawAuthenticatorData,
                    signature: passkey.signature, userHandle: passkey.userID, attachment: Self.attachment { passkey.attachment }))
        } else {
            self = .unsupported
        }
    }

    /// WebAuthn's name of where the passkey lives (`platform`: this device's passkey manager;
    /// `cross-platform`: a phone nearby or a security key); unknown before iOS 16.6 and macOS 13.5.
    private static func attachment(_ read: () -> ASAuthorizationPublicKeyCredentialAttachment) -> String? {
        guard #available(iOS 16.6, macOS 13.5, tvOS 16.6, *) else { return nil }
        switch read() {
        case .platform: return "platform"
        case .crossPlatform: return "cross-platform"
        @unknown default: return nil
        }
    }
}
#endif
