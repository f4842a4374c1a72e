import LatchkeyCrypto
import LatchkeyJOSE

/// Random identifiers and secrets.
enum Identifiers {
    /// A 128-bit random id with a readable prefix, e.g. `usr_3q2…`: unguessable, and an operator
    /// can tell a user id from a session id at a glance.
    static func make(_ prefix: String) -> String {
        prefix + "_" + Base64URL.encode(SecureRandom.bytes(count: 16))
    }

    /// A 256-bit secret for a client to hold (refresh tokens), base64url.
    static func secret() -> String {
        Base64URL.encode(SecureRandom.bytes(count: 32))
    }
}

extension String {
    /// SHA-256 of the UTF-8 text: how secrets a client holds are stored (SECURITY.md S7).
    var sha256: [UInt8] { HashFunction.sha256.hash(Array(utf8)) }
}
