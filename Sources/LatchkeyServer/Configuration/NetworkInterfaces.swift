import Glibc

/// This machine's own addresses, for `serve --dev --lan`.
package enum NetworkInterfaces {
    /// The IPv4 addresses of interfaces that are up, other than loopback and link-local
    /// (169.254/16, which a phone on the same Wi-Fi rarely shares); private ranges (10/8,
    /// 172.16/12, 192.168/16) first, since those are what a local network uses.
    package static func lanAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses = [String]()
        var cursor = first
        while let entry = cursor?.pointee {
            defer { cursor = entry.ifa_next }
            let flags = Int32(bitPattern: entry.ifa_flags)
            guard let address = entry.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            let octets = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr.s_addr) { Array($0) }
            }
            guard octets[0] != 127, !(octets[0] == 169 && octets[1] == 254) else { continue }
            let text = octets.map(String.init).joined(separator: ".")
            if !addresses.contains(text) { addresses.append(text) }
        }
        return addresses.filter(isPrivate) + addresses.filter { !isPrivate($0) }
    }

    private static func isPrivate(_ address: String) -> Bool {
        let octets = address.split(separator: ".").compactMap { Int($0) }
        return octets[0] == 10 || (octets[0] == 172 && (16...31).contains(octets[1])) || (octets[0] == 192 && octets[1] == 168)
    }
}
