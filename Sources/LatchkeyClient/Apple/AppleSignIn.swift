#if canImport(AuthenticationServices) && !os(watchOS)
public import AuthenticationServices
import Foundation

/// How a Sign in with Apple sheet ended. Dismissing the sheet, or finding nothing to offer in the
/// existing-account flow, is an outcome to show the normal sign-in screen for, not an error.
public enum AppleSignInOutcome: Sendable {
    /// The user chose a credential and the server answered: signed in, or a second factor is due.
    case completed(SignInResult)
    /// The user dismissed the sheet (`ASAuthorizationError.canceled`).
    case canceled
    /// Nothing could be offered without showing UI (`ASAuthorizationError.notInteractive`, the
    /// existing-account flow when the device holds no credential for the app).
    case notInteractive
}

/// Sign in with Apple for a ``LatchkeyClient``: builds the request (scopes, and the SHA-256 of a
/// fresh nonce whose raw value goes to the server), shows Apple's sheet over an anchor, and hands
/// the credential to ``LatchkeyClient/signInWithApple(_:)``. Replaces the seed's
/// `ASAuthorizationController` + delegate + "send identityToken to your server" code.
@MainActor
public final class AppleSignIn {
    /// The client the credentials go to.
    public let client: LatchkeyClient
    /// What to ask Apple to share on the first authorization (default: name and email).
    public var scopes: [ASAuthorization.Scope]
    /// Whether a sign-in with a saved password picked in the existing-account flow is followed by
    /// the automatic passkey upgrade (``LatchkeyClient/upgradeToPasskey(name:using:)``; iOS 18,
    /// macOS 15, visionOS 2), in which the passkey manager may add a passkey to the account without
    /// a sheet. Default `true`; the upgrade never fails the sign-in.
    public var upgradesPasswordsToPasskeys = true
    private let makeNonce: @Sendable () -> (raw: String, sha256: String)

    /// A helper for `client`.
    ///
    /// - Parameters:
    ///   - scopes: what to ask Apple to share on the first authorization.
    ///   - makeNonce: the nonce source (``Nonce/make()``); injected so that tests can fix it.
    public init(
        client: LatchkeyClient, scopes: [ASAuthorization.Scope] = [.fullName, .email],
        makeNonce: @escaping @Sendable () -> (raw: String, sha256: String) = { Nonce.make() }
    ) {
        self.client = client
        self.scopes = scopes
        self.makeNonce = makeNonce
    }

    /// Shows the Sign in with Apple sheet over `anchor` and signs in with the credential.
    ///
    /// - Returns: ``AppleSignInOutcome/completed(_:)``, or ``AppleSignInOutcome/canceled``.
    /// - Throws: ``LatchkeyError`` from the server, or Apple's error for a failed authorization.
    public func signIn(presentingFrom anchor: ASPresentationAnchor) async throws -> AppleSignInOutcome {
        let nonce = makeNonce()
        let request = ASAuthorizationAppleIDProvider().createRequest()
        request.requestedScopes = scopes
        request.nonce = nonce.sha256
        return try await run([request], rawNonce: nonce.raw, anchor: anchor, preferImmediatelyAvailable: false)
    }

    /// The existing-account flow for launch: offers the Apple ID and the saved passwords the
    /// device already holds for this app (`.preferImmediatelyAvailableCredentials`), and signs in
    /// with whichever the user picks: an Apple ID through ``LatchkeyClient/signInWithApple(_:)``,
    /// an `ASPasswordCredential` through ``LatchkeyClient/signIn(username:password:)``.
    ///
    /// - Returns: ``AppleSignInOutcome/notInteractive`` when there is nothing to offer; show the
    ///   normal sign-in screen then.
    /// - Throws: ``LatchkeyError`` from the server, or Apple's error for a failed authorization.
    @available(tvOS, unavailable)
    public func signInWithExistingAccount(presentingFrom anchor: ASPresentationAnchor) async throws -> AppleSignInOutcome {
        let nonce = makeNonce()
        let appleID = ASAuthorizationAppleIDProvider().createRequest()
        appleID.nonce = nonce.sha256
        let password = ASAuthorizationPasswordProvider().createRequest()
        return try await run([appleID, password], rawNonce: nonce.raw, anchor: anchor, preferImmediatelyAvailable: true)
    }

    private func run(
        _ requests: [ASAuthorizationRequest], rawNonce: String, anchor: ASPresentationAnchor, preferImmediatelyAvailable: Bool
    ) async throws -> AppleSignInOutcome {
        let credential: AuthorizedCredential
        do {
            let bridge = AuthorizationBridge(anchor: anchor)
            credential = try await bridge.perform(requests, presentation: preferImmediatelyAvailable ? .immediatelyAvailable : .modal)
        } catch let error as ASAuthorizationError {
            if error.code == .canceled { return .canceled }
            #if !os(tvOS)
                if error.code == .notInteractive { return .notInteractive }
            #endif
            throw error
        }
        switch credential {
        case .appleID(let fields):
            return .completed(try await client.signInWithApple(try AppleCredential(fields, rawNonce: rawNonce)))
        case .password(let user, let password):
            let result = try await client.signIn(username: user, password: password)
            #if !os(tvOS)
                if upgradesPasswordsToPasskeys, case .signedIn = result {
                    if #available(iOS 18.0, macOS 15.0, visionOS 2.0, *) {
                        // Declined or refused, the user is signed in all the same.
                        _ = try? await client.upgradeToPasskey(using: PlatformPasskeyAuthenticator(anchor: anchor))
                    }
                }
            #endif
            return .completed(result)
        case .passkeyRegistration, .passkeyAssertion, .unsupported:
            throw LatchkeyError(.invalidResponse, "the authorization sheet returned a credential this SDK does not handle")
        }
    }
}

extension AppleCredential {
    /// What Apple's credential carries, as the server wants it: the identity token and the
    /// authorization code as UTF-8 text, the raw nonce whose hash was in the request, and the name
    /// and email when Apple shared them (the first authorization only). For apps that run
    /// Apple's sheet themselves (SwiftUI's `SignInWithAppleButton`); ``AppleSignIn`` does this.
    ///
    /// - Throws: ``LatchkeyError`` when Apple returned no identity token.
    public init(_ credential: ASAuthorizationAppleIDCredential, rawNonce: String) throws {
        guard case .appleID(let fields) = AuthorizedCredential(credential) else {
            throw LatchkeyError(.invalidResponse, "not a Sign in with Apple credential")
        }
        try self.init(fields, rawNonce: rawNonce)
    }
}
#endif
