package import FoundationEssentials
import Glibc
import LatchkeyErrors

/// A `Set-Cookie` field value (RFC 6265 §4.1), checked when it is made.
///
/// The name must be an RFC 9110 token and the value cookie-octets (RFC 6265 §4.1.1: printable
/// ASCII without space, `"`, `,`, `;` and `\`), so nothing a caller passes can add an attribute
/// or a second cookie. The prefixes of RFC 6265bis §4.1.3 are enforced as browsers enforce them:
/// a `__Host-` cookie is `Secure`, has `Path=/` and no `Domain` (so it is bound to this host
/// alone); a `__Secure-` cookie is `Secure`. `SameSite=None` needs `Secure` too (browsers drop it
/// otherwise).
package struct SetCookie: Sendable, Hashable {
    /// The `SameSite` attribute (RFC 6265bis §4.1.2.7).
    package enum SameSite: String, Sendable, Hashable {
        /// Sent on same-site requests and top-level navigations to the site.
        case lax = "Lax"
        /// Sent on same-site requests only.
        case strict = "Strict"
        /// Sent on cross-site requests too; requires `Secure`.
        case none = "None"
    }

    /// The cookie's name.
    package let name: String
    /// The cookie's value, as sent (not encoded here).
    package let value: String
    /// The `Path` attribute.
    package let path: String?
    /// The `Domain` attribute; `nil` makes a host-only cookie.
    package let domain: String?
    /// The `Max-Age` attribute in seconds; 0 deletes the cookie.
    package let maxAge: Int?
    /// The `Expires` attribute, for clients that ignore `Max-Age`.
    package let expires: Date?
    /// The `Secure` attribute: sent over HTTPS only.
    package let secure: Bool
    /// The `HttpOnly` attribute: out of reach of scripts.
    package let httpOnly: Bool
    /// The `SameSite` attribute.
    package let sameSite: SameSite?

    /// Makes a cookie. The defaults suit a session cookie of a hosted page: `Secure`,
    /// `HttpOnly`, `SameSite=Lax`, `Path=/`, host-only.
    ///
    /// - Throws: ``CookieError`` when the name, value, path or domain cannot be sent safely, or
    ///   the attributes break the rules of the name's prefix.
    package init(
        name: String, value: String, path: String? = "/", domain: String? = nil, maxAge: Int? = nil,
        expires: Date? = nil, secure: Bool = true, httpOnly: Bool = true, sameSite: SameSite? = .lax
    ) throws(CookieError) {
        guard !name.isEmpty, name.utf8.allSatisfy(ASCII.isToken) else {
            throw CookieError(.invalidName, "a cookie name is an RFC 9110 token")
        }
        guard Self.isCookieValue(value) else {
            throw CookieError(.invalidValue, "the value of cookie \(name) holds bytes outside RFC 6265's cookie-octets")
        }
        if let path {
            guard path.first == "/", path.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") }) else {
                throw CookieError(.invalidAttribute, "the Path of cookie \(name) must start with / and hold no ; or control byte")
            }
        }
        if let domain {
            guard !domain.isEmpty, domain.utf8.allSatisfy({ ASCII.isHostByte($0) && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") })
            else {
                throw CookieError(.invalidAttribute, "the Domain of cookie \(name) is not a host name")
            }
        }
        if let maxAge, maxAge < 0 {
            throw CookieError(.invalidAttribute, "the Max-Age of cookie \(name) is negative; use 0 to delete it")
        }
        if sameSite == SameSite.none && !secure {
            throw CookieError(.prefixViolation, "cookie \(name) has SameSite=None without Secure")
        }
        // RFC 6265bis §4.1.3: the prefixes are matched case-insensitively by browsers.
        let lowered = name.lowercased()
        if lowered.hasPrefix("__host-") && (!secure || path != "/" || domain != nil) {
            throw CookieError(.prefixViolation, "a __Host- cookie is Secure, has Path=/ and no Domain")
        }
        if lowered.hasPrefix("__secure-") && !secure {
            throw CookieError(.prefixViolation, "a __Secure- cookie is Secure")
        }
        self.name = name
        self.value = value
        self.path = path
        self.domain = domain
        self.maxAge = maxAge
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// A cookie that makes the client delete `name`: empty, `Max-Age=0` and `Expires` in 1970.
    /// Path and domain must be those the cookie was set with.
    ///
    /// - Throws: ``CookieError`` as ``init(name:value:path:domain:maxAge:expires:secure:httpOnly:sameSite:)``.
    package static func expired(
        name: String, path: String? = "/", domain: String? = nil, secure: Bool = true, httpOnly: Bool = true,
        sameSite: SameSite? = .lax
    ) throws(CookieError) -> SetCookie {
        try SetCookie(
            name: name, value: "", path: path, domain: domain, maxAge: 0, expires: Date(timeIntervalSince1970: 0),
            secure: secure, httpOnly: httpOnly, sameSite: sameSite)
    }

    /// The field value: `name=value; Path=/; Max-Age=...; Secure; HttpOnly; SameSite=Lax`.
    package var fieldValue: String {
        var text = name + "=" + value
        if let path { text += "; Path=" + path }
        if let domain { text += "; Domain=" + domain }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        if let expires { text += "; Expires=" + Self.imfFixdate(expires) }
        if secure { text += "; Secure" }
        if httpOnly { text += "; HttpOnly" }
        if let sameSite { text += "; SameSite=" + sameSite.rawValue }
        return text
    }

    /// Whether `value` is `*cookie-octet` or one `DQUOTE *cookie-octet DQUOTE` (RFC 6265 §4.1.1).
    static func isCookieValue(_ value: String) -> Bool {
        var bytes = Substring(value).utf8[...]
        if bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") {
            bytes = bytes.dropFirst().dropLast()
        }
        return bytes.allSatisfy(isCookieOctet)
    }

    /// `%x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E`.
    static func isCookieOctet(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x2B, 0x2D...0x3A, 0x3C...0x5B, 0x5D...0x7E: true
        default: false
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 §5.6.7), which RFC 6265 §5.1.1 parses.
    static func imfFixdate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var year = String(parts.tm_year + 1900)
        while year.count < 4 { year = "0" + year }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// Why a ``SetCookie`` cannot be made.
package struct CookieError: CodedError {
    /// What is wrong.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The name is not a token.
        package static let invalidName = Code(rawValue: "invalid_name")
        /// The value holds a byte that is not a cookie-octet.
        package static let invalidValue = Code(rawValue: "invalid_value")
        /// Path, Domain or Max-Age cannot be sent as given.
        package static let invalidAttribute = Code(rawValue: "invalid_attribute")
        /// The attributes break the rules of a `__Host-` or `__Secure-` name, or of `SameSite=None`.
        package static let prefixViolation = Code(rawValue: "prefix_violation")
    }

    package let code: Code
    /// A sentence for a developer; it names the cookie, never its value.
    package let message: String

    /// Creates an error; tests compare by ``code`` only.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    package var description: String { "\(code): \(message)" }
}

/// The cookies of a request's `Cookie` fields (RFC 6265 §5.4, §4.2).
///
/// Parsed leniently, as a server should read what many browsers send: pairs are split on `;`,
/// spaces and tabs around names and values are dropped, one pair of double quotes around a value
/// is removed, and a value is otherwise kept as sent (not percent-decoded). A pair without `=`,
/// with an empty name, a name that is not a token, or a control byte is skipped, never fatal.
/// Several `Cookie` fields are read as one list (RFC 9113 §8.2.3).
///
/// When a name repeats, the first value wins: browsers send the cookie with the longest
/// matching path first (RFC 6265 §5.4, step 2), which is the one a page set for itself, and a
/// cookie injected for a broader path or a parent domain comes later.
package struct Cookies: Sendable {
    private var values: [String: String] = [:]

    /// Parses every `Cookie` field of `headers`.
    package init(headers: HTTPHeaders) {
        for field in headers.values("Cookie") {
            for pair in field.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let name = Self.trimmed(pair[pair.startIndex..<equals])
                var value = Self.trimmed(pair[pair.index(after: equals)...])
                guard !name.isEmpty, name.allSatisfy(ASCII.isToken),
                    !value.contains(where: { $0 < 0x20 || $0 == 0x7F })
                else { continue }
                if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                    value = value.dropFirst().dropLast()
                }
                guard let nameText = String(validating: name, as: UTF8.self),
                    let valueText = String(validating: value, as: UTF8.self)
                else { continue }
                if values[nameText] == nil { values[nameText] = valueText }
            }
        }
    }

    /// The value of the cookie `name` (case-sensitive, RFC 6265 §5.3), or `nil`.
    package subscript(name: String) -> String? { values[name] }

    /// The number of distinct cookie names.
    package var count: Int { values.count }

    /// Every name and its first value.
    package var all: [String: String] { values }

    private static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var bytes = bytes
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        return bytes
    }
}

extension HTTPRequest {
    /// The request's cookies; see ``Cookies``.
    package var cookies: Cookies { Cookies(headers: headers) }
}

extension HTTPResponse {
    /// Adds a `Set-Cookie` field; one per cookie, as RFC 6265 §3 requires (they cannot be joined).
    package mutating func setCookie(_ cookie: SetCookie) {
        headers.add("Set-Cookie", cookie.fieldValue)
    }
}
