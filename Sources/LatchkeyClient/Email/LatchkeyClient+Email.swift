public import Foundation
import LatchkeyWire

/// The email calls (docs/reference.md, "Email"): password reset, sign-in by email, verification
/// and change of address. Each request mails a message that carries both a 6-digit code, which the
/// user types into the app, and a link, which opens the app as a universal link
/// (``emailLink(from:)``); either one confirms, once.
extension LatchkeyClient {
    // MARK: Password reset

    /// Mails a password reset to the password account whose username is `email`.
    ///
    /// The answer is the same whether or not there is such an account (only an account gets
    /// mail), so it cannot tell anyone which addresses have accounts. Confirm with the mailed code
    /// through ``resetPassword(flow:code:newPassword:)``, or the mailed link through
    /// ``resetPassword(token:newPassword:)``.
    ///
    /// - Throws: ``LatchkeyError``: `invalid_request` for a string that is not an email address;
    ///   ``LatchkeyError/Code/rateLimited(retryAfter:)`` past five requests an hour for an address.
    public func requestPasswordReset(email: String) async throws -> EmailFlow {
        try await startEmailFlow(.reset, "/v1/auth/password/reset", WireEmailRequest(email: email))
    }

    /// Sets a new password with the code of a reset's mail, then signs in as password sign-in does.
    ///
    /// The password rules of sign-up apply first; a refused password leaves the flow open, so the
    /// user can pick another with the same code. The reset ends every session of the account,
    /// this device's included when it was signed in as that user.
    ///
    /// - Returns: ``SignInResult/signedIn(_:)`` (stored and announced as ``AuthEvent/signedIn(_:)``),
    ///   or ``SignInResult/secondFactorRequired(_:)`` for an account with a second factor: a reset
    ///   never skips it.
    /// - Throws: ``LatchkeyError``: `invalid_grant` with ``LatchkeyError/emailFlowFailure`` for a
    ///   wrong or spent code; `invalid_request` with ``LatchkeyError/reason`` `password_too_short`,
    ///   `password_common`, … for a refused password.
    public func resetPassword(flow: EmailFlow, code: String, newPassword: String) async throws -> SignInResult {
        try await emailProof {
            try await firstFactor(
                "/v1/auth/password/reset/confirm", WireEmailConfirmation(proof: .code(flowID: flow.id, code: code), password: newPassword),
                appleUserID: nil)
        }
    }

    /// ``resetPassword(flow:code:newPassword:)`` with the token of a reset's link
    /// (``EmailLink/reset(token:)``), on this device or another.
    public func resetPassword(token: String, newPassword: String) async throws -> SignInResult {
        try await emailProof {
            try await firstFactor(
                "/v1/auth/password/reset/confirm", WireEmailConfirmation(proof: .token(token), password: newPassword), appleUserID: nil)
        }
    }

    // MARK: Sign-in by email

    /// Mails a sign-in code (and link) to `email`: passwordless sign-in.
    ///
    /// Without `create`, only an address with an account gets mail; with it, any address does,
    /// and confirming creates the account, its address verified. The answer is the same either
    /// way. Complete with ``signIn(emailFlow:code:)`` or, for the link, ``signIn(emailToken:)``.
    ///
    /// - Throws: as ``requestPasswordReset(email:)``.
    public func signInWithEmail(_ email: String, create: Bool = false) async throws -> EmailFlow {
        try await startEmailFlow(.signIn, "/v1/auth/email/start", WireEmailRequest(email: email, create: create ? true : nil))
    }

    /// Signs in with the code of a sign-in mail.
    ///
    /// - Returns: ``SignInResult/signedIn(_:)`` (stored and announced as every sign-in), or
    ///   ``SignInResult/secondFactorRequired(_:)`` for an account with a second factor.
    /// - Throws: ``LatchkeyError``: `invalid_grant` with ``LatchkeyError/emailFlowFailure``
    ///   (``EmailFlowFailure/invalidCode`` for a wrong code; ``EmailFlowFailure/unknown`` when no
    ///   account has the address and the request did not allow creating one).
    public func signIn(emailFlow: EmailFlow, code: String) async throws -> SignInResult {
        try await emailProof {
            try await firstFactor("/v1/auth/email/verify", WireEmailConfirmation(proof: .code(flowID: emailFlow.id, code: code)), appleUserID: nil)
        }
    }

    /// ``signIn(emailFlow:code:)`` with the token of a sign-in link (``EmailLink/signIn(token:)``).
    public func signIn(emailToken: String) async throws -> SignInResult {
        try await emailProof {
            try await firstFactor("/v1/auth/email/verify", WireEmailConfirmation(proof: .token(emailToken)), appleUserID: nil)
        }
    }

    // MARK: Verification

    /// Mails a confirmation of the signed-in account's address.
    ///
    /// - Throws: ``LatchkeyError``: `conflict` when the address is verified already,
    ///   `invalid_request` when the account has no address; ``LatchkeyError/Code/notSignedIn``.
    public func verifyEmail() async throws -> EmailFlow {
        try await startEmailFlow(.verify, "/v1/email/verification", nil, signedIn: true)
    }

    /// Confirms the address with the code of a verification mail. Needs no session (the mail may
    /// be read on another device); when this client is signed in as that user, its session's user
    /// is updated and announced as ``AuthEvent/userUpdated(_:)``.
    ///
    /// - Returns: The user, ``Account/User/emailVerified`` true.
    /// - Throws: ``LatchkeyError``: `invalid_grant` with ``LatchkeyError/emailFlowFailure``.
    public func confirmEmailVerification(flow: EmailFlow, code: String) async throws -> Account.User {
        try await confirmAddress("/v1/email/verification/confirm", .code(flowID: flow.id, code: code))
    }

    /// ``confirmEmailVerification(flow:code:)`` with the token of a verification link
    /// (``EmailLink/verify(token:)``).
    public func confirmEmailVerification(token: String) async throws -> Account.User {
        try await confirmAddress("/v1/email/verification/confirm", .token(token))
    }

    // MARK: Change of address

    /// Mails a confirmation to `email`, the address the signed-in account should move to; the
    /// account keeps its address until the confirmation, and the old address then gets a notice.
    ///
    /// - Throws: ``LatchkeyError``: `insufficient_authentication` unless the session signed in or
    ///   proved a second factor in the last five minutes (sign in again, or ``stepUp(with:)``);
    ///   `conflict` when another account uses the address; `invalid_request` when it is the
    ///   account's address already or not an address.
    public func changeEmail(to email: String) async throws -> EmailFlow {
        try await startEmailFlow(.change, "/v1/me/email", WireEmailRequest(email: email), signedIn: true)
    }

    /// Moves the account to its new address with the code mailed there. Needs no session; when
    /// this client is signed in as that user, its session's user is updated and announced as
    /// ``AuthEvent/userUpdated(_:)``.
    ///
    /// - Returns: The user with the new address, verified.
    /// - Throws: ``LatchkeyError``: `invalid_grant` with ``LatchkeyError/emailFlowFailure``;
    ///   `conflict` when another account took the address meanwhile (the flow stays open).
    public func confirmEmailChange(flow: EmailFlow, code: String) async throws -> Account.User {
        try await confirmAddress("/v1/me/email/confirm", .code(flowID: flow.id, code: code))
    }

    /// ``confirmEmailChange(flow:code:)`` with the token of a change link (``EmailLink/change(token:)``).
    public func confirmEmailChange(token: String) async throws -> Account.User {
        try await confirmAddress("/v1/me/email/confirm", .token(token))
    }

    // MARK: Universal links

    /// The mailed link `url` (`{baseURL}/email/{purpose}?token=T`) when it comes from this
    /// client's server, else `nil`: hand every universal link the app receives to it, and
    /// confirm a link it recognises with the call its case names.
    ///
    /// Nothing is sent: the check is ``EmailLink/init(url:server:)`` against
    /// ``LatchkeyConfiguration/baseURL``.
    public nonisolated func emailLink(from url: URL) -> EmailLink? {
        EmailLink(url: url, server: configuration.baseURL)
    }

    // MARK: Internals

    /// Posts a request that mails a flow: anonymously, or (`signedIn`) with the access token, for
    /// the signed-in account's own address.
    private func startEmailFlow(
        _ purpose: EmailPurpose, _ path: String, _ body: WireEmailRequest?, signedIn: Bool = false
    ) async throws -> EmailFlow {
        let sentAt = configuration.now()
        let started =
            signedIn
            ? try await authorized("POST", path, body, as: WireEmailFlowStarted.self)
            : try await call("POST", path, body, as: WireEmailFlowStarted.self)
        return EmailFlow(id: started.flowID, purpose: purpose, expiresAt: sentAt.addingTimeInterval(TimeInterval(started.expiresIn)))
    }

    /// A verification's or change's confirmation: the user it answers, kept with the session when
    /// it is this client's user.
    private func confirmAddress(_ path: String, _ proof: WireEmailConfirmation.Proof) async throws -> Account.User {
        let user = try await emailProof {
            Account.User(try await call("POST", path, WireEmailConfirmation(proof: proof), as: WireAccountUpdateResponse.self).user)
        }
        userChanged(user)
        return user
    }

    /// Runs a confirmation, typing the server's reason for refusing the proof.
    private func emailProof<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch var error as LatchkeyError where error.code == .server(code: WireErrorCode.invalidGrant.rawValue) {
            error.emailFlowFailure = error.reason.flatMap(EmailFlowFailure.init(rawValue:))
            throw error
        }
    }
}
