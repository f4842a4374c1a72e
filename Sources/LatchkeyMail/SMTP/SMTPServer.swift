/// Where mail goes and how it is protected on the way, from `email.smtp_url`.
package struct SMTPServer: Sendable, Hashable, CustomStringConvertible {
    package enum Security: Sendable, Hashable {
        /// `smtp://`: plain at first, then STARTTLS, which the server must offer (RFC 3207).
        case startTLS
        /// `smtps://`: TLS from the first byte (RFC 8314).
        case implicitTLS
        /// `smtp+plain://`: no TLS at all, for a relay on the same machine.
        case plain
    }

    package var security: Security
    package var host: String
    package var port: Int

    /// Reads `smtp://host[:port]`, `smtps://host[:port]` or `smtp+plain://host[:port]`; the
    /// ports default to 587, 465 and 25. No user, password, path or query: credentials have
    /// settings of their own.
    ///
    /// - Returns: `nil` for anything else.
    package init?(url: String) {
        let schemes: [(String, Security, Int)] = [("smtp://", .startTLS, 587), ("smtps://", .implicitTLS, 465), ("smtp+plain://", .plain, 25)]
        guard let (prefix, security, defaultPort) = schemes.first(where: { url.lowercased().hasPrefix($0.0) }) else { return nil }
        var authority = Substring(url.dropFirst(prefix.count))
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, !authority.contains(where: { "@/?#".contains($0) }) else { return nil }
        var host = authority
        var port = defaultPort
        if authority.hasPrefix("[") {
            // An IPv6 literal: [address] or [address]:port.
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = authority.lastIndex(of: ":") {
            guard let number = Int(authority[authority.index(after: colon)...]) else { return nil }
            host = authority[..<colon]
            port = number
        }
        guard !host.isEmpty, (1...65535).contains(port),
            host.utf8.allSatisfy({ $0 < 0x80 && ($0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ":")
                || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)) })
        else { return nil }
        self.security = security
        self.host = host.lowercased()
        self.port = port
    }

    package var description: String {
        let scheme = switch security {
        case .startTLS: "smtp"
        case .implicitTLS: "smtps"
        case .plain: "smtp+plain"
        }
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
