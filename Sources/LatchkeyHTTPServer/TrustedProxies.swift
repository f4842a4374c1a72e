import Glibc
import LatchkeyBasics
import LatchkeyHTTP

/// The reverse proxies (load balancers, TLS terminators) whose `X-Forwarded-For` the server
/// believes, so that per-IP limits, the audit log and the access log see the client rather than
/// the proxy.
///
/// A request from an address outside the list keeps its peer address whatever it sends. A
/// request from a listed proxy gets the rightmost `X-Forwarded-For` address that is not itself
/// a listed proxy: each proxy appends the address it saw, so entries to the left of the first
/// untrusted one were written by the client and prove nothing.
package struct TrustedProxies: Sendable, Hashable {
    /// The networks, as configured.
    package let networks: [IPNetwork]

    /// No proxy is trusted: every request keeps its peer address.
    package static let none = TrustedProxies(networks: [])

    /// Creates the list.
    package init(networks: [IPNetwork]) {
        self.networks = networks
    }

    /// Whether `address` (an IP literal) is one of the proxies.
    package func contains(_ address: String) -> Bool {
        guard let bytes = IPNetwork.bytes(of: address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client's address for a request from `peer` with these `X-Forwarded-For` field values.
    package func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard !networks.isEmpty, !forwardedFor.isEmpty, contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { String($0.trimmingWhitespace()) }
        var client = peer
        for hop in hops.reversed() {
            // A hop that is no address was not written by a proxy we trust; stop at what we have.
            guard let bytes = IPNetwork.bytes(of: hop) else { return client }
            client = IPNetwork.text(of: bytes)
            if !networks.contains(where: { $0.contains(bytes) }) { return client }
        }
        return client
    }
}

/// An IPv4 or IPv6 network: an address and a prefix length (`10.0.0.0/8`, `fd00::/8`), or one
/// address (`192.0.2.7`, `::1`). IPv4 addresses are kept in their IPv6-mapped form
/// (`::ffff:a.b.c.d`), so a dual-stack socket's peers match IPv4 networks.
package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    private let address: [UInt8]
    private let prefixLength: Int
    package let description: String

    /// Parses `text`; `nil` when it is neither an address nor `address/prefix`.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.bytes(of: String(parts[0])) else { return nil }
        let isIPv4 = !parts[0].contains(":")
        let maximum = isIPv4 ? 32 : 128
        var prefixLength = maximum
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length) else { return nil }
            prefixLength = length
        }
        self.address = address
        self.prefixLength = isIPv4 ? prefixLength + 96 : prefixLength
        self.description = text
    }

    /// Whether the 16-byte address lies in the network.
    func contains(_ other: [UInt8]) -> Bool {
        var remaining = prefixLength
        for index in 0..<16 where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if address[index] & mask != other[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// The 16 bytes of an IPv6 literal, or of an IPv4 literal mapped into IPv6.
    package static func bytes(of text: String) -> [UInt8]? {
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        var v4 = in_addr()
        guard inet_pton(AF_INET, text, &v4) == 1 else { return nil }
        return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + withUnsafeBytes(of: &v4) { Array($0) }
    }

    /// The canonical text of 16 address bytes: dotted IPv4 for a mapped address.
    static func text(of bytes: [UInt8]) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12..<16]) }
            _ = inet_ntop(AF_INET, &v4, &text, socklen_t(text.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            _ = inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count))
        }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
