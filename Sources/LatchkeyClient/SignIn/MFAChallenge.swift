/// A pending sign-in that needs a second factor (the server's `mfa_required` answer).
///
/// The ``mfaToken`` lives five minutes and allows five tries.
public struct MFAChallenge: Sendable, Hashable {
    /// The factors the challenge offers.
    public typealias Factor = SecondFactor

    /// The token to present with the proof; a secret, not shown by `description`.
    public var mfaToken: String
    /// The second factors the user can prove.
    public var factors: [Factor]
    /// The Apple user id when the first factor was Sign in with Apple, stored with the session.
    var appleUserID: String?

    /// A challenge with this token and these factors.
    public init(mfaToken: String, factors: [Factor]) {
        self.mfaToken = mfaToken
        self.factors = factors
    }
}
