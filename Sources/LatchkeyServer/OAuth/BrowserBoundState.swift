import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE

/// The `state` of a sign-in that leaves for another site and comes back (web Sign in with Apple,
/// an upstream provider): it carries its own payload and expiry, with an HMAC over them and over
/// a random *binding* the browser holds in a short-lived `__Host-` cookie. A state from another
/// browser, or whose payload was changed, fails the MAC, so nobody can land their own sign-in in
/// someone else's browser (login CSRF), and nothing is stored until the state comes back.
///
/// Values only this server can compute derive from a state under the same key
/// (``derived(_:from:)``): Apple's raw nonce, a provider's PKCE verifier and nonce.
struct BrowserBoundState: Sendable {
    /// Why a returned state is refused.
    enum Refusal: Error, Sendable {
        /// Not a state this server made (or longer than any it makes).
        case malformed
        /// The browser brought no binding cookie.
        case unbound
        /// Made for another browser, or its payload was changed.
        case mismatched
        /// Older than ``lifetime``.
        case expired
    }

    /// How long the browser may stay away.
    let lifetime: TimeInterval
    private let name: String
    private let key: [UInt8]

    /// The longest state read back.
    static let maxBytes = 32 * 1024

    /// - Parameters:
    ///   - name: Names the flow in the MAC's inputs (`apple`, `provider`).
    ///   - keyLabel: The master-key derivation label, for this purpose alone.
    init(name: String, keyLabel: String, lifetime: TimeInterval, masterKey: MasterKey) {
        self.name = name
        self.lifetime = lifetime
        key = masterKey.derivedKey(label: keyLabel)
    }

    /// A new state carrying `payload`, and the binding for the browser's cookie.
    func make(_ payload: String, now: Date) -> (state: String, binding: String) {
        let binding = Identifiers.secret()
        let expires = Int(now.addingTimeInterval(lifetime).timeIntervalSince1970)
        let body = "\(expires)." + Base64URL.encode(Array(payload.utf8))
        return (body + "." + Base64URL.encode(mac("state", binding + "\u{0}" + body)), binding)
    }

    /// Checks a returned state against the browser's binding cookie.
    ///
    /// - Returns: The payload ``make(_:now:)`` was given, and when the state expires.
    func open(_ state: String, binding: String?, now: Date) throws(Refusal) -> (payload: String, expiresAt: Date) {
        let parts = state.split(separator: ".", omittingEmptySubsequences: false)
        guard state.utf8.count <= Self.maxBytes, parts.count == 3, let expires = Int(parts[0]), let payload = Base64URL.decode(String(parts[1])),
            let presented = Base64URL.decode(String(parts[2]))
        else { throw .malformed }
        guard let binding, !binding.isEmpty else { throw .unbound }
        guard ConstantTime.equals(mac("state", binding + "\u{0}" + parts[0] + "." + parts[1]), presented) else { throw .mismatched }
        let seconds = Int(now.timeIntervalSince1970)
        guard seconds < expires, expires <= seconds + Int(lifetime) + 60 else { throw .expired }
        return (String(decoding: payload, as: UTF8.self), Date(timeIntervalSince1970: TimeInterval(expires)))
    }

    /// A value of `state` for `purpose` that only this server can compute: base64url of an HMAC.
    func derived(_ purpose: String, from state: String) -> String {
        Base64URL.encode(mac(purpose, state))
    }

    private func mac(_ purpose: String, _ text: String) -> [UInt8] {
        HMAC.authenticationCode(for: Array("latchkey \(name) \(purpose) v1\u{0}\(text)".utf8), key: key)
    }
}
