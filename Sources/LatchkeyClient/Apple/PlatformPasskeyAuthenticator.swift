#if canImport(AuthenticationServices) && !os(watchOS) && !os(tvOS)
public import AuthenticationServices
import Foundation

/// The device's passkey manager (iCloud Keychain, or the password manager the user chose) as a
/// ``PasskeyAuthenticator``, through `ASAuthorizationPlatformPublicKeyCredentialProvider`.
///
/// The passkeys are bound to the server's RP ID, so the app needs the `webcredentials:` associated
/// domain of that host, and the server's `apple-app-site-association` must list the app (see
/// docs/ios.md, "Passkeys"). Each call shows Apple's sheet over ``anchor``, but the automatic
/// upgrade (no sheet) and AutoFill (the QuickType bar of the focused username field).
///
/// Errors: dismissing the sheet (`ASAuthorizationError.canceled`) or cancelling the task is
/// ``LatchkeyError/Code/canceled``; `ASAuthorizationError.matchedExcludedCredential` (iOS 18,
/// macOS 15: the passkey manager holds one of the account's passkeys already) is
/// ``LatchkeyError/Code/passkeyAlreadyRegistered``; any other `ASAuthorizationError` is thrown as
/// it is.
public struct PlatformPasskeyAuthenticator: PasskeyAuthenticator {
    /// The window Apple's sheet is shown over.
    public let anchor: ASPresentationAnchor

    /// A passkey manager that shows its sheets over `anchor`.
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// Creates a passkey with `createCredentialRegistrationRequest(challenge:name:userID:)`, the
    /// account's passkeys excluded (iOS 17.4, macOS 13.5; before that the passkey manager may
    /// replace its passkey for the account); ``PasskeyRequestStyle/conditional`` is iOS 18's
    /// `requestStyle: .conditional`, and fails at once on older systems.
    public func makeCredential(_ options: PasskeyCreationOptions, style: PasskeyRequestStyle) async throws -> PasskeyRegistration {
        let credential = try await perform(presentation: .modal) {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.relyingPartyID)
            let request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest
            switch style {
            case .standard:
                request = provider.createCredentialRegistrationRequest(challenge: options.challenge, name: options.userName, userID: options.userID)
            case .conditional:
                guard #available(iOS 18.0, macOS 15.0, visionOS 2.0, *) else {
                    throw LatchkeyError(.invalidConfiguration, "the automatic passkey upgrade needs iOS 18, macOS 15 or visionOS 2")
                }
                request = provider.createCredentialRegistrationRequest(
                    challenge: options.challenge, name: options.userName, userID: options.userID, requestStyle: .conditional)
            }
            request.displayName = options.userDisplayName
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: options.userVerification)
            #if !os(visionOS)
                if #available(iOS 17.4, macOS 13.5, *) {
                    request.excludedCredentials = options.excludedCredentialIDs.map {
                        ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
                    }
                }
            #endif
            return [request]
        }
        guard case .passkeyRegistration(let registration) = credential else {
            throw LatchkeyError(.invalidResponse, "the passkey request returned no registration (or no attestation object)")
        }
        return registration
    }

    /// Signs in with `createCredentialAssertionRequest(challenge:)`, limited to
    /// ``PasskeyAssertionOptions/allowedCredentialIDs`` when the server named any;
    /// ``PasskeyRequestStyle/conditional`` is `performAutoFillAssistedRequests()` (iOS and
    /// visionOS; on macOS it throws ``LatchkeyError/Code/invalidConfiguration``).
    public func getAssertion(_ options: PasskeyAssertionOptions, style: PasskeyRequestStyle) async throws -> PasskeyAssertion {
        #if os(macOS)
            if style == .conditional {
                throw LatchkeyError(.invalidConfiguration, "passkey AutoFill is not available on macOS; sign in with signInWithPasskey")
            }
        #endif
        let credential = try await perform(presentation: style == .conditional ? .autoFill : .modal) {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.relyingPartyID)
            let request = provider.createCredentialAssertionRequest(challenge: options.challenge)
            request.allowedCredentials = options.allowedCredentialIDs.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: options.userVerification)
            return [request]
        }
        guard case .passkeyAssertion(let assertion) = credential else {
            throw LatchkeyError(.invalidResponse, "the passkey request returned no assertion")
        }
        return assertion
    }

    /// Builds the requests and runs them on the main actor, where Apple's controller lives,
    /// turning the errors an app handles into ``LatchkeyError``.
    @MainActor
    private func perform(
        presentation: AuthorizationBridge.Presentation, _ requests: @MainActor () throws -> [ASAuthorizationRequest]
    ) async throws -> AuthorizedCredential {
        do {
            return try await AuthorizationBridge(anchor: anchor).perform(try requests(), presentation: presentation)
        } catch let error as ASAuthorizationError {
            if error.code == .canceled { throw LatchkeyError(.canceled, "the user dismissed the passkey request") }
            if #available(iOS 18.0, macOS 15.0, visionOS 2.0, *), error.code == .matchedExcludedCredential {
                throw LatchkeyError(.passkeyAlreadyRegistered, "the passkey manager holds a passkey of this account already")
            }
            throw error
        }
    }
}
#endif
