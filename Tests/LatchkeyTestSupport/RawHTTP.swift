package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// HTTP over a plain socket, for tests that need what a client library hides: connection
/// refusals, half-written responses, hostile bytes.
package enum RawHTTP {
    /// What came back on one connection.
    package enum Result: Sendable, Equatable {
        /// The connection was refused or reset before any byte arrived.
        case refused
        /// Bytes arrived and the connection closed (or the timeout passed).
        case response([UInt8])
    }

    /// A blocking TCP connection to 127.0.0.1:`port` whose reads time out after `timeout`; the
    /// caller closes it.
    ///
    /// - Returns: The socket, or `nil` when the connection was refused.
    package static func connect(port: Int, timeout: TimeInterval) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Connects to 127.0.0.1:`port`, writes `request`, reads until the server closes or the
    /// timeout passes, and returns what arrived.
    package static func exchange(port: Int, _ request: [UInt8], timeout: TimeInterval = 10) -> Result {
        guard let descriptor = connect(port: port, timeout: timeout) else { return .refused }
        defer { close(descriptor) }
        var written = 0
        while written < request.count {
            let count = request[written...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }
            written += count
        }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return received.isEmpty ? .refused : .response(received)
    }

    /// A GET request that asks the server to close the connection after answering.
    package static func get(_ path: String) -> [UInt8] {
        Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    }

    /// A POST with a JSON body, closing the connection after the answer.
    package static func post(_ path: String, json: String) -> [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)".utf8)
    }

    /// Whether `bytes` hold one complete HTTP response: a status line, headers, and exactly the
    /// body its Content-Length announces. Returns the status and body when complete.
    package static func parse(_ bytes: [UInt8]) -> (status: Int, body: [UInt8])? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0...max(0, bytes.count - 4)).first(where: { Array(bytes[$0..<min(bytes.count, $0 + 4)]) == separator }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { return nil }
        let body = Array(bytes[(end + 4)...])
        let length = lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)) }
        guard let length, body.count == length else { return nil }
        return (status, body)
    }
}
