#if canImport(AuthenticationServices) && !os(tvOS) && !os(watchOS)
public import AuthenticationServices
import Foundation

extension LatchkeyClient {
    /// Web sign-in in one call: opens the server's sign-in page in an `ASWebAuthenticationSession`
    /// over `anchor`, and signs in with the callback (PKCE `S256`, `state`, `iss`; see
    /// ``completeWebSignIn(_:callbackURL:)``). Needs ``LatchkeyConfiguration/clientID``.
    ///
    /// The callback is an `https` one (`.https(host:path:)`, iOS 17.4 / macOS 14.4, the host an
    /// associated `webcredentials:` domain) for an `https` redirect URI, else the redirect URI's
    /// reverse-DNS custom scheme.
    ///
    /// - Parameters:
    ///   - redirectURI: a redirect URI registered for the client, exactly as registered.
    ///   - prefersEphemeralWebBrowserSession: share no cookies with Safari (default): no prompt
    ///     asking to use the server's domain, and the user signs in on the page every time.
    /// - Throws: ``LatchkeyError/Code/canceled`` when the user closes the page (or declines);
    ///   ``LatchkeyError/Code/invalidConfiguration`` for an `https` redirect URI on an older OS, or
    ///   one with neither `https` nor a reverse-DNS scheme; as ``completeWebSignIn(_:callbackURL:)``.
    public nonisolated func signInWithWeb(
        redirectURI: String, anchor: ASPresentationAnchor, prefersEphemeralWebBrowserSession: Bool = true,
        scopes: [String] = ["openid", "profile", "email"], prompt: String? = nil, loginHint: String? = nil
    ) async throws -> Session {
        try await signInWithWeb(redirectURI: redirectURI, scopes: scopes, prompt: prompt, loginHint: loginHint) { request in
            try await WebAuthenticationSessionRun(anchor: anchor).perform(request, ephemeral: prefersEphemeralWebBrowserSession)
        }
    }

    /// Signs in through an upstream provider in one call (docs/providers.md): opens
    /// `/oauth/authorize` with `provider=<id>` in an `ASWebAuthenticationSession` over `anchor`,
    /// so the server sends the browser straight to the provider's sign-in, and signs in with the
    /// callback as ``signInWithWeb(redirectURI:anchor:prefersEphemeralWebBrowserSession:scopes:prompt:loginHint:)``
    /// does. Needs ``LatchkeyConfiguration/clientID``.
    ///
    /// - Parameters:
    ///   - provider: the provider's id in the server's `providers` (`google`, `github`; `sandbox`
    ///     on the development server).
    ///   - redirectURI: a redirect URI registered for the client, exactly as registered.
    ///   - prefersEphemeralWebBrowserSession: share no cookies with Safari (default), so the user
    ///     signs in at the provider every time and iOS asks nothing first.
    /// - Throws: ``LatchkeyError/Code/invalidConfiguration`` for a provider id that is not
    ///   `[a-z0-9-]{1,32}`; ``LatchkeyError/Code/canceled`` when the user closes the page or says
    ///   no at the provider; as ``signIn(with:redirectURI:scopes:loginHint:browser:)``.
    public nonisolated func signIn(
        with provider: String, redirectURI: String, presentingFrom anchor: ASPresentationAnchor,
        prefersEphemeralWebBrowserSession: Bool = true, scopes: [String] = ["openid", "profile", "email"], loginHint: String? = nil
    ) async throws -> Session {
        try await signIn(with: provider, redirectURI: redirectURI, scopes: scopes, loginHint: loginHint) { request in
            try await WebAuthenticationSessionRun(anchor: anchor).perform(request, ephemeral: prefersEphemeralWebBrowserSession)
        }
    }

    /// Links an upstream provider's identity to the signed-in account
    /// (``link(provider:redirectURI:scopes:browser:)``) in an `ASWebAuthenticationSession` over
    /// `anchor`: `prompt=login` and `provider=<id>`; the answer must be for the signed-in user.
    ///
    /// - Throws: ``LatchkeyError/Code/notSignedIn``; ``LatchkeyError/Code/identityNotLinked``
    ///   when the browser ended signed in to another account (the session is kept);
    ///   ``LatchkeyError/Code/canceled`` when the user closes the page; as
    ///   ``signIn(with:redirectURI:presentingFrom:prefersEphemeralWebBrowserSession:scopes:loginHint:)``.
    public nonisolated func link(
        provider: String, redirectURI: String, presentingFrom anchor: ASPresentationAnchor,
        prefersEphemeralWebBrowserSession: Bool = true, scopes: [String] = ["openid", "profile", "email"]
    ) async throws -> Session {
        try await link(provider: provider, redirectURI: redirectURI, scopes: scopes) { request in
            try await WebAuthenticationSessionRun(anchor: anchor).perform(request, ephemeral: prefersEphemeralWebBrowserSession)
        }
    }
}

/// One `ASWebAuthenticationSession` as one `async` call: its presentation provider, resuming a
/// checked continuation exactly once. Cancelling the awaiting task cancels the session.
@MainActor
final class WebAuthenticationSessionRun: NSObject, ASWebAuthenticationPresentationContextProviding {
    private nonisolated let anchor: ASPresentationAnchor
    private var session: ASWebAuthenticationSession?
    private var continuation: CheckedContinuation<URL, any Error>?

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// Opens `request.url` and returns the callback URL the session ended at.
    ///
    /// - Throws: ``LatchkeyError/Code/canceled`` (`.canceledLogin`, or the task was canceled);
    ///   ``LatchkeyError/Code/invalidConfiguration`` when the callback cannot be matched here or
    ///   the session does not start; Apple's other errors as they are.
    func perform(_ request: WebSignInRequest, ephemeral: Bool) async throws -> URL {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                self.continuation = continuation
                let completion: ASWebAuthenticationSession.CompletionHandler = { @Sendable url, error in
                    Task { @MainActor in self.finish(url: url, error: error) }
                }
                let session: ASWebAuthenticationSession
                switch request.callback {
                case .https(let host, let path)?:
                    guard #available(iOS 17.4, macOS 14.4, visionOS 1.1, *) else {
                        return fail(LatchkeyError(.invalidConfiguration, "an https redirect URI needs iOS 17.4 or macOS 14.4; use a custom scheme"))
                    }
                    session = ASWebAuthenticationSession(url: request.url, callback: .https(host: host, path: path), completionHandler: completion)
                case .customScheme(let scheme)?:
                    if #available(iOS 17.4, macOS 14.4, visionOS 1.1, *) {
                        session = ASWebAuthenticationSession(url: request.url, callback: .customScheme(scheme), completionHandler: completion)
                    } else {
                        session = ASWebAuthenticationSession(url: request.url, callbackURLScheme: scheme, completionHandler: completion)
                    }
                case nil:
                    return fail(LatchkeyError(.invalidConfiguration, "the redirect URI needs https or a reverse-DNS custom scheme"))
                }
                session.presentationContextProvider = self
                session.prefersEphemeralWebBrowserSession = ephemeral
                self.session = session
                if !session.start() {
                    fail(LatchkeyError(.invalidConfiguration, "the web authentication session did not start (no window, or one already open)"))
                }
            }
        } onCancel: {
            Task { @MainActor in self.cancel() }
        }
    }

    nonisolated func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        anchor
    }

    private func cancel() {
        session?.cancel()
        fail(LatchkeyError(.canceled, "the sign-in was canceled"))
    }

    private func fail(_ error: LatchkeyError) {
        finish(url: nil, error: error)
    }

    /// Resumes the caller once: the callback URL, a cancel, or the session's error.
    private func finish(url: URL?, error: (any Error)?) {
        guard let continuation else { return }
        self.continuation = nil
        session = nil
        if let url {
            continuation.resume(returning: url)
        } else if let error = error as? ASWebAuthenticationSessionError, error.code == .canceledLogin {
            continuation.resume(throwing: LatchkeyError(.canceled, "the user closed the sign-in page"))
        } else {
            continuation.resume(throwing: error ?? LatchkeyError(.invalidResponse, "the web authentication session ended without a callback"))
        }
    }
}
#endif
