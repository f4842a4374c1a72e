import Foundation

/// Proof Key for Code Exchange (RFC 7636) with the `S256` method, the only one Latchkey accepts.
///
/// The verifier stays on the device until the code exchange; the authorize URL carries only its
/// challenge, so a code intercepted on its way back to the app is worthless without it.
enum PKCE {
    /// A verifier from 32 random bytes, base64url without padding: 43 unreserved characters,
    /// 256 bits (RFC 7636 §4.1 recommends exactly this).
    static func makeVerifier(using generator: inout some RandomNumberGenerator) -> String {
        Base64URL.encode(Data(WebSignInRandom.bytes(32, using: &generator)))
    }

    /// The `S256` challenge: base64url (no padding) of the SHA-256 of the verifier's ASCII bytes.
    static func challenge(for verifier: String) -> String {
        Base64URL.encode(Data(SHA256.hash(Array(verifier.utf8))))
    }
}

/// The random values of a web sign-in.
enum WebSignInRandom {
    /// `count` bytes from `generator`, which must be cryptographically secure outside tests.
    static func bytes(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A `state` or `nonce`: 32 random bytes (256 bits), base64url without padding.
    static func token(using generator: inout some RandomNumberGenerator) -> String {
        Base64URL.encode(Data(bytes(32, using: &generator)))
    }
}
