import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE

/// One device authorization (RFC 8628): what a device asked for at `/oauth/device_authorization`
/// and how far the user has got with it.
///
/// Only hashes of its two codes are kept: the device holds the `device_code`, the user types the
/// `user_code`. ``id`` is a third, random reference that the hosted pages carry from the code page
/// through the sign-in to the consent page, so neither code travels further than it must.
struct DeviceAuthorization: Sendable, Hashable {
    /// Where the authorization is. Every change is a compare-and-set on it.
    enum Status: String, Sendable, Hashable {
        /// Waiting for the user: the device hears `authorization_pending`.
        case pending
        /// The user allowed it; the next poll gets the tokens.
        case approved
        /// The user refused it: `access_denied`.
        case denied
        /// The tokens went to the device, once.
        case redeemed
    }

    var id: String
    var clientID: String
    /// Space-separated, sorted.
    var scope: String
    var status: Status
    /// Who approved or denied it.
    var userID: String?
    /// The browser session it was approved in, the ID token's `sid`.
    var browserSessionID: String?
    /// When that user last proved who they are, and how (the ID token's `auth_time` and `amr`).
    var authTime: Date?
    var amr: [String]
    var createdAt: Date
    var expiresAt: Date

    /// The polling interval RFC 8628 §3.2 recommends, in seconds, and what `slow_down` adds to it
    /// (§3.5).
    static let interval = 5
    static let slowDownStep = 5

    /// A new `device_code`: 256 random bits, base64url.
    static func newDeviceCode() -> String { Identifiers.secret() }

    /// A new reference for the hosted pages: `dva_` and 128 random bits.
    static func newID() -> String { "dva_" + Base64URL.encode(SecureRandom.bytes(count: 16)) }
}

/// User codes (RFC 8628 §6.1): eight letters of an alphabet without vowels (no words) and
/// without letters easily taken for others, shown `XXXX-XXXX`, typed in any case, with or
/// without the dash.
enum UserCode {
    /// The twenty letters RFC 8628 §6.1 suggests.
    static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ".utf8)
    static let length = 8

    /// A new code, its letters drawn uniformly (a byte of 240 or more is drawn again, so each
    /// letter is one of 20 with equal odds): 20^8, about 34.5 bits.
    static func generate() -> String {
        var letters: [UInt8] = []
        while letters.count < length {
            for byte in SecureRandom.bytes(count: 16) where byte < 240 && letters.count < length {
                letters.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return String(decoding: letters, as: UTF8.self)
    }

    /// `XXXX-XXXX`, as the device shows it.
    static func display(_ code: String) -> String {
        guard code.utf8.count == length else { return code }
        return String(code.prefix(4)) + "-" + String(code.suffix(4))
    }

    /// The code as typed, in its stored form: upper case, without a dash or white space; `nil`
    /// when it cannot be a user code (another length or a letter outside the alphabet).
    static func normalize(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        var letters: [UInt8] = []
        for byte in typed.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "\t"): continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"): letters.append(byte - 32)
            default: letters.append(byte)
            }
        }
        guard letters.count == length, letters.allSatisfy(alphabet.contains) else { return nil }
        return String(decoding: letters, as: UTF8.self)
    }
}
