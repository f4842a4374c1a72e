import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The user's browser in the provider chapter: opens the app's authorization request, follows
/// the server's and the sandbox provider's redirects with their cookies, fills in the sandbox
/// provider's page as a person would (an email, "verified", Continue), and stops where the server
/// sends it back to the app, whose URL it returns, as `ASWebAuthenticationSession` does.
final class SandboxBrowser: NSObject, URLSessionTaskDelegate, Sendable {
    let email: String
    let name: String

    init(email: String, name: String) {
        self.email = email
        self.name = name
    }

    /// Walks from `start` to the first redirect to a non-http URL (the app's redirect URI).
    func open(_ start: URL) async throws -> URL {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var cookies: [String: String] = [:]
        var request = URLRequest(url: start)
        for _ in 0..<12 {
            if !cookies.isEmpty { request.setValue(cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie") }
            let (_, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse, let url = request.url else { throw DemoFailure("no HTTP answer from \(start.host ?? "")") }
            for case (let field as String, let value as String) in http.allHeaderFields where field.lowercased() == "set-cookie" {
                for cookie in value.components(separatedBy: ", ") {
                    let pair = cookie.prefix { $0 != ";" }.split(separator: "=", maxSplits: 1).map(String.init)
                    guard pair.count == 2 else { continue }
                    if cookie.contains("Max-Age=0") { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
                }
            }
            if http.statusCode == 200, url.path.hasSuffix("/sandbox/oidc/authorize") {
                // The sandbox provider's page: its form posts the request's parameters back with
                // what the person typed.
                var fields = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                fields += [.init(name: "email", value: email), .init(name: "name", value: name), .init(name: "email_verified", value: "true"),
                           .init(name: "action", value: "continue")]
                var body = URLComponents()
                body.queryItems = fields
                request = URLRequest(url: URL(string: url.absoluteString.components(separatedBy: "?")[0])!)
                request.httpMethod = "POST"
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data((body.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B").utf8)
                continue
            }
            guard [302, 303].contains(http.statusCode), let location = http.value(forHTTPHeaderField: "Location"),
                let next = URL(string: location, relativeTo: url)?.absoluteURL
            else { throw DemoFailure("the browser stopped at \(url.path) with \(http.statusCode)") }
            if next.scheme != "http" && next.scheme != "https" { return next }
            request = URLRequest(url: next)
        }
        throw DemoFailure("too many redirects from \(start.path)")
    }

    /// Redirects are followed by ``open(_:)``, which keeps the cookies.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
