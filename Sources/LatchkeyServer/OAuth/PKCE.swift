import LatchkeyCrypto
import LatchkeyJOSE

/// Proof Key for Code Exchange (RFC 7636) with the one method Latchkey accepts, `S256`: the
/// authorization request carries `BASE64URL(SHA-256(verifier))`, the token request the verifier.
enum PKCE {
    /// Whether a `code_challenge` has the shape of an S256 challenge: 32 bytes, base64url, no padding.
    static func isChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && Base64URL.decode(challenge)?.count == 32
    }

    /// Whether a `code_verifier` is 43–128 characters of `A–Z a–z 0–9 - . _ ~` (RFC 7636 §4.1).
    static func isVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// Whether the verifier hashes to the challenge, compared in constant time.
    static func verifies(_ verifier: String, challenge: String) -> Bool {
        guard isVerifier(verifier) else { return false }
        let computed = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
        return ConstantTime.equals(Array(computed.utf8), Array(challenge.utf8))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
