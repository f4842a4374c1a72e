import LatchkeyHTTP

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
