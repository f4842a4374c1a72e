import FoundationEssentials
import LatchkeyCrypto

/// Time-based one-time passwords (RFC 6238) as authenticator apps implement them: HMAC-SHA-1,
/// six digits, 30-second steps, with RFC 4226 §5.3 dynamic truncation.
enum TOTP {
    /// Seconds per step (RFC 6238 §4.1 X, default 30).
    static let period: TimeInterval = 30
    /// Digits per code.
    static let digits = 6
    /// Steps accepted either side of the current one (S19: ±1).
    static let window: Int64 = 1
    /// Secret length: 160 bits, the HMAC-SHA-1 output size RFC 4226 §4 recommends.
    static let secretByteCount = 20

    /// The step `date` falls in: ⌊unix time / 30⌋ (RFC 6238 §4.2, T0 = 0).
    static func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / period).rounded(.down))
    }

    /// The code of one step, zero-padded to `digits` digits.
    static func code(secret: [UInt8], step: Int64, digits: Int = digits) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Array($0) }
        let mac = HMAC.sha1AuthenticationCode(for: counter, key: secret)
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The step within ±``window`` of `now` whose code is `code`, provided it is later than
    /// `lastUsedStep`, so no code (nor an older one) is accepted twice (S19).
    ///
    /// Every candidate is computed and compared in constant time, whichever matches.
    static func matchingStep(of code: String, secret: [UInt8], now: Date, after lastUsedStep: Int64?) -> Int64? {
        let current = step(at: now)
        let given = Array(code.utf8)
        var match: Int64?
        for candidate in (current - window)...(current + window) {
            let expected = Array(self.code(secret: secret, step: candidate).utf8)
            if ConstantTime.equals(expected, given), candidate > (lastUsedStep ?? Int64.min) { match = candidate }
        }
        return match
    }

    /// The Key URI authenticator apps scan:
    /// `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`.
    ///
    /// - Parameter secret: The base32 secret.
    static func keyURI(secret: String, account: String, issuer: String) -> String {
        let issuer = escaped(issuer)
        let label = escaped(account)
        return "otpauth://totp/\(issuer):\(label)?secret=\(secret)&issuer=\(issuer)&algorithm=SHA1&digits=\(digits)&period=\(Int(period))"
    }

    /// Percent-escapes every UTF-8 byte but RFC 3986's unreserved characters and `@`.
    private static func escaped(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"):
                output.append(byte)
            default:
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// Base32 (RFC 4648 §6) without padding: how authenticator apps take a TOTP secret.
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }
}
