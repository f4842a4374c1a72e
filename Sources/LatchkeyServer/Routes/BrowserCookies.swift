import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyWire

/// The two cookies of the hosted pages (S29), both `__Host-` (so `Secure`, `Path=/` and no
/// `Domain`: bound to this host alone), `HttpOnly` and `SameSite=Lax`:
///
/// - `__Host-latchkey_session`: the browser session's token, for the session's lifetime.
/// - `__Host-latchkey_csrf`: a random value that binds the CSRF tokens of a browser that is not
///   signed in yet; a session cookie, gone when the browser closes.
enum BrowserCookies {
    /// The browser session cookie's name.
    static let sessionName = "__Host-latchkey_session"
    /// The pre-session CSRF cookie's name.
    static let csrfName = "__Host-latchkey_csrf"

    /// A fresh value for the pre-session CSRF cookie: 256 random bits, base64url.
    static func newCSRFValue() -> String { Identifiers.secret() }
}

extension HTTPRequest {
    /// The browser session token the request's cookie carries, if any.
    var browserSessionToken: String? {
        cookies[BrowserCookies.sessionName].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The pre-session CSRF cookie's value, if any.
    var preSessionCSRFValue: String? {
        cookies[BrowserCookies.csrfName].flatMap { $0.isEmpty ? nil : $0 }
    }
}

extension HTTPResponse {
    /// Sets the browser session cookie.
    ///
    /// - Parameters:
    ///   - token: The token ``BrowserSessionService/start(userID:amr:ip:userAgent:)`` returned.
    ///   - maxAge: Seconds it lasts: the session's lifetime.
    /// - Throws: ``CookieError`` when `token` holds bytes a cookie cannot carry (never for a
    ///   token the service made).
    mutating func setBrowserSessionCookie(_ token: String, maxAge: Int) throws(CookieError) {
        setCookie(try SetCookie(name: BrowserCookies.sessionName, value: token, maxAge: maxAge))
    }

    /// Tells the browser to delete the browser session cookie (after signing out).
    mutating func clearBrowserSessionCookie() {
        // The name and attributes are constants that SetCookie accepts.
        if let cookie = try? SetCookie.expired(name: BrowserCookies.sessionName) { setCookie(cookie) }
    }

    /// Sets the pre-session CSRF cookie, without `Max-Age`: it lasts until the browser closes.
    ///
    /// - Parameter value: A value from ``BrowserCookies/newCSRFValue()``.
    /// - Throws: ``CookieError`` when `value` holds bytes a cookie cannot carry.
    mutating func setPreSessionCSRFCookie(_ value: String) throws(CookieError) {
        setCookie(try SetCookie(name: BrowserCookies.csrfName, value: value))
    }

    /// Tells the browser to delete the pre-session CSRF cookie (once a browser session binds
    /// the forms instead).
    mutating func clearPreSessionCSRFCookie() {
        if let cookie = try? SetCookie.expired(name: BrowserCookies.csrfName) { setCookie(cookie) }
    }
}

/// What one hosted-page request tells the next across a 303 (S23: every POST answers with a
/// redirect, never a page): which form failed, why in words, and the username typed, never a
/// password. A `__Host-` cookie of one minute, read once.
struct HostedFlash: Sendable, Hashable {
    static let cookieName = "__Host-latchkey_flash"
    /// The pending second factor's `mfa_token` between the sign-in form and the code form.
    static let mfaCookieName = "__Host-latchkey_mfa"

    /// `sign_in`, `sign_up`, `second_factor`, or a page of the email flows (`password_reset`,
    /// `email_sign_in`, and their code pages `password_reset_code`, `email_sign_in_code`).
    var page: String
    var error: String?
    var username: String?

    init(page: String, error: String?, username: String?) {
        self.page = page
        self.error = error
        self.username = username
    }

    /// The flash a request carries, if any and well-formed.
    init?(_ request: HTTPRequest) {
        guard let value = request.cookies[Self.cookieName], let bytes = Base64URL.decode(value),
            let json = try? JSONValue(parsing: bytes), let page = json["page"]?.stringValue
        else { return nil }
        self.init(page: page, error: json["error"]?.stringValue, username: json["username"]?.stringValue)
    }

    /// 303 to `location`, carrying this flash.
    func redirect(to location: String) -> HTTPResponse {
        var response = HTTPResponse.seeOther(location)
        let json: JSONValue = ["page": .string(page), "error": .optional(error), "username": .optional(username)]
        // Base64url is all cookie-octets, so the cookie is always accepted.
        if let cookie = try? SetCookie(name: Self.cookieName, value: Base64URL.encode(Array(json.serializedString.utf8)), maxAge: 60) {
            response.setCookie(cookie)
        }
        return response
    }

    /// Deletes the flash once a page has shown it.
    static func clear(on response: inout HTTPResponse) {
        if let cookie = try? SetCookie.expired(name: cookieName) { response.setCookie(cookie) }
    }

    /// The pending second factor's token, if any.
    static func mfaToken(from request: HTTPRequest) -> String? {
        request.cookies[mfaCookieName].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Keeps the `mfa_token` for the code form, as long as the token itself lives.
    static func setMFAToken(_ token: String, on response: inout HTTPResponse) {
        if let cookie = try? SetCookie(name: mfaCookieName, value: token, maxAge: Int(MFAToken.lifetime)) { response.setCookie(cookie) }
    }

    static func clearMFAToken(on response: inout HTTPResponse) {
        if let cookie = try? SetCookie.expired(name: mfaCookieName) { response.setCookie(cookie) }
    }
}
