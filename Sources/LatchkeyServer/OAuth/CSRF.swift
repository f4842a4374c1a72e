import LatchkeyCrypto
import LatchkeyJOSE

/// The tokens that every state-changing form of the hosted pages carries (S29).
///
/// A token is the HMAC-SHA256 of its binding under a key of its own, derived from the master
/// key, in base64url. The binding is the browser session's id once the user is signed in, and
/// before that the value of the pre-session cookie; a page from another site knows neither, so
/// it cannot make a token that verifies. Tokens do not expire of their own: they end with what
/// they are bound to.
package struct CSRFProtection: Sendable {
    /// The HMAC key; HKDF's info names this purpose alone.
    private let key: [UInt8]

    /// Domain separation inside the MAC, in case the key is ever given a second use.
    private static let context = Array("latchkey csrf token v1\u{0}".utf8)

    /// Derives the token key from `masterKey`.
    package init(masterKey: MasterKey) {
        key = masterKey.derivedKey(label: "latchkey csrf key v1")
    }

    /// The token for forms bound to `binding`; the same binding always gives the same token.
    ///
    /// - Parameter binding: The browser session id, or the pre-session cookie's value.
    package func token(binding: String) -> String {
        Base64URL.encode(mac(binding))
    }

    /// Whether `token` is the token of `binding`, compared in constant time.
    ///
    /// - Returns: `false` for an empty binding (a request without the cookie), and for a token
    ///   that is empty, not base64url, or made for another binding.
    package func verify(_ token: String, binding: String) -> Bool {
        guard !binding.isEmpty, let presented = Base64URL.decode(token) else { return false }
        return ConstantTime.equals(mac(binding), presented)
    }

    private func mac(_ binding: String) -> [UInt8] {
        HMAC.authenticationCode(for: Self.context + Array(binding.utf8), key: key)
    }
}
