/// A `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETERS]` URL (`postgresql://` too),
/// checked just enough to say what is wrong before libpq reads it, and shown without its
/// password.
package struct PostgreSQLURL: Sendable, Hashable {
    /// The URL as given; libpq parses it again when it connects.
    package let text: String
    /// Whether the URL carries a password (`user:password@`).
    package let hasPassword: Bool
    /// The host part, empty for libpq's default (a Unix socket).
    package let host: String

    /// Whether `text` is meant as a PostgreSQL URL (by its scheme).
    ///
    /// - Parameter text: A `database` setting.
    /// - Returns: Whether it starts with `postgres://` or `postgresql://`.
    package static func isPostgreSQL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// Parses a URL.
    ///
    /// - Parameter text: The URL.
    /// - Throws: ``StoreError/Code/misuse`` naming what is wrong (never quoting the password).
    package init(_ text: String) throws {
        guard Self.isPostgreSQL(text) else {
            throw StoreError.misuse("a PostgreSQL URL starts with postgres:// or postgresql://")
        }
        let rest = text[text.firstRange(of: "://")!.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostPart: Substring
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hasPassword = userInfo.contains(":") || rest[authorityEnd...].contains("password=")
            hostPart = authority[authority.index(after: at)...]
        } else {
            hasPassword = rest[authorityEnd...].contains("password=")
            hostPart = authority
        }
        // The port, when there is one, is digits; IPv6 hosts are in brackets.
        for host in hostPart.split(separator: ",") {
            let portStart: Substring.Index?
            if host.hasPrefix("[") {
                guard let close = host.firstIndex(of: "]") else { throw StoreError.misuse("PostgreSQL URL: an IPv6 host needs its closing ]") }
                portStart = host[close...].firstIndex(of: ":")
            } else {
                portStart = host.firstIndex(of: ":")
            }
            if let portStart {
                let port = host[host.index(after: portStart)...]
                guard !port.isEmpty, port.allSatisfy(\.isASCII), let number = Int(port), (1...65535).contains(number) else {
                    throw StoreError.misuse("PostgreSQL URL: the port must be a number from 1 to 65535")
                }
            }
        }
        self.text = text
        self.host = String(hostPart)
    }

    /// The URL with its password replaced by `***`, for banners and logs.
    package var redacted: String { Self.redact(text) }

    /// `text` with the password of a PostgreSQL URL replaced by `***`; anything else unchanged.
    ///
    /// - Parameter text: A `database` setting.
    /// - Returns: The text safe to show.
    package static func redact(_ text: String) -> String {
        guard isPostgreSQL(text), let schemeEnd = text.firstRange(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var redacted = String(text[..<schemeEnd.upperBound])
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            redacted += authority[..<colon] + ":***" + authority[at...]
        } else {
            redacted += authority
        }
        // A password may also sit in the query (`?password=`).
        var query = String(rest[authorityEnd...])
        if let range = query.firstRange(of: "password=") {
            let valueEnd = query[range.upperBound...].firstIndex(of: "&") ?? query.endIndex
            query.replaceSubrange(range.upperBound..<valueEnd, with: "***")
        }
        return redacted + query
    }
}
