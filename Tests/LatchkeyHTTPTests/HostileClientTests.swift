import Foundation
import Glibc
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Synchronization
import Testing

@Suite("Hostile clients")
struct HostileClientTests {
    static func router() -> Router {
        let router = Router()
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        router.post("/echo") { request in .json(try request.jsonBody()) }
        return router
    }

    static func expectHealthy(_ port: Int) async throws {
        let response = try await exchange(port, get("/healthz"))
        #expect(response?.status == 200)
        #expect(response?.json == ["status": "ok"])
    }

    @Test("S25: 100 KB of headers get 431 or a close, and the server stays up")
    func hugeHeaders() async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            var request = "GET /healthz HTTP/1.1\r\nHost: x\r\n"
            for index in 0..<1000 { request += "X-Filler-\(index): " + String(repeating: "a", count: 90) + "\r\n" }
            request += "\r\n"
            await connection.send(request)
            if let response = await connection.readResponse() {
                #expect(response.status == 431)
                #expect(response.json?["error"] == "invalid_request")
            }
            #expect(await connection.closesWithin(seconds: 3))
            try await Self.expectHealthy(port)
        }
    }

    @Test(
        "S24: a malformed or ambiguous request head gets a 4xx JSON error and a close",
        arguments: [
            ("GARBAGE\r\n\r\n", 400),
            ("GET /\r\n\r\n", 400),
            ("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n", 400),
            ("G\u{01}T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
            ("GET / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", 400),
            ("GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET /%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET /%C3%28 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET relative HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n", 417),
            // RFC 9112 §3.2: a Host that is not host[:port] is 400.
            ("GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: x:80 \t y\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: x/y\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: x@y\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: x:8o\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: []\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: [::1]x\r\n\r\n", 400),
            ("GET /healthz HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400),
            // RFC 6750 §3.1: two sets of credentials are refused, not resolved by order.
            ("GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n", 400),
            ("GET /healthz HTTP/1.1\r\nHost: x\r\nauthorization: Bearer a\r\nAUTHORIZATION: Basic Yjpj\r\n\r\n", 400),
        ])
    func malformedHead(request: String, status: Int) async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(request)
            let response = await connection.readResponse()
            #expect(response?.status == status)
            #expect(response?.json?["error"] == "invalid_request")
            #expect(response?.header("X-Request-Id") != nil)
            #expect(response?.header("Connection") == "close")
            #expect(await connection.closesWithin(seconds: 3))
            try await Self.expectHealthy(port)
        }
    }

    @Test("S24: a second Authorization field or a Host with a space is refused by name, before any handler runs")
    func ambiguousFieldsNamed() async throws {
        let log = MemoryAccessLog()
        try await withServer(Self.router(), accessLog: log) { _, port in
            let twice = try await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n")
            #expect(twice?.json?["error_description"] == "more than one Authorization field")
            let spaced = try await exchange(port, "GET /healthz HTTP/1.1\r\nHost: evil.example good.example\r\n\r\n")
            #expect(spaced?.json?["error_description"] == "malformed Host field")
            // Refused by the parser: the access log shows no method and no route for either.
            let methods = log.entries.withLock { $0.map(\.method.rawValue) }
            #expect(methods == ["-", "-"])
        }
    }

    @Test("an absolute-form target, HTTP/1.0 without Host, every form of Host and one Authorization are understood")
    func tolerated() async throws {
        try await withServer(Self.router()) { _, port in
            #expect(try await exchange(port, "GET http://example.com/healthz HTTP/1.1\r\nHost: example.com\r\n\r\n")?.status == 200)
            for host in ["127.0.0.1:8080", "[::1]:8080", "[::1]", "Example.COM", "xn--bcher-kva.example", "a-b_c~d.e%41", "x:", ""] {
                #expect(try await exchange(port, "GET /healthz HTTP/1.1\r\nHost: \(host)\r\n\r\n")?.status == 200, "Host: \(host)")
            }
            let authorized = try await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\n\r\n")
            #expect(authorized?.status == 200)
            let old = try await exchange(port, "GET /healthz HTTP/1.0\r\n\r\n")
            #expect(old?.status == 200)
            #expect(old?.header("Connection") == "close")
        }
    }

    @Test("S25: a slowloris client sending one header byte at a time is cut off at the header timeout")
    func slowloris() async throws {
        let limits = testLimits { $0.headerTimeout = .seconds(1) }
        try await withServer(Self.router(), limits: limits) { _, port in
            let connection = try RawConnection(port: port)
            let start = Date()
            var closed = false
            for byte in Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 100) {
                let sent = await connection.send([byte])
                if !sent {
                    closed = true
                    break
                }
                if await connection.closesWithin(seconds: 0.25) {
                    closed = true
                    break
                }
                if Date().timeIntervalSince(start) > 5 { break }
            }
            let elapsed = Date().timeIntervalSince(start)
            #expect(closed)
            #expect(elapsed >= 0.9 && elapsed < 3.0, "cut off after \(elapsed) s")
            try await Self.expectHealthy(port)
        }
    }

    @Test("S25: a connection that sends nothing is closed at the header timeout")
    func silentConnection() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.headerTimeout = .milliseconds(500) }) { server, port in
            let connection = try RawConnection(port: port)
            #expect(await connection.closesWithin(seconds: 2))
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.activeConnections == 0)
        }
    }

    @Test("S25: a body that stops arriving is cut off at the body timeout")
    func slowBody() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.bodyTimeout = .milliseconds(500) }) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[1")
            let start = Date()
            #expect(await connection.closesWithin(seconds: 4))
            #expect(Date().timeIntervalSince(start) < 3)
        }
    }

    @Test("S25: with 2,000 idle connections open, the server still answers")
    func manyIdleConnections() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 8192 {
            limit.rlim_cur = min(8192, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        try await withServer(Self.router(), limits: testLimits { $0.headerTimeout = .seconds(20) }) { server, port in
            // Connected on a thread of their own: 2,000 blocking connects would otherwise hold a
            // thread of the cooperative pool that the other tests' handlers need.
            let idle = try await offload { try (0..<2000).map { _ in try RawConnection(port: port) } }
            let deadline = Date().addingTimeInterval(10)
            while server.activeConnections < 2000 && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(server.activeConnections == 2000)
            try await Self.expectHealthy(port)
            #expect(idle.count == 2000)
        }
    }

    @Test("S25: connections over the cap are answered 503 and closed; the server recovers")
    func connectionCap() async throws {
        let limits = testLimits {
            $0.maxConnections = 8
            $0.headerTimeout = .seconds(30)
        }
        try await withServer(Self.router(), limits: limits) { server, port in
            var open: [RawConnection] = []
            for _ in 0..<8 { open.append(try RawConnection(port: port)) }
            while server.activeConnections < 8 { try await Task.sleep(for: .milliseconds(5)) }
            let refused = try RawConnection(port: port)
            if let response = await refused.readResponse() {
                #expect(response.status == 503)
                #expect(response.json?["error"] == "overloaded")
            }
            #expect(await refused.closesWithin(seconds: 2))
            #expect(server.activeConnections == 8)
            open.removeLast()
            while server.activeConnections > 7 { try await Task.sleep(for: .milliseconds(5)) }
            try await Self.expectHealthy(port)
        }
    }

    @Test("S25: the last request a connection may make gets Connection: close")
    func keepAliveCap() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.maxRequestsPerConnection = 3 }) { _, port in
            let connection = try RawConnection(port: port)
            for index in 1...3 {
                await connection.send(get("/healthz"))
                let response = await connection.readResponse()
                #expect(response?.status == 200)
                #expect(response?.header("Connection") == (index == 3 ? "close" : nil))
            }
            #expect(await connection.closesWithin(seconds: 2))
        }
    }

    @Test("S25: an idle keep-alive connection is closed at the idle timeout")
    func idleTimeout() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.idleTimeout = .milliseconds(500) }) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(get("/healthz"))
            #expect(await connection.readResponse()?.status == 200)
            let start = Date()
            #expect(await connection.closesWithin(seconds: 4))
            #expect(Date().timeIntervalSince(start) < 3)
        }
    }

    @Test("S25: a client that pipelines without reading is held back, then cut off at the body timeout")
    func pipelineWithoutReading() async throws {
        let limits = testLimits {
            $0.bodyTimeout = .seconds(1)
            $0.maxRequestsPerConnection = 1_000_000
        }
        try await withServer(Self.router(), limits: limits) { server, port in
            let connection = try RawConnection(port: port, receiveBuffer: 4096, sendBuffer: 16384)
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(connection.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let burst = String(repeating: get("/healthz"), count: 1000)
            let deadline = Date().addingTimeInterval(4)
            while Date() < deadline {
                guard await connection.send(burst) else { break }
            }
            let stalled = Date()
            try await Self.expectHealthy(port)
            // The stuck connection is closed once its response has waited a body timeout; the
            // client never reads.
            // (Generous bound: the server may still be working through what the kernel buffered
            // when the client's sends start to block, before its own writes stall.)
            while server.activeConnections > 0 && Date().timeIntervalSince(stalled) < 8 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(server.activeConnections == 0)
            #expect(Date().timeIntervalSince(stalled) < 6)
        }
    }
}
