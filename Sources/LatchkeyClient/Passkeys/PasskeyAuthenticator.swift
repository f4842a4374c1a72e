/// What makes and uses passkeys for the SDK: the platform's passkey manager on Apple platforms
/// (`PlatformPasskeyAuthenticator`, over `ASAuthorizationPlatformPublicKeyCredentialProvider`), a
/// software authenticator in tests and on Linux.
///
/// The SDK reads the server's WebAuthn options (``PasskeyCreationOptions``,
/// ``PasskeyAssertionOptions``, each keeping the JSON it came from), hands them to the
/// authenticator, and sends what it answers back as the WebAuthn Level 3 response JSON
/// (``PasskeyRegistration/json``, ``PasskeyAssertion/json``), so an authenticator only deals in
/// bytes.
public protocol PasskeyAuthenticator: Sendable {
    /// Creates a passkey (WebAuthn `navigator.credentials.create`).
    ///
    /// - Parameters:
    ///   - options: the server's `PublicKeyCredentialCreationOptionsJSON`, read.
    ///   - style: ``PasskeyRequestStyle/standard`` for a registration the user takes part in;
    ///     ``PasskeyRequestStyle/conditional`` for the automatic upgrade after a password
    ///     sign-in, which the passkey manager may decline without showing anything.
    /// - Returns: The new credential's bytes.
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/canceled`` when the user dismissed the
    ///   request, ``LatchkeyError/Code/passkeyAlreadyRegistered`` when the authenticator holds
    ///   one of ``PasskeyCreationOptions/excludedCredentialIDs``; for a conditional request, any
    ///   error when the passkey manager declines (the SDK then leaves the account as it is).
    func makeCredential(_ options: PasskeyCreationOptions, style: PasskeyRequestStyle) async throws -> PasskeyRegistration

    /// Signs the server's challenge with a passkey (WebAuthn `navigator.credentials.get`).
    ///
    /// - Parameters:
    ///   - options: the server's `PublicKeyCredentialRequestOptionsJSON`, read. An empty
    ///     ``PasskeyAssertionOptions/allowedCredentialIDs`` lets the user pick any passkey of the
    ///     relying party (a discoverable credential).
    ///   - style: ``PasskeyRequestStyle/standard`` for a sheet; ``PasskeyRequestStyle/conditional``
    ///     for AutoFill: the passkeys are offered in the QuickType bar of a username field and
    ///     the call returns when the user picks one.
    /// - Returns: The assertion's bytes.
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/canceled`` when the user dismissed the
    ///   request (or the task was cancelled), ``LatchkeyError/Code/noPasskey`` when the
    ///   authenticator has no passkey the options allow.
    func getAssertion(_ options: PasskeyAssertionOptions, style: PasskeyRequestStyle) async throws -> PasskeyAssertion
}

/// How a passkey request is presented.
public enum PasskeyRequestStyle: Sendable, Hashable {
    /// A sheet the user answers (Face ID, Touch ID or the device passcode).
    case standard
    /// Without a sheet of its own: for a registration, the automatic upgrade of a password account
    /// (iOS 18, macOS 15); for a sign-in, AutoFill (`performAutoFillAssistedRequests()`).
    case conditional
}
