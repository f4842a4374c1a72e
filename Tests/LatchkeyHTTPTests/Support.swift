import Foundation
import Glibc
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
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
@discardableResult
func withServer<T>(
    _ router: Router, host: String = "127.0.0.1", limits: HTTPServer.Limits = testLimits(), eventLoops: Int = 2, accessLog: (any AccessLogSink)? = nil,
    shutdownDeadline: Duration = .seconds(5), _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
    var configuration = HTTPServer.Configuration(host: host, port: 0, eventLoops: eventLoops, limits: limits)
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

/// Runs blocking socket calls on a thread of their own: blocking a thread of Swift's cooperative
/// pool (two threads on a two-core machine) would starve the server's asynchronous handlers.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

func offload<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// A blocking client socket with a receive timeout, for talking HTTP by hand. Every call that
/// can block is `async` and runs through ``offload(_:)``.
final class RawConnection: @unchecked Sendable {
    // @unchecked: test helper; each test uses a connection from one task at a time.
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, host: String = "127.0.0.1", receiveTimeout: Double = 5, receiveBuffer: Int32? = nil, sendBuffer: Int32? = nil) throws {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list?.pointee else { throw POSIXError(.EINVAL) }
        defer { freeaddrinfo(list) }
        fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var timeout = timeval(
            tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout.truncatingRemainder(dividingBy: 1)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var sendBuffer {
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        if var receiveBuffer {
            // Before connect, so that the advertised window is small from the start.
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        guard Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends all of `bytes`; `false` when the server closed or reset the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        await offload { self.sendNow(bytes) }
    }

    @discardableResult
    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    func readResponse(headRequest: Bool = false) async -> RawResponse? {
        await offload { self.readResponseNow(headRequest: headRequest) }
    }

    func closesWithin(seconds: Double) async -> Bool {
        await offload { self.closesWithinNow(seconds: seconds) }
    }

    /// Receives whatever arrives next (up to `count` bytes); empty at end of stream.
    func receiveSome(_ count: Int = 4096) async -> [UInt8] {
        await offload {
            var buffer = [UInt8](repeating: 0, count: count)
            let received = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
            return Array(buffer[0..<max(received, 0)])
        }
    }

    private func sendNow(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Reads more bytes; `nil` at end of stream, reset, or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// Reads one response; `nil` when the connection ended (or timed out) first.
    private func readResponseNow(headRequest: Bool) -> RawResponse? {
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
    private func closesWithinNow(seconds: Double) -> Bool {
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
func exchange(_ port: Int, _ request: String) async throws -> RawResponse? {
    let connection = try RawConnection(port: port)
    await connection.send(request)
    return await connection.readResponse(headRequest: request.hasPrefix("HEAD "))
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
    func flush() {}
}
