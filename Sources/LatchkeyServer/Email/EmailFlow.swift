import FoundationEssentials
import LatchkeyCrypto

/// What a mailed link-and-code is for: the `{purpose}` of its link, `/email/{purpose}?token=…`.
enum EmailPurpose: String, Sendable, CaseIterable {
    /// Proves the account's email address.
    case verify
    /// Sets a new password.
    case reset
    /// Signs in, or signs up when the flow allows it.
    case signIn = "sign-in"
    /// Moves the account to a new address (the flow's ``EmailFlow/newEmail``).
    case change
}

/// One mailed link-and-code (docs/reference.md, "Email"): one use, at most five wrong codes,
/// ended by a newer flow of the same purpose for the same address.
struct EmailFlow: Sendable, Hashable {
    var id: String
    var purpose: EmailPurpose
    /// The address the message went to (for a change, the new one); normalised.
    var email: String
    /// `nil` when no account had the address: nothing was mailed, and no code can match.
    var userID: String?
    /// For a change: the address the account moves to (also ``email``).
    var newEmail: String?
    /// For a sign-in: whether confirming may create the account.
    var mayCreate: Bool
    var tokenHash: [UInt8]
    var codeHash: [UInt8]
    /// Wrong codes so far.
    var attempts: Int
    var createdAt: Date
    var expiresAt: Date
    var endedAt: Date?
    /// `used`, `superseded` or `too_many_attempts`.
    var endedReason: String?

    /// Wrong codes a flow survives; the next attempt finds it dead.
    static let maximumAttempts = 5
}

/// What proves a confirmation: the link's token, or the flow id with the mailed code.
enum EmailProof: Sendable {
    case token(String)
    case code(flowID: String, code: String)
}

/// The secrets of one flow: a 256-bit token for the link and a 6-digit code, stored as hashes.
struct EmailSecrets: Sendable {
    var token: String
    var code: String

    /// New random secrets.
    static func make() -> EmailSecrets {
        EmailSecrets(token: Identifiers.secret(), code: sixDigits())
    }

    /// A uniform 6-digit code (rejection sampling over 32 random bits).
    static func sixDigits() -> String {
        let bound = UInt32.max - UInt32.max % 1_000_000
        while true {
            let bytes = SecureRandom.bytes(count: 4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if value < bound {
                let digits = String(value % 1_000_000)
                return String(repeating: "0", count: 6 - digits.count) + digits
            }
        }
    }

    /// The stored form of a code: an HMAC over the flow id and the code, under a key derived from
    /// the master key, so six digits read from a copy of the database cannot be tried offline.
    static func codeHash(_ code: String, flowID: String, key: [UInt8]) -> [UInt8] {
        HMAC.authenticationCode(for: Array((flowID + ":" + code).utf8), key: key)
    }
}
