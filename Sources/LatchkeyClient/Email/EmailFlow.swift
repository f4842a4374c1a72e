public import Foundation

/// What a mailed link and code are for: the `{purpose}` of the link
/// `{server}/email/{purpose}?token=…`.
public enum EmailPurpose: String, Sendable, Hashable, Codable, CaseIterable {
    /// Proves the account's email address (``LatchkeyClient/verifyEmail()``).
    case verify
    /// Sets a new password (``LatchkeyClient/requestPasswordReset(email:)``).
    case reset
    /// Signs in, or signs up when the request allowed it (``LatchkeyClient/signInWithEmail(_:create:)``).
    case signIn = "sign-in"
    /// Moves the account to a new address (``LatchkeyClient/changeEmail(to:)``).
    case change
}

/// A mail the server sent (or, for an address without an account, pretends to have sent): the
/// flow to confirm with the 6-digit code the user reads in it.
///
/// Every request that mails a code answers the same for an address with or without an account,
/// so a flow says nothing about whether the address is known. The code works only with the flow
/// it was mailed for, once, until ``expiresAt``; five wrong codes end the flow, and a newer request
/// of the same purpose for the same address ends the older one. The same mail also carries a
/// link, which ends the flow too when it is used first (see ``EmailLink``).
///
/// `Codable`, so an app can keep the flow while the user switches to the mail app and back.
public struct EmailFlow: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The server's id of the flow (`flow_id`), sent with the code.
    public var id: String
    /// What confirming it does.
    public var purpose: EmailPurpose
    /// When the code and the link stop working, by this device's clock at the time of the request.
    public var expiresAt: Date

    /// A flow with this id, purpose and expiry.
    public init(id: String, purpose: EmailPurpose, expiresAt: Date) {
        self.id = id
        self.purpose = purpose
        self.expiresAt = expiresAt
    }

    /// Whether the code may still work at `now` (the server decides; this is for the UI).
    public func isExpired(at now: Date = Date()) -> Bool { now >= expiresAt }

    /// The purpose and the expiry.
    public var description: String { "EmailFlow(\(purpose.rawValue), expires \(expiresAt))" }
}

/// Why the server refused a mailed code or link (its `invalid_grant` reasons), on
/// ``LatchkeyError/emailFlowFailure``.
public enum EmailFlowFailure: String, Sendable, Hashable, CaseIterable {
    /// The code is wrong; the flow stays open for the rest of its five tries.
    case invalidCode = "invalid_code"
    /// The code or link outlived its 15 minutes: ask for a new email.
    case expired
    /// The code or link was used already (the link, or the code, whichever came first).
    case used
    /// Five wrong codes ended the flow: ask for a new email.
    case tooManyAttempts = "too_many_attempts"
    /// A newer email of the same kind to the same address replaced this one: use the newest.
    case superseded
    /// The server never issued this code or link, or it was for something else (a reset's link
    /// given to ``LatchkeyClient/signIn(emailToken:)``, say), or its account is gone.
    case unknown
}
