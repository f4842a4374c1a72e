import LatchkeyWire

/// Passkeys (docs/reference.md, "Passkeys"): registration for the signed-in account, the
/// account's list, sign-in with and without a username (AutoFill), sign-up, the passkey as a
/// second factor, and the automatic upgrade of a password account. The server's WebAuthn options
/// go to a ``PasskeyAuthenticator`` (on Apple platforms `PlatformPasskeyAuthenticator`), and what
/// it makes goes back as the WebAuthn response JSON.
extension LatchkeyClient {
    // MARK: The signed-in account's passkeys

    /// Creates a passkey for the signed-in account and registers it.
    ///
    /// - Parameters:
    ///   - name: what the account's list calls it (the server says `Passkey` when absent).
    ///   - authenticator: makes the passkey.
    /// - Returns: The registered passkey.
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/passkeyAlreadyRegistered`` when this
    ///   device's passkey manager holds one of the account's passkeys already,
    ///   ``LatchkeyError/Code/canceled`` when the user dismissed the sheet; `invalid_grant` with a
    ///   ``LatchkeyError/reason`` (`user_not_verified`, `origin_mismatch`, …) when the server
    ///   refused the registration; `not_found` when the server has no passkeys (no RP ID).
    public func registerPasskey(name: String? = nil, using authenticator: some PasskeyAuthenticator) async throws -> Passkey {
        guard let passkey = try await registerPasskey(name: name, style: .standard, authenticator) else {
            throw LatchkeyError(.canceled, "the passkey was not created")
        }
        return passkey
    }

    /// The automatic passkey upgrade (iOS 18, macOS 15): right after a password sign-in, asks the
    /// passkey manager to add a passkey to the account without a sheet. The manager decides: when
    /// the user just used a saved password for this account and has no passkey for it yet, it
    /// creates one and shows a notification; otherwise it declines, silently.
    ///
    /// - Returns: The registered passkey, or `nil` when the passkey manager declined (the call is
    ///   then free to try again at the next password sign-in).
    /// - Throws: ``LatchkeyError`` from the server only (a refused registration, no session).
    public func upgradeToPasskey(name: String? = nil, using authenticator: some PasskeyAuthenticator) async throws -> Passkey? {
        try await registerPasskey(name: name, style: .conditional, authenticator)
    }

    /// The account's passkeys, oldest first.
    public func passkeys() async throws -> [Passkey] {
        try await authorized("GET", "/v1/passkeys", as: WirePasskeyList.self).passkeys.map(Passkey.init)
    }

    /// Renames one of the account's passkeys.
    ///
    /// - Returns: The passkey with its new name.
    /// - Throws: ``LatchkeyError``: `not_found` for a passkey that is not the account's;
    ///   `invalid_request` for an empty or over-long name.
    public func renamePasskey(_ id: String, to name: String) async throws -> Passkey {
        Passkey(try await authorized("PATCH", "/v1/passkeys/\(Self.pathSegment(id))", WirePasskeyRename(name: name), as: WirePasskey.self))
    }

    /// Removes one of the account's passkeys at the server (the passkey manager keeps its copy
    /// until the user deletes it there; it no longer signs in).
    ///
    /// - Throws: ``LatchkeyError``: `insufficient_authentication` unless this session signed in
    ///   or proved a second factor in the last five minutes (sign in again first); `conflict` when
    ///   it is the account's last way to sign in (no password, no Apple ID, no other passkey);
    ///   `not_found` for a passkey that is not the account's.
    public func removePasskey(_ id: String) async throws {
        _ = try await authorizedSend("DELETE", "/v1/passkeys/\(Self.pathSegment(id))")
    }

    // MARK: Sign-in and sign-up

    /// Signs in with a passkey: any of this relying party's passkeys without a username (the
    /// passkey names the account), or that account's with one.
    ///
    /// - Returns: ``SignInResult/signedIn(_:)``; a passkey is itself two factors (the device and
    ///   the user's face or passcode), so the server never asks for a second factor after it.
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/canceled``, ``LatchkeyError/Code/noPasskey``
    ///   from the authenticator; `invalid_grant` with a ``LatchkeyError/reason`` (`unknown_credential`
    ///   for a passkey the account no longer has, `bad_signature`, `cloned_authenticator`, …).
    public func signInWithPasskey(username: String? = nil, using authenticator: some PasskeyAuthenticator) async throws -> SignInResult {
        try await passkeySignIn(username: username, style: .standard, authenticator)
    }

    /// Offers the device's passkeys in AutoFill: start it when the sign-in screen appears, with a
    /// username field whose text content type is `.username`; the passkeys show in the QuickType
    /// bar, and this call returns once the user picks one and the server signed them in.
    ///
    /// Cancel the task when the screen goes away or the user signs in another way: the request
    /// then ends with ``LatchkeyError/Code/canceled``. Nothing is shown when the device has no
    /// passkey for the app.
    ///
    /// - Returns: as ``signInWithPasskey(username:using:)``.
    /// - Throws: as ``signInWithPasskey(username:using:)``.
    public func beginAutoFillPasskeySignIn(using authenticator: some PasskeyAuthenticator) async throws -> SignInResult {
        try await passkeySignIn(username: nil, style: .conditional, authenticator)
    }

    /// Creates an account with a passkey and no password, and signs it in.
    ///
    /// - Parameters:
    ///   - username: the account's username (an email address), also what the passkey manager
    ///     lists the passkey under; `nil` for an account without one.
    /// - Returns: ``SignInResult/signedIn(_:)`` with the new account.
    /// - Throws: ``LatchkeyError``: `conflict` when the username is taken;
    ///   ``LatchkeyError/Code/canceled`` from the authenticator; `invalid_grant` with a reason.
    public func signUpWithPasskey(
        username: String? = nil, givenName: String? = nil, familyName: String? = nil, using authenticator: some PasskeyAuthenticator
    ) async throws -> SignInResult {
        let options = try await call(
            "POST", "/v1/auth/passkey/signup/options",
            WirePasskeySignUpOptionsRequest(username: username, givenName: givenName, familyName: familyName), as: WirePasskeyOptions.self)
        let registration = try await Self.authenticate { try await authenticator.makeCredential(try PasskeyCreationOptions(json: options.publicKey), style: .standard) }
        return try await firstFactor("/v1/auth/passkey/signup", WirePasskeyAnswer(flowID: options.flowID, credential: registration.json), appleUserID: nil)
    }

    // MARK: Internals

    /// The second factor of ``completeSignIn(_:with:)``: options for the challenge's account, the
    /// assertion, and `/v1/mfa/verify`'s request.
    func passkeyProof(_ challenge: MFAChallenge, _ authenticator: any PasskeyAuthenticator) async throws -> WireMFAVerifyRequest {
        let options = try await call(
            "POST", "/v1/mfa/passkey/options", WireMFAPasskeyOptionsRequest(mfaToken: challenge.mfaToken), as: WirePasskeyOptions.self)
        let assertion = try await Self.authenticate { try await authenticator.getAssertion(try PasskeyAssertionOptions(json: options.publicKey), style: .standard) }
        return .passkey(mfaToken: challenge.mfaToken, flowID: options.flowID, credential: assertion.json)
    }

    private func passkeySignIn(username: String?, style: PasskeyRequestStyle, _ authenticator: some PasskeyAuthenticator) async throws -> SignInResult {
        let options = try await call("POST", "/v1/auth/passkey/options", WirePasskeySignInOptionsRequest(username: username), as: WirePasskeyOptions.self)
        let assertion = try await Self.authenticate { try await authenticator.getAssertion(try PasskeyAssertionOptions(json: options.publicKey), style: style) }
        return try await firstFactor("/v1/auth/passkey", WirePasskeyAnswer(flowID: options.flowID, credential: assertion.json), appleUserID: nil)
    }

    /// A registration; `nil` when a conditional one was declined by the passkey manager.
    private func registerPasskey(name: String?, style: PasskeyRequestStyle, _ authenticator: some PasskeyAuthenticator) async throws -> Passkey? {
        let request = WirePasskeyOptionsRequest(mediation: style == .conditional ? "conditional" : nil)
        let options = try await authorized("POST", "/v1/passkeys/registration/options", request, as: WirePasskeyOptions.self)
        let creation = try PasskeyCreationOptions(json: options.publicKey)
        let registration: PasskeyRegistration
        do {
            registration = try await Self.authenticate { try await authenticator.makeCredential(creation, style: style) }
        } catch where style == .conditional {
            // Declining is the passkey manager's call, and never shown: the account stays as it is.
            return nil
        }
        let body = WirePasskeyRegistration(flowID: options.flowID, credential: registration.json, name: name)
        return Passkey(try await authorized("POST", "/v1/passkeys", body, as: WirePasskey.self))
    }

    /// Runs an authenticator's request; a cancelled task is ``LatchkeyError/Code/canceled``, as a
    /// dismissed sheet is.
    private static func authenticate<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch is CancellationError {
            throw LatchkeyError(.canceled, "the passkey request was cancelled")
        }
    }

    /// `id` as one path segment: everything but RFC 3986's unreserved characters percent-encoded
    /// (`/` among them), so an id can never reach another path.
    private static func pathSegment(_ id: String) -> String {
        FormEncoding.percentEncode(id)
    }
}
