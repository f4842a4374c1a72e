import LatchkeyStore

/// Every audit event the server writes (docs/security.md S27). docs/reference.md lists them by
/// endpoint; `latchkey audit --event NAME` filters on the raw value.
extension AuditEvent {
    // Accounts
    static let accountUpdated = AuditEvent(rawValue: "account.updated")
    static let accountDeleted = AuditEvent(rawValue: "account.deleted")
    /// An operator or an admin disabled the account (`actor`, `sessions_ended`); its sessions
    /// ended in the same transaction (S51).
    static let accountDisabled = AuditEvent(rawValue: "account.disabled")
    /// An operator or an admin enabled a disabled account again (`actor`).
    static let accountEnabled = AuditEvent(rawValue: "account.enabled")

    // Sessions
    static let sessionCreated = AuditEvent(rawValue: "session.created")
    static let sessionRefreshed = AuditEvent(rawValue: "session.refreshed")
    static let sessionReuseDetected = AuditEvent(rawValue: "session.reuse_detected")
    /// A just-rotated refresh token came back within the reuse grace and got its unused
    /// successor again (S8).
    static let sessionRefreshReplayed = AuditEvent(rawValue: "session.refresh_replayed")
    static let sessionExpired = AuditEvent(rawValue: "session.expired")
    static let sessionRevoked = AuditEvent(rawValue: "session.revoked")
    /// A refresh of a DPoP-bound session without a proof by its key (details `reason`:
    /// `missing` or `other_key`); nothing rotates (S41).
    static let sessionDPoPRefused = AuditEvent(rawValue: "session.dpop_refused")
    /// A DPoP proof presented again: its `jti` was already spent for its key (S41).
    static let dpopProofReplayed = AuditEvent(rawValue: "dpop.proof_replayed")

    // The OAuth provider
    static let oauthCodeIssued = AuditEvent(rawValue: "oauth.code_issued")
    static let oauthCodeExchanged = AuditEvent(rawValue: "oauth.code_exchanged")
    /// An authorization code presented again: what its first exchange issued is revoked (S22).
    static let oauthCodeReplayed = AuditEvent(rawValue: "oauth.code_replayed")
    static let oauthClientCredentials = AuditEvent(rawValue: "oauth.client_credentials")

    // The device authorization grant (RFC 8628)
    /// A device asked for a device code and a user code (`client_id`, `scope`).
    static let deviceGrantIssued = AuditEvent(rawValue: "device_grant.issued")
    /// A wrong user code typed on `/device` (`failures`: in the address's window), or a refused
    /// one after too many (`rate_limited`) (S45).
    static let deviceGrantCodeFailed = AuditEvent(rawValue: "device_grant.code_failed")
    /// The signed-in user allowed a device on the consent page (`client_id`, `scope`).
    static let deviceGrantApproved = AuditEvent(rawValue: "device_grant.approved")
    /// The signed-in user denied a device on the consent page (`client_id`, `scope`).
    static let deviceGrantDenied = AuditEvent(rawValue: "device_grant.denied")
    /// The device got its tokens, once (`client_id`, `session_id`).
    static let deviceGrantRedeemed = AuditEvent(rawValue: "device_grant.redeemed")

    // Browser sessions of the hosted pages
    static let browserSessionStarted = AuditEvent(rawValue: "browser_session.started")
    /// Signed out on a hosted page, or ended with all of the user's sessions.
    static let browserSessionEnded = AuditEvent(rawValue: "browser_session.ended")

    // Passwords
    static let passwordSignUp = AuditEvent(rawValue: "password.signup")
    static let passwordLogin = AuditEvent(rawValue: "password.login")
    /// An attempt to change the password (failed or rate limited); a success is ``passwordChanged``.
    static let passwordChange = AuditEvent(rawValue: "password.change")
    static let passwordChanged = AuditEvent(rawValue: "password.changed")
    static let passwordSetByOperator = AuditEvent(rawValue: "password.set_by_operator")
    static let passwordLockoutLifted = AuditEvent(rawValue: "password.lockout_lifted")
    /// A password set through a mailed reset (every session ended).
    static let passwordReset = AuditEvent(rawValue: "password.reset")
    /// A mailed link-and-code asked for (`purpose`); also for addresses with no account.
    static let emailRequested = AuditEvent(rawValue: "email.requested")
    /// A wrong or spent link or code (`purpose`, `reason`).
    static let emailFailed = AuditEvent(rawValue: "email.failed")
    static let emailVerified = AuditEvent(rawValue: "email.verified")
    /// An account moved to a new address; details hold both addresses' SHA-256, not the addresses.
    static let emailChanged = AuditEvent(rawValue: "email.changed")
    /// A message the outbox gave up on (a permanent refusal, or 24 hours of failures).
    static let emailBounced = AuditEvent(rawValue: "email.bounced")

    // Sign in with Apple
    /// A sign-in by a method without an event of its own (Apple), or its failure.
    static let signIn = AuditEvent(rawValue: "sign_in")
    /// An Apple sign-in that moved an account over from a team transfer.
    static let signInTransferLinked = AuditEvent(rawValue: "sign_in.transfer_linked")
    /// A sign-in through an upstream provider: details `provider`, and `created` on success or
    /// the failed check's `reason` (docs/providers.md).
    static let signInProvider = AuditEvent(rawValue: "sign_in.provider")
    /// An upstream identity linked to an account: details `provider` and `via` (`email`,
    /// `session`, `sign_in`).
    static let identityLinked = AuditEvent(rawValue: "identity.linked")
    /// An upstream identity removed from an account: details `provider`.
    static let identityUnlinked = AuditEvent(rawValue: "identity.unlinked")
    static let appleNotification = AuditEvent(rawValue: "apple.notification")
    static let appleConsentRevoked = AuditEvent(rawValue: "apple.consent_revoked")
    static let appleTokenRevoked = AuditEvent(rawValue: "apple.token_revoked")
    static let appleTransfersImported = AuditEvent(rawValue: "apple.transfers_imported")

    // Second factors
    static let mfaRequired = AuditEvent(rawValue: "mfa.required")
    static let mfaRateLimited = AuditEvent(rawValue: "mfa.rate_limited")
    static let mfaEnded = AuditEvent(rawValue: "mfa.ended")
    static let deviceKeyAdded = AuditEvent(rawValue: "device_key.added")
    static let deviceKeyUsed = AuditEvent(rawValue: "device_key.used")
    static let deviceKeyFailed = AuditEvent(rawValue: "device_key.failed")
    static let deviceKeyRemoved = AuditEvent(rawValue: "device_key.removed")
    static let totpStarted = AuditEvent(rawValue: "totp.started")
    static let totpAdded = AuditEvent(rawValue: "totp.added")
    static let totpUsed = AuditEvent(rawValue: "totp.used")
    static let totpFailed = AuditEvent(rawValue: "totp.failed")
    static let totpRemoved = AuditEvent(rawValue: "totp.removed")
    static let recoveryCodeUsed = AuditEvent(rawValue: "recovery_code.used")
    static let recoveryCodeFailed = AuditEvent(rawValue: "recovery_code.failed")

    // Passkeys
    /// A passkey registered to a signed-in account (`passkey_id`, `aaguid`, `backed_up`).
    static let passkeyRegistered = AuditEvent(rawValue: "passkey.registered")
    /// A refused registration (`reason`: the failed check); its flow is spent, nothing stored.
    static let passkeyRegistrationFailed = AuditEvent(rawValue: "passkey.registration_failed")
    /// An account created with a passkey and no password (`passkey_id`, `aaguid`, `backed_up`).
    static let passkeySignUp = AuditEvent(rawValue: "passkey.sign_up")
    /// A verified assertion (`use`: `sign_in` or `mfa`; `passkey_id`, `backed_up`, and
    /// `backup_eligible_changed` when BE differs from registration's).
    static let passkeyUsed = AuditEvent(rawValue: "passkey.used")
    /// A refused assertion (`use`, `reason`: the failed check, `cloned_authenticator` for a sign
    /// count that went back); its flow is spent.
    static let passkeyFailed = AuditEvent(rawValue: "passkey.failed")
    static let passkeyRenamed = AuditEvent(rawValue: "passkey.renamed")
    static let passkeyRemoved = AuditEvent(rawValue: "passkey.removed")

    // App Attest
    /// A key attested and stored (`key_id`, `app_id`, `environment`).
    static let appAttestKeyAttested = AuditEvent(rawValue: "app_attest.key_attested")
    /// A refused attestation (`reason`: the failed check; `key_id` when it decoded); its
    /// challenge is spent, nothing stored.
    static let appAttestKeyRefused = AuditEvent(rawValue: "app_attest.key_refused")
    /// A refused assertion (`reason`, `key_id`); its challenge is spent, no token issued.
    static let appAttestAssertionRefused = AuditEvent(rawValue: "app_attest.assertion_refused")
    /// An endpoint under `app_attest.enforce` got no valid app check token (`endpoint`,
    /// `reason`); outcome `failure` when refused, `logged` in `log` mode.
    static let appCheckFailed = AuditEvent(rawValue: "app_check.failed")

    // OAuth clients and consent
    /// An operator registered an OAuth client (`latchkey clients add`).
    static let clientRegistered = AuditEvent(rawValue: "client.registered")
    /// An operator removed an OAuth client; its sessions, codes and consents went with it.
    static let clientRemoved = AuditEvent(rawValue: "client.removed")
    /// An admin changed a client's name, redirect URIs or scopes (`fields`).
    static let clientUpdated = AuditEvent(rawValue: "client.updated")
    /// An operator gave a confidential client a new secret; the old one stopped working.
    static let clientSecretRotated = AuditEvent(rawValue: "client.secret_rotated")
    /// A user consented to scopes for a third-party client.
    static let consentGranted = AuditEvent(rawValue: "consent.granted")
    /// A user withdrew their consent to a client; that client's sessions of theirs ended.
    static let consentWithdrawn = AuditEvent(rawValue: "consent.withdrawn")

    /// A new signing key was published (`kid`, `algorithm`); it signs after the activation delay.
    static let keyRotated = AuditEvent(rawValue: "key.rotated")

    // The admin API's roles
    /// An operator gave an account a role of the admin API (`role`), from the CLI.
    static let adminGranted = AuditEvent(rawValue: "admin.granted")
    /// An operator took an account's role of the admin API away (`role`), from the CLI.
    static let adminRevoked = AuditEvent(rawValue: "admin.revoked")
}

extension AuditOutcome {
    /// Waiting for the user's next step (a second factor).
    static let pending = AuditOutcome(rawValue: "pending")
    static let rateLimited = AuditOutcome(rawValue: "rate_limited")
    /// The event ended a session (reuse, expiry).
    static let revoked = AuditOutcome(rawValue: "revoked")
    static let tooManyFailures = AuditOutcome(rawValue: "too_many_failures")
    /// Let through, and written down, in `app_attest.enforce_mode: log`.
    static let logged = AuditOutcome(rawValue: "logged")
}
