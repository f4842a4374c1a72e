internal import CLatchkeyEvent
import Glibc
import LatchkeyHTTP

/// The one listening socket every event loop accepts from.
///
/// Design: a single socket with an accept event in each loop, rather than one `SO_REUSEPORT`
/// socket per loop. With one socket the bind is exclusive, so a second server on the same port
/// fails with "address in use" instead of silently sharing the traffic (`SO_REUSEPORT` lets any
/// process of the same user join the group), stopping is one `shutdown(2)`, and a connection
/// waits in one shared backlog for whichever loop is free, instead of in the queue of the loop
/// the kernel's hash picked. The cost is that every loop wakes for each new connection and all
/// but one find nothing to accept: one extra wake-up per loop per connection, small next to a
/// request and rare with the long-lived keep-alive connections API clients use.
enum ListeningSocket {
    static func open(host: String, port: Int, backlog: Int32) throws(HTTPServerError) -> (fd: Int32, port: Int) {
        guard (0...65535).contains(port) else {
            throw HTTPServerError(.invalidAddress, "port \(port) is not between 0 and 65535")
        }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPServerError(.invalidAddress, "cannot listen on \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let info = first.pointee
        let fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError(.socketFailed, "socket(): \(errorText())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let display = info.ai_family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard bind(fd, info.ai_addr, info.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(fd)
            if code == EADDRINUSE { throw HTTPServerError(.addressInUse, "\(display) is already in use") }
            if code == EADDRNOTAVAIL { throw HTTPServerError(.invalidAddress, "\(host) is not an address of this machine") }
            throw HTTPServerError(.socketFailed, "cannot bind \(display): \(String(cString: strerror(code)))")
        }
        guard listen(fd, backlog) == 0 else {
            let text = errorText()
            Glibc.close(fd)
            throw HTTPServerError(.socketFailed, "cannot listen on \(display): \(text)")
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(peerPort(address)))
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }

    private static func peerPort(_ address: sockaddr_storage) -> UInt16 {
        var address = address
        return withUnsafeBytes(of: &address) { raw in
            // sin_port and sin6_port sit at the same offset, in network order.
            UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
        }
    }

    /// The IP address of a peer as text; IPv4-mapped IPv6 addresses as plain IPv4, so that rate
    /// limits and logs see one form per client.
    static func addressText(_ address: inout sockaddr_storage) -> String {
        let family = Int32(address.ss_family)
        return withUnsafeBytes(of: &address) { raw in
            switch family {
            case AF_INET: IPNetwork.text(of: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + raw[4..<8])
            case AF_INET6: IPNetwork.text(of: Array(raw[8..<24]))
            default: "unknown"
            }
        }
    }
}
