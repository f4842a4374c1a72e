import Foundation
import Glibc
import LatchkeyHTTP
import LatchkeyJOSE
import Synchronization
import Testing

/// Limits short enough for tests to see timeouts happen.
func testLimits(_ change: (inout HTTPServer.Limits) -> Void = { _ in }) -> HTTPServer.Limits {
    var limits = HTTPServer.Limits()
    limits.headerTimeout = .seconds(2)
    limits.bodyTimeout = .seconds(2)
    limits.idleTimeout = .seconds(5)
    change(&limits)
    return limits
}

/// Runs `body` against a fresh server on an ephemeral port, and shuts it down after.
func withServer<T>(
    _ router: Router, limits: HTTPServer.Limits = testLimits(), eventLoops: Int = 2, accessLog: (any AccessLogSink)? = nil,
    shutdownDeadline: Duration = .seconds(5), _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
    var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, eventLoops: eventLoops, limits: limits)
    configuration.shutdownDeadline = shutdownDeadline
    let server = HTTPServer(configuration: configuration, responder: router, accessLog: accessLog)
    try server.start()
    do {
        let result = try await body(server, server.boundPort)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// A parsed response read from a raw socket.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var json: JSONValue? { try? JSONValue(parsing: body) }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking client socket with a receive timeout, for talking HTTP by hand.
final class RawConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, receiveTimeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout.truncatingRemainder(dividingBy: 1)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends all of `bytes`; `false` when the server closed or reset the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads more bytes; `nil` at end of stream, reset, or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// Reads one response; `nil` when the connection ended (or timed out) first.
    func readResponse(headRequest: Bool = false) -> RawResponse? {
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
                var headers: [(String, String)] = []
                for line in lines where !line.isEmpty {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                }
                let length = headRequest ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
                while buffer.count < end + length { guard fill() else { return nil } }
                let body = Array(buffer[end..<(end + length)])
                buffer.removeFirst(end + length)
                if status == 100 { continue }
                return RawResponse(status: status, headers: headers, body: body)
            }
            guard fill() else { return nil }
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// Whether the server closes the connection (EOF or reset) within `seconds`, ignoring data.
    func closesWithin(seconds: Double) -> Bool {
        let start = Date()
        var chunk = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while Date().timeIntervalSince(start) < seconds {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { return true }
        }
        return false
    }
}

func get(_ path: String, headers: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\(headers)\r\n"
}

func post(_ path: String, contentType: String = "application/json", body: String, headers: String = "") -> String {
    "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n\(headers)\r\n\(body)"
}

/// One request on a fresh connection.
func exchange(_ port: Int, _ request: String) throws -> RawResponse? {
    let connection = try RawConnection(port: port)
    connection.send(request)
    return connection.readResponse(headRequest: request.hasPrefix("HEAD "))
}

/// A gate an async handler waits on until the test opens it.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    let arrivals = Atomic<Int>(0)

    func wait() async {
        arrivals.add(1, ordering: .relaxed)
        await withCheckedContinuation { continuation in
            let resume = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resume { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitForArrivals(_ count: Int) async {
        while arrivals.load(ordering: .relaxed) < count { try? await Task.sleep(for: .milliseconds(5)) }
    }
}

/// Collects access-log entries in memory.
final class MemoryAccessLog: AccessLogSink {
    let entries = Mutex<[AccessLogEntry]>([])
    func record(_ entry: AccessLogEntry) { entries.withLock { $0.append(entry) } }
}
