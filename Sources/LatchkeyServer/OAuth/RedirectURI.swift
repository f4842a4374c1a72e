/// The rules for the redirect URIs a client registers, and how a presented one is matched
/// against them (docs/security.md S20; RFC 8252 §7 for native clients).
///
/// A registered URI is one of:
/// - `https://host/…`: a web client, or a native client's claimed `https` URI (universal link);
/// - `http://127.0.0.1/…` or `http://[::1]/…`: a native client's loopback listener; registered
///   without a port it matches any port (RFC 8252 §7.3), with one only that port;
/// - `com.example.app:/…`: a native client's private-use scheme, reverse-DNS with a dot, for
///   public clients only (RFC 8252 §7.1).
///
/// Refused at registration: relative URIs, fragments, userinfo, `*`, a percent-encoded host, the
/// host `localhost` (it may resolve to something else, RFC 8252 §8.3), plain `http` anywhere
/// else, other schemes, spaces, control and non-ASCII characters, backslashes.
///
/// Matching compares exact strings: nothing is decoded, normalised or case-folded, so
/// `https://app.example/cb`, `https://app.example/cb/`, `https://APP.example/cb` and
/// `https://app.example%2Fcb` are four different URIs.
enum RedirectURI {
    /// The longest URI accepted at registration.
    static let maximumLength = 2000

    /// The two loopback origins without a port, the forms that match any port.
    static let loopbackOrigins = ["http://127.0.0.1", "http://[::1]"]

    /// Checks a URI a client wants to register.
    ///
    /// - Parameters:
    ///   - uri: The URI as it will be stored and matched.
    ///   - confidential: Whether the client has a secret; private-use schemes are for public
    ///     (native) clients only.
    /// - Throws: `invalid_request` naming the rule the URI breaks.
    static func validate(_ uri: String, confidential: Bool) throws(AuthError) {
        func refuse(_ rule: String) -> AuthError {
            // The URI is the operator's own input, not a secret; quoting it says which one.
            .invalidRequest("redirect URI \(uri.count > 200 ? String(uri.prefix(200)) + "…" : uri): \(rule)")
        }
        guard !uri.isEmpty else { throw .invalidRequest("a redirect URI must not be empty") }
        guard uri.utf8.count <= maximumLength else { throw refuse("longer than \(maximumLength) bytes") }
        guard uri.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw refuse("spaces, control and non-ASCII characters are not allowed")
        }
        guard !uri.contains("\\") else { throw refuse("backslashes are not allowed") }
        guard !uri.contains("#") else { throw refuse("a fragment (#) is not allowed") }
        guard !uri.contains("*") else { throw refuse("wildcards (*) are not allowed") }
        guard let colon = uri.firstIndex(of: ":") else { throw refuse("must be an absolute URI with a scheme") }
        let scheme = uri[..<colon]
        func isLetter(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
        guard let first = scheme.unicodeScalars.first, isLetter(first),
            scheme.unicodeScalars.allSatisfy({ isLetter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { throw refuse("must be an absolute URI with a scheme") }
        guard scheme == scheme.lowercased() else { throw refuse("the scheme must be lowercase") }
        let rest = uri[uri.index(after: colon)...]
        guard !rest.isEmpty else { throw refuse("must have more than a scheme") }

        var authority: Substring?
        if rest.hasPrefix("//") {
            authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
            guard authority?.contains("@") != true else { throw refuse("userinfo (user@) is not allowed") }
            // A browser decodes `%6Cocalhost` to `localhost`: the host is checked as it is written.
            guard authority?.contains("%") != true else { throw refuse("percent-encoding in the host is not allowed") }
        }
        var host: Substring?
        var port: Substring?
        if let authority, scheme == "https" || scheme == "http" { (host, port) = try split(authority: authority, refuse) }

        switch scheme {
        case "https":
            guard let host else { throw refuse("an https URI needs a host (https://host/…)") }
            try refuseLocalhost(host, refuse)
            if let port { try checkPort(port, refuse) }
        case "http":
            guard let host else { throw refuse("an http URI needs a host") }
            try refuseLocalhost(host, refuse)
            guard host == "127.0.0.1" || host == "[::1]" else {
                throw refuse("plain http is allowed only for the loopback addresses 127.0.0.1 and [::1]; use https")
            }
            if let port { try checkPort(port, refuse) }
        default:
            guard scheme.contains("."), !scheme.hasPrefix("."), !scheme.hasSuffix("."), !scheme.contains("..") else {
                throw refuse("a private-use scheme must be in reverse-DNS form with a dot, like com.example.app:/oauth/callback")
            }
            guard !confidential else {
                throw refuse("private-use schemes are for public (native) clients; a confidential client needs https")
            }
            if let authority { try refuseLocalhost(authority.prefix { $0 != ":" }, refuse) }
        }
    }

    /// Whether `presented` is the registered URI `registered`: the same string, or, for a
    /// loopback URI registered without a port, the same string with a port after the address.
    static func matches(registered: String, presented: String) -> Bool {
        if registered == presented { return true }
        for origin in loopbackOrigins where registered.hasPrefix(origin) {
            let registeredRest = registered.dropFirst(origin.count)
            // A registered port, or anything else after the address than a path or a query, matches exactly only.
            guard registeredRest.isEmpty || registeredRest.hasPrefix("/") || registeredRest.hasPrefix("?") else { return false }
            guard presented.hasPrefix(origin + ":") else { return false }
            let afterColon = presented.dropFirst(origin.count + 1)
            let digits = afterColon.prefix { ("0"..."9").contains($0) }
            guard isPort(digits) else { return false }
            return afterColon.dropFirst(digits.count) == registeredRest
        }
        return false
    }

    /// Splits `host[:port]` (or `[v6]:port`); an empty host is refused.
    private static func split(
        authority: Substring, _ refuse: (String) -> AuthError
    ) throws(AuthError) -> (host: Substring, port: Substring?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("an IPv6 address needs its closing ]") }
            let host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty { return (host, nil) }
            guard after.hasPrefix(":") else { throw refuse("unexpected characters after the IPv6 address") }
            return (host, after.dropFirst())
        }
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty else { throw refuse("the host must not be empty") }
        return (host, parts.count == 2 ? parts[1] : nil)
    }

    private static func refuseLocalhost(_ host: Substring, _ refuse: (String) -> AuthError) throws(AuthError) {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "localhost." || lowered.hasSuffix(".localhost") || lowered.hasSuffix(".localhost.") {
            throw refuse("localhost is not allowed; use the loopback address http://127.0.0.1 or http://[::1]")
        }
    }

    private static func checkPort(_ port: Substring, _ refuse: (String) -> AuthError) throws(AuthError) {
        guard isPort(port) else { throw refuse("the port must be a number from 1 to 65535") }
    }

    /// 1–65535 in decimal, without a leading zero.
    private static func isPort(_ digits: Substring) -> Bool {
        guard !digits.isEmpty, digits.count <= 5, digits.first != "0", digits.allSatisfy({ ("0"..."9").contains($0) }),
            let value = Int(digits)
        else { return false }
        return value <= 65535
    }
}
