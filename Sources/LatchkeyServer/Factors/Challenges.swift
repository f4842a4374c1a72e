import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// What a challenge may authorise (S16): registering a device key, a step-up in a session, or
/// the second factor of a sign-in.
enum ChallengePurpose: String, Sendable {
    case register
    case stepUp = "step_up"
    case mfa
}

/// A device-key challenge (docs/security.md S16): 32 random bytes, single use, 120 seconds, bound to
/// a user, a purpose, the device key that must sign it (none for `register`) and the session or
/// `mfa_token` that asked for it.
///
/// Only the SHA-256 of the bytes is stored (S7). That digest is also exactly what ECDSA-SHA256
/// verification needs, so the bytes themselves are never kept.
struct Challenge: Sendable {
    var id: String
    var userID: String
    var deviceKeyID: String?
    var purpose: ChallengePurpose
    var sessionID: String?
    var mfaTokenHash: [UInt8]?
    /// SHA-256 of the challenge bytes.
    var digest: [UInt8]
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?

    /// How long a challenge lives: docs/reference.md's upper bound (S16).
    static let lifetime = 120

    /// Creates a challenge inside the caller's transaction.
    ///
    /// - Returns: What the client signs: the id, the bytes and their lifetime.
    static func issue(
        userID: String, purpose: ChallengePurpose, deviceKeyID: String?, sessionID: String?, mfaTokenHash: [UInt8]?, now: Date,
        on connection: any SQLConnection
    ) throws -> IssuedChallenge {
        let bytes = SecureRandom.bytes(count: 32)
        let challenge = Challenge(
            id: Identifiers.make("chl"), userID: userID, deviceKeyID: deviceKeyID, purpose: purpose, sessionID: sessionID,
            mfaTokenHash: mfaTokenHash, digest: HashFunction.sha256.hash(bytes), createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(lifetime)), usedAt: nil)
        try ChallengeRepository().insert(challenge, on: connection)
        return IssuedChallenge(id: challenge.id, bytes: bytes, expiresIn: lifetime)
    }

    /// Throws `invalid_grant` unless the challenge can still be spent at `now`: replay is
    /// recognised by the challenge id (S16), never by signature bytes.
    func checkUsable(now: Date) throws(AuthError) {
        if usedAt != nil { throw AuthError.invalidGrant(.reused, "the challenge was already used") }
        if now >= expiresAt { throw AuthError.invalidGrant(.expired, "the challenge has expired") }
    }
}

/// A challenge as its client receives it, once: docs/reference.md's `{challenge_id, challenge,
/// expires_in}`.
struct IssuedChallenge: Sendable, Hashable {
    var id: String
    /// The 32 random bytes to sign; Latchkey keeps only their hash.
    var bytes: [UInt8]
    /// Seconds it lives.
    var expiresIn: Int
}
