import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE

/// Server nonces for DPoP proofs (RFC 9449 §8), stateless so that every instance accepts every
/// other's: a nonce is the HMAC of its time window under a key derived from the master key, so
/// instances that share the master key agree without sharing any state. The nonce changes every
/// ``window`` seconds; the current and the previous window's are accepted, so a nonce handed out
/// just before a change still works for at least one window.
struct DPoPNonces: Sendable {
    private let key: [UInt8]
    /// How long one nonce is handed out.
    static let window: TimeInterval = 300

    init(masterKey: MasterKey) {
        key = masterKey.derivedKey(label: "latchkey dpop nonce key v1")
    }

    /// The nonce to hand out at `now`.
    func current(now: Date) -> String {
        nonce(window: Self.windowIndex(now))
    }

    /// Whether `nonce` is this window's or the previous one's.
    func isValid(_ nonce: String, now: Date) -> Bool {
        let index = Self.windowIndex(now)
        return nonce == self.nonce(window: index) || nonce == self.nonce(window: index - 1)
    }

    private func nonce(window index: Int64) -> String {
        let counter = (0..<8).map { UInt8(truncatingIfNeeded: index >> (56 - 8 * $0)) }
        return Base64URL.encode(HMAC.authenticationCode(for: Array("dpop nonce ".utf8) + counter, key: key).prefix(24))
    }

    private static func windowIndex(_ now: Date) -> Int64 {
        Int64((now.timeIntervalSince1970 / window).rounded(.down))
    }
}
