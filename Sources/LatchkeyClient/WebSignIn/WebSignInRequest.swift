public import Foundation

/// One web sign-in in progress: the authorize URL to open in a browser, and what the answer must
/// match. Made by ``LatchkeyClient/beginWebSignIn(redirectURI:scopes:prompt:loginHint:provider:)``, used
/// once by ``LatchkeyClient/completeWebSignIn(_:callbackURL:)``.
///
/// The PKCE verifier and the OpenID nonce never leave the request (the URL carries only the
/// verifier's challenge); keep the request in memory only, for the one sign-in.
public struct WebSignInRequest: Sendable, Hashable {
    /// The server's `/oauth/authorize` URL with every parameter, to open in a browser.
    public let url: URL
    /// Where the server sends the browser back: the redirect URI registered for the client.
    public let redirectURI: String
    /// The random `state` the callback must carry back.
    public let state: String
    /// How a system browser session recognises the callback, or `nil` for a redirect URI that
    /// neither is `https` nor has a reverse-DNS scheme (a loopback `http` URI for a tool).
    public let callback: WebSignInCallback?
    /// The upstream provider the server sends the browser to (`google`, `github`, …) instead of
    /// its own sign-in page, or `nil` for the sign-in page.
    public let provider: String?

    /// The PKCE verifier (RFC 7636), sent only with the code exchange.
    let verifier: String
    /// The OpenID nonce the ID token must echo.
    let nonce: String
    /// The client the code is for.
    let clientID: String
    /// The server's issuer: its URL without a trailing slash, what the callback's `iss` must be.
    let issuer: String

    /// A request to `authorizeURL` (the server's `/oauth/authorize`) with fresh random values.
    ///
    /// - Throws: ``LatchkeyError/Code/invalidConfiguration`` for a redirect URI that is not an
    ///   absolute URI, or that has a query or a fragment, or a provider id that is not
    ///   `[a-z0-9-]{1,32}`.
    init(
        authorizeURL: URL, issuer: String, clientID: String, redirectURI: String, scopes: [String], prompt: String?, loginHint: String?,
        provider: String? = nil, using generator: inout some RandomNumberGenerator
    ) throws {
        guard let redirect = URLComponents(string: redirectURI), let scheme = redirect.scheme, !scheme.isEmpty else {
            throw LatchkeyError(.invalidConfiguration, "the redirect URI is not an absolute URI")
        }
        guard redirect.percentEncodedQuery == nil, redirect.percentEncodedFragment == nil else {
            throw LatchkeyError(.invalidConfiguration, "the redirect URI must have no query and no fragment")
        }
        if let provider { try Self.checkProviderID(provider) }
        self.redirectURI = redirectURI
        self.provider = provider
        self.clientID = clientID
        self.issuer = issuer
        self.verifier = PKCE.makeVerifier(using: &generator)
        self.state = WebSignInRandom.token(using: &generator)
        self.nonce = WebSignInRandom.token(using: &generator)
        self.callback = WebSignInCallback(redirect)

        var parameters = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
        ]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        parameters += [
            ("state", state), ("nonce", nonce), ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
        ]
        if let prompt { parameters.append(("prompt", prompt)) }
        if let loginHint { parameters.append(("login_hint", loginHint)) }
        if let provider { parameters.append(("provider", provider)) }
        guard let url = URL(string: authorizeURL.absoluteString + "?" + FormEncoding.encode(parameters)) else {
            throw LatchkeyError(.invalidConfiguration, "the server URL cannot carry an authorize request")
        }
        self.url = url
    }
}

/// How a system browser session (Apple's `ASWebAuthenticationSession`) knows the navigation that
/// ends a web sign-in.
public enum WebSignInCallback: Sendable, Hashable {
    /// An `https` redirect URI on a domain associated with the app (`webcredentials:`): the
    /// session ends at this host and path. Needs iOS 17.4 / macOS 14.4.
    case https(host: String, path: String)
    /// A private-use scheme in reverse-DNS form (`com.example.app:/oauth/callback`): the session
    /// ends at the first URL with this scheme.
    case customScheme(String)

    /// The callback for a redirect URI: `https` with a host, or a scheme with a dot.
    init?(_ redirect: URLComponents) {
        guard let scheme = redirect.scheme?.lowercased() else { return nil }
        if scheme == "https", let host = redirect.host, !host.isEmpty {
            self = .https(host: host, path: redirect.path.isEmpty ? "/" : redirect.path)
        } else if scheme.contains("."), scheme != "https", scheme != "http" {
            self = .customScheme(scheme)
        } else {
            return nil
        }
    }
}

extension WebSignInRequest {
    /// The authorization code of `callbackURL`, when it is this request's answer.
    ///
    /// Refused without any network call: a callback to another scheme, host, port or path than
    /// the redirect URI; a repeated parameter; an `iss` that is missing or not the server's; a
    /// `state` that is missing or not this request's (compared in constant time); a missing code.
    ///
    /// - Throws: ``LatchkeyError/Code/invalidCallback`` for any of those;
    ///   ``LatchkeyError/Code/canceled`` (reason `access_denied`) when the user declined;
    ///   ``LatchkeyError/Code/webSignIn(error:)`` for another OAuth error answer.
    func code(from callbackURL: URL) throws -> String {
        guard let callback = URLComponents(url: callbackURL, resolvingAgainstBaseURL: false),
            let redirect = URLComponents(string: redirectURI),
            callback.scheme?.lowercased() == redirect.scheme?.lowercased(),
            callback.host?.lowercased() == redirect.host?.lowercased(),
            callback.port == redirect.port,
            callback.percentEncodedPath == redirect.percentEncodedPath
        else {
            throw LatchkeyError(.invalidCallback, "the callback is not to the request's redirect URI")
        }
        guard let pairs = FormEncoding.decode(callback.percentEncodedQuery ?? "") else {
            throw LatchkeyError(.invalidCallback, "the callback's query is not valid percent-encoded UTF-8")
        }
        var parameters: [String: String] = [:]
        for pair in pairs {
            guard parameters.updateValue(pair.value, forKey: pair.name) == nil else {
                throw LatchkeyError(.invalidCallback, "the callback repeats the parameter \(pair.name)")
            }
        }
        // RFC 9207: the issuer first, so that an answer from another server is never read further.
        guard let iss = parameters["iss"] else {
            throw LatchkeyError(.invalidCallback, "the callback has no iss; it did not come from a Latchkey server")
        }
        guard iss == issuer else {
            throw LatchkeyError(.invalidCallback, "the callback's iss is not this server's issuer")
        }
        guard let state = parameters["state"], Self.constantTimeEqual(state, self.state) else {
            throw LatchkeyError(.invalidCallback, "the callback's state is not this request's")
        }
        if let error = parameters["error"] {
            let description = parameters["error_description"].map { ": " + $0 } ?? ""
            if error == "access_denied" {
                throw LatchkeyError(.canceled, "the user declined the sign-in" + description, reason: error)
            }
            throw LatchkeyError(.webSignIn(error: error), "the server refused the sign-in (\(error))" + description)
        }
        guard let code = parameters["code"], !code.isEmpty else {
            throw LatchkeyError(.invalidCallback, "the callback has neither a code nor an error")
        }
        return code
    }

    /// Checks a provider id before it goes into a URL or a path: 1 to 32 of `a-z`, `0-9` and `-`,
    /// as the server's configuration allows.
    ///
    /// - Throws: ``LatchkeyError/Code/invalidConfiguration`` for anything else.
    static func checkProviderID(_ id: String) throws {
        let allowed = id.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...32).contains(id.utf8.count) else {
            throw LatchkeyError(.invalidConfiguration, "a provider id is 1 to 32 of a-z, 0-9 and -")
        }
    }

    /// Whether `a` and `b` are equal, in a time that depends only on their lengths.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count) | (left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
