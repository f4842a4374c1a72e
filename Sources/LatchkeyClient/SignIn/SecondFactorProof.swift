/// The proof of a second factor, for ``LatchkeyClient/completeSignIn(_:with:)``.
public enum SecondFactorProof: Sendable {
    /// A device key, by its server id (from ``MFAChallenge/factors``): the SDK fetches a challenge
    /// and has the key sign it.
    case deviceKey(id: String, key: any DeviceKey)
    /// A code from the user's authenticator app.
    case totp(code: String)
    /// One of the recovery codes; each works once.
    case recoveryCode(String)
    /// One of the account's passkeys (``SecondFactor/passkey``): the SDK fetches the options for
    /// the challenge's account and has `authenticator` sign them.
    case passkey(any PasskeyAuthenticator)
}
