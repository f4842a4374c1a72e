package import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A scripted browser for the hosted pages: it keeps cookies by hand (the pages' cookies are
/// `__Host-` and `Secure`, which URLSession's jar would not send over the loopback's plain
/// http, though browsers do for 127.0.0.1), never follows a redirect by itself, and reads the
/// one form of a page. A cross-site POST (an identity provider's form post) carries only the
/// cookies set `SameSite=None`, as browsers send them.
package final class HostedBrowser: Sendable {
    /// One answer, as the browser got it.
    package struct Page: Sendable {
        package var status: Int
        package var location: String?
        /// The header fields by lowercased name; several `Set-Cookie` fields come joined with ", ".
        package var headers: [String: String]
        /// The `Set-Cookie` fields, one each.
        package var setCookies: [String]
        package var text: String

        package init(status: Int, location: String?, headers: [String: String], setCookies: [String] = [], text: String) {
            self.status = status
            self.location = location
            self.headers = headers
            self.setCookies = setCookies
            self.text = text
        }

        /// The page's form: its action and its hidden fields.
        package var form: (action: String, fields: [String: String])? { Self.form(in: text) }

        /// The action and hidden fields of the one form of `text`, unescaped.
        package static func form(in text: String) -> (action: String, fields: [String: String])? {
            guard let action = Self.first(#"<form[^>]*action="([^"]*)""#, in: text) else { return nil }
            var fields = [String: String]()
            let pattern = try! NSRegularExpression(pattern: #"<input type="hidden" name="([^"]+)" value="([^"]*)""#)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[Range(match.range(at: 1), in: text)!])
                fields[Self.unescape(name)] = Self.unescape(String(text[Range(match.range(at: 2), in: text)!]))
            }
            return (Self.unescape(action), fields)
        }

        static func first(_ pattern: String, in text: String) -> String? {
            let expression = try! NSRegularExpression(pattern: pattern)
            guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
            return String(text[Range(match.range(at: 1), in: text)!])
        }

        static func unescape(_ text: String) -> String {
            text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    /// A page that did not go as the script expected.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = "HostedBrowser: " + description }
    }

    package let base: URL
    private let session = URLSession(configuration: HostedBrowser.configuration, delegate: NoRedirects(), delegateQueue: nil)

    /// Ephemeral and without URLSession's own cookie handling, which would otherwise keep and
    /// send cookies of its own beside the jar's (and send them on a cross-site POST too).
    private static var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return configuration
    }
    private let jar = Mutex<[String: Cookie]>([:])

    private struct Cookie: Sendable {
        var value: String
        var sameSiteNone: Bool
    }

    /// Header fields sent with every request (`Accept-Language`, say).
    package let headers: [String: String]

    package init(base: URL, headers: [String: String] = [:]) {
        self.base = base
        self.headers = headers
    }

    /// The cookies the browser holds, by name.
    package var cookies: [String: String] { jar.withLock { $0.mapValues(\.value) } }

    /// The names of the cookies set `SameSite=None`.
    package var sameSiteNoneCookies: Set<String> { jar.withLock { Set($0.filter(\.value.sameSiteNone).keys) } }

    /// Puts a cookie in the jar as a server would have set it (a test replaying what it kept).
    package func setCookie(_ name: String, _ value: String, sameSiteNone: Bool = false) {
        jar.withLock { $0[name] = Cookie(value: value, sameSiteNone: sameSiteNone) }
    }

    package func get(_ url: String) async throws -> Page { try await send("GET", url, form: nil, crossSite: false) }

    /// Posts a form; `crossSite` when another site's page posts it, which carries only the
    /// `SameSite=None` cookies.
    package func post(_ url: String, form: [String: String], crossSite: Bool = false) async throws -> Page {
        try await send("POST", url, form: form, crossSite: crossSite)
    }

    /// Follows 302/303s on this server and stops at the first that leaves it (a client's
    /// callback), returned as `location` of the last page.
    package func follow(_ page: Page, limit: Int = 10) async throws -> Page {
        var page = page
        for _ in 0..<limit {
            guard [302, 303].contains(page.status), let location = page.location else { return page }
            guard location.hasPrefix("/") || location.hasPrefix(base.absoluteString) else { return page }
            page = try await get(location)
        }
        throw Failure("too many redirects")
    }

    /// Posts the page's form with `fields` added, and follows.
    package func submit(_ page: Page, _ fields: [String: String]) async throws -> Page {
        guard let form = page.form else { throw Failure("the page has no form: \(page.text.prefix(300))") }
        return try await follow(try await post(form.action, form: form.fields.merging(fields) { $1 }))
    }

    private func send(_ method: String, _ url: String, form: [String: String]?, crossSite: Bool) async throws -> Page {
        let target = url.hasPrefix("/") ? URL(string: base.absoluteString.trimmingSuffix("/") + url)! : URL(string: url)!
        var request = URLRequest(url: target)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let cookies = jar.withLock { $0.filter { !crossSite || $0.value.sameSiteNone } }
        if !cookies.isEmpty { request.setValue(cookies.map { "\($0.key)=\($0.value.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie") }
        if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(Self.encode(form).utf8)
        }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers = [String: String]()
        for case (let name as String, let value as String) in http.allHeaderFields { headers[name.lowercased()] = value }
        let setCookies = Self.splitCookies(headers["set-cookie"]).map(String.init)
        for field in setCookies { Self.store(field, in: jar) }
        return Page(
            status: http.statusCode, location: headers["location"], headers: headers, setCookies: setCookies,
            text: String(decoding: data, as: UTF8.self))
    }

    /// URLSession joins several `Set-Cookie` fields with ", ": split at a comma that starts a
    /// new `name=` pair (the cookies here carry no `Expires` with commas but the deleting ones).
    private static func splitCookies(_ joined: String?) -> [Substring] {
        guard let joined else { return [] }
        let expression = try! NSRegularExpression(pattern: #",\s*(?=__(Host|Secure)-)"#)
        let marked = expression.stringByReplacingMatches(in: joined, range: NSRange(joined.startIndex..., in: joined), withTemplate: "\n")
        return marked.split(separator: "\n")
    }

    private static func store(_ field: String, in jar: borrowing Mutex<[String: Cookie]>) {
        let pair = field.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        guard let equals = pair.firstIndex(of: "=") else { return }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = String(pair[pair.index(after: equals)...])
        jar.withLock { cookies in
            let attributes = field.lowercased()
            if attributes.contains("max-age=0") {
                cookies[name] = nil
            } else {
                cookies[name] = Cookie(value: value, sameSiteNone: attributes.contains("samesite=none"))
            }
        }
    }

    package static func encode(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return form.map { "\($0.key.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }
            .joined(separator: "&")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
