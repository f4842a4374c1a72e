/// The nonce of a Sign in with Apple request (Apple's "Authenticating users with Sign in with
/// Apple"): the SHA-256 in hex goes into the request to Apple, the raw value to the server, which
/// checks that the identity token carries its hash.
public enum Nonce {
    /// The characters of a raw nonce (RFC 3986 unreserved), as Apple's sample uses.
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-._")

    /// A fresh nonce from the system's secure random source.
    ///
    /// - Returns: `raw`, 32 random characters, for ``AppleCredential/rawNonce``; `sha256`, its
    ///   SHA-256 in lowercase hex, for `ASAuthorizationAppleIDRequest.nonce`.
    public static func make() -> (raw: String, sha256: String) {
        var generator = SystemRandomNumberGenerator()
        return make(using: &generator)
    }

    /// A nonce from `generator`, which must be cryptographically secure outside tests.
    public static func make(using generator: inout some RandomNumberGenerator) -> (raw: String, sha256: String) {
        var raw = ""
        for _ in 0..<32 { raw.append(alphabet.randomElement(using: &generator)!) }
        return (raw, hash(raw))
    }

    /// The SHA-256 of `raw`'s UTF-8 bytes in lowercase hex: what the identity token's `nonce` holds.
    public static func hash(_ raw: String) -> String {
        SHA256.hex(SHA256.hash(Array(raw.utf8)))
    }
}
