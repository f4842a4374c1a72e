import Foundation
import Glibc
import LatchkeyErrors
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyHTTPServer
import LatchkeyJSON
import LatchkeyTestSupport
import Synchronization
import Testing

@Suite("Outbound client")
struct ClientTests {
    static func router(gate: Gate = Gate()) -> Router {
        let router = Router()
        router.post("/token") { request in
            var response = HTTPResponse.json(
                ["got": .string(String(decoding: request.body, as: UTF8.self)), "auth": .string(request.headers["X-Client"] ?? "")],
                status: 201)
            response.headers.add("X-Answer", "42")
            return response
        }
        router.get("/slow") { _ in
            try await Task.sleep(for: .seconds(3))
            return .text("late")
        }
        router.get("/held") { request in
            await gate.wait()
            return .text("held \(request.query["n"] ?? "")")
        }
        router.get("/big", synchronous: { _ in .text(String(repeating: "x", count: 5000)) })
        router.get("/redirect", synchronous: { _ in
            HTTPResponse(status: 302, headers: ["Location": "/big"])
        })
        router.get("/missing", synchronous: { _ in throw HTTPError.notFound() })
        router.on(.delete, "/echo", synchronous: { request in
            .json([
                "method": .string(request.method.rawValue), "host": .string(request.headers["Host"] ?? ""),
                "length": .string(request.headers["Content-Length"] ?? "none"), "body": .string(String(decoding: request.body, as: UTF8.self)),
                "query": .string(request.query["q"] ?? ""),
            ])
        })
        router.get("/echo", synchronous: { request in
            .json(["method": .string(request.method.rawValue), "host": .string(request.headers["Host"] ?? "")])
        })
        return router
    }

    @Test("status, headers and body come back as sent")
    func roundTrip() async throws {
        try await withServer(Self.router()) { _, port in
            let client = EventHTTPClient()
            let response = try await client.send(
                OutboundRequest(
                    url: URL(string: "http://127.0.0.1:\(port)/token")!, method: .post,
                    headers: ["X-Client": "c1", "Content-Type": "application/x-www-form-urlencoded"],
                    body: Array("grant_type=authorization_code".utf8)))
            #expect(response.status == 201)
            #expect(response.headers["x-answer"] == "42")
            #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
            #expect(try JSONValue(parsing: response.body) == ["got": "grant_type=authorization_code", "auth": "c1"])
            let missing = try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/missing")!))
            #expect(missing.status == 404)
        }
    }

    @Test("Host, Content-Length, the method, the body and the query go out as HTTP/1.1 wants them")
    func requestLine() async throws {
        try await withServer(Self.router()) { _, port in
            let client = EventHTTPClient()
            let delete = try await client.send(
                OutboundRequest(
                    url: URL(string: "http://127.0.0.1:\(port)/echo?q=a%20b")!, method: .delete,
                    headers: ["Content-Length": "999"], body: Array("gone".utf8)))
            #expect(
                try JSONValue(parsing: delete.body)
                    == ["method": "DELETE", "host": .string("127.0.0.1:\(port)"), "length": "4", "body": "gone", "query": "a b"])
            // The name goes through evdns (the hosts file), and the Host field carries it.
            let named = try await client.send(OutboundRequest(url: URL(string: "http://localhost:\(port)/echo")!))
            #expect(try JSONValue(parsing: named.body) == ["method": "GET", "host": .string("localhost:\(port)")])
        }
    }

    @Test("IPv6 literals connect, with the address in brackets in Host")
    func ipv6() async throws {
        try await withServer(Self.router(), host: "::1") { _, port in
            let response = try await EventHTTPClient().send(OutboundRequest(url: URL(string: "http://[::1]:\(port)/echo")!))
            #expect(try JSONValue(parsing: response.body) == ["method": "GET", "host": .string("[::1]:\(port)")])
        }
    }

    @Test("a server slower than the timeout gives timedOut, on time")
    func timeout() async throws {
        try await withServer(Self.router()) { _, port in
            let client = EventHTTPClient()
            let start = ContinuousClock.now
            await #expect(throws: HTTPClientError(.timedOut, "")) {
                try await client.send(
                    OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/slow")!, timeout: .milliseconds(300)))
            }
            #expect(ContinuousClock.now - start < .seconds(3))
        }
    }

    @Test("a server that accepts and never answers gives timedOut within the timeout, over http and https", arguments: ["http", "https"])
    func silentServer(scheme: String) async throws {
        // Listening but never accepting: the kernel completes the handshake, nothing answers.
        let silent = try ScriptedServer(accepting: false)
        defer { silent.stop() }
        let start = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError(.timedOut, "")) {
            try await EventHTTPClient().send(
                OutboundRequest(url: URL(string: "\(scheme)://127.0.0.1:\(silent.port)/")!, timeout: .milliseconds(500)))
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(450) && elapsed < .milliseconds(1500), "took \(elapsed)")
        #expect(error?.message.contains("127.0.0.1") == true)
    }

    @Test("a body over the cap is refused")
    func sizeCap() async throws {
        try await withServer(Self.router()) { _, port in
            let small = EventHTTPClient(maxResponseBytes: 1000)
            await #expect(throws: HTTPClientError(.responseTooLarge, "")) {
                try await small.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/big")!))
            }
            let large = EventHTTPClient(maxResponseBytes: 10_000)
            let response = try await large.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/big")!))
            #expect(response.body.count == 5000)
        }
    }

    @Test("a Content-Length over the cap is refused before the body arrives")
    func announcedTooLarge() async throws {
        let server = try ScriptedServer { _, connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5000000\r\n\r\n")
            // The body never comes: only the announced length can refuse it in time.
            connection.waitForClose()
        }
        defer { server.stop() }
        let start = ContinuousClock.now
        await #expect(throws: HTTPClientError(.responseTooLarge, "")) {
            try await EventHTTPClient().send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!))
        }
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test("chunked bodies and bodies that end with the connection are read; a chunked body over the cap is refused")
    func framings() async throws {
        let server = try ScriptedServer { _, connection in
            while let request = connection.readRequest() {
                if request.hasPrefix("GET /chunked ") {
                    connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
                } else if request.hasPrefix("GET /chunked-big ") {
                    let chunk = "258\r\n" + String(repeating: "y", count: 600) + "\r\n"
                    connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk + chunk + "0\r\n\r\n")
                } else {
                    connection.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end")
                    return
                }
            }
        }
        defer { server.stop() }
        let client = EventHTTPClient(maxResponseBytes: 1000)
        let base = "http://127.0.0.1:\(server.port)"
        let chunked = try await client.send(OutboundRequest(url: URL(string: base + "/chunked")!))
        #expect(String(decoding: chunked.body, as: UTF8.self) == "hello world")
        let untilClose = try await client.send(OutboundRequest(url: URL(string: base + "/close")!))
        #expect(String(decoding: untilClose.body, as: UTF8.self) == "until the end")
        await #expect(throws: HTTPClientError(.responseTooLarge, "")) {
            try await client.send(OutboundRequest(url: URL(string: base + "/chunked-big")!))
        }
        // The first connection carried /chunked and /close, which closed it; the refusal needed a
        // second one.
        #expect(server.connections == 2)
    }

    @Test("redirects are returned, not followed")
    func noRedirects() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try await EventHTTPClient().send(
                OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/redirect")!))
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/big")
        }
    }

    @Test("a refused connection is a transport error naming the address")
    func refused() async throws {
        // A socket bound but not listening: connecting to its port is refused, and no other test's
        // server can take the port while it is held.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, length) == 0 ? getsockname(holder, $0, &length) : -1
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let error = await #expect(throws: HTTPClientError(.transport, "")) {
            try await EventHTTPClient().send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
        }
        #expect(error?.message.contains("127.0.0.1:\(port)") == true, "\(String(describing: error))")
    }

    @Test("TLS to a server that speaks plain HTTP is a transport error")
    func tlsToPlainServer() async throws {
        try await withServer(Self.router()) { _, port in
            let error = await #expect(throws: HTTPClientError(.transport, "")) {
                try await EventHTTPClient().send(OutboundRequest(url: URL(string: "https://127.0.0.1:\(port)/echo")!))
            }
            #expect(error?.message.contains("TLS") == true, "\(String(describing: error))")
        }
    }

    @Test("requests that cannot go on the wire are refused before anything is sent")
    func invalidRequests() async throws {
        let server = try ScriptedServer { _, connection in connection.waitForClose() }
        defer { server.stop() }
        let client = EventHTTPClient()
        let base = "http://127.0.0.1:\(server.port)/"
        let invalid: [OutboundRequest] = [
            OutboundRequest(url: URL(string: "ftp://127.0.0.1:\(server.port)/")!),
            OutboundRequest(url: URL(string: "/relative")!),
            OutboundRequest(url: URL(string: base)!, headers: ["X-Secret": "s3cret\r\nX-Injected: 1"]),
            OutboundRequest(url: URL(string: base)!, headers: ["Bad Name": "v"]),
            OutboundRequest(url: URL(string: base)!, method: HTTPMethod(rawValue: "BREW")),
            OutboundRequest(url: URL(string: "http://user:pw@127.0.0.1:\(server.port)/")!),
        ]
        for request in invalid {
            let error = await #expect(throws: HTTPClientError(.invalidRequest, "")) { try await client.send(request) }
            #expect(error?.message.contains("s3cret") == false)
        }
        #expect(server.connections == 0)
    }

    @Test("sequential requests to one origin reuse one keep-alive connection")
    func keepAlive() async throws {
        try await withServer(Self.router()) { server, port in
            let client = EventHTTPClient()
            for _ in 0..<5 {
                let response = try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/echo")!))
                #expect(response.status == 200)
            }
            #expect(server.activeConnections == 1)
        }
    }

    @Test("an idle connection is closed after the idle timeout")
    func idleTimeout() async throws {
        try await withServer(Self.router()) { server, port in
            var configuration = EventHTTPClient.Configuration()
            configuration.idleTimeout = .milliseconds(300)
            let client = try EventHTTPClient(configuration: configuration)
            _ = try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/echo")!))
            #expect(server.activeConnections == 1)
            #expect(await eventually(within: .seconds(3)) { server.activeConnections == 0 })
        }
    }

    @Test("50 concurrent requests to one server run at once, all succeed, and at most 8 connections stay idle")
    func concurrency() async throws {
        let gate = Gate()
        try await withServer(Self.router(gate: gate)) { server, port in
            let client = EventHTTPClient()
            try await withThrowingTaskGroup(of: (Int, OutboundResponse).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        (index, try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/held?n=\(index)")!)))
                    }
                }
                // Every request is held by the server until all 50 have arrived: only a client that
                // runs them at once gets there.
                let allArrived = await eventually(within: .seconds(10)) { gate.arrivals.load(ordering: .relaxed) == 50 }
                gate.open()
                #expect(allArrived, "only \(gate.arrivals.load(ordering: .relaxed)) requests arrived together")
                var answered = 0
                for try await (index, response) in group {
                    #expect(response.status == 200)
                    #expect(String(decoding: response.body, as: UTF8.self) == "held \(index)")
                    answered += 1
                }
                #expect(answered == 50)
            }
            #expect(await eventually(within: .seconds(3)) { server.activeConnections == 8 }, "\(server.activeConnections) open")
        }
    }

    @Test("cancelling the task cancels the request and closes its connection")
    func cancellation() async throws {
        let gate = Gate()
        try await withServer(Self.router(gate: gate)) { server, port in
            let client = EventHTTPClient()
            let task = Task {
                try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/held")!, timeout: .seconds(30)))
            }
            #expect(await eventually(within: .seconds(5)) { gate.arrivals.load(ordering: .relaxed) == 1 })
            let start = ContinuousClock.now
            task.cancel()
            await #expect(throws: HTTPClientError(.cancelled, "")) { try await task.value }
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(await eventually(within: .seconds(3)) { server.activeConnections == 0 })
            gate.open()

            // A task cancelled before it sends never reaches the server.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/held")!))
            }
            await #expect(throws: HTTPClientError(.cancelled, "")) { try await early.value }
            #expect(gate.arrivals.load(ordering: .relaxed) == 1)
        }
    }

    @Test(
        "completion, deadline and cancellation racing each other end every request once, with one of the three",
        .timeLimit(.minutes(1)))
    func races() async throws {
        let router = Router()
        router.get("/jitter") { request in
            try await Task.sleep(for: .milliseconds(Int(request.query["ms"] ?? "0") ?? 0))
            return .text("done \(request.query["n"] ?? "")")
        }
        try await withServer(router) { server, port in
            let client = EventHTTPClient()
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                var outcomes: [String: Int] = [:]
                for index in 0..<300 {
                    // 16 at a time, so that the outcome depends on the timings below, not on how
                    // fast two cores set up 300 connections.
                    if index >= 16, let outcome = try await group.next() { outcomes[outcome, default: 0] += 1 }
                    let serverDelay = Int.random(in: 0...20)
                    let timeout = Int.random(in: 2...60)
                    let cancelAfter = index % 3 == 0 ? Int.random(in: 0...40) : nil
                    group.addTask {
                        let request = Task {
                            try await client.send(
                                OutboundRequest(
                                    url: URL(string: "http://127.0.0.1:\(port)/jitter?ms=\(serverDelay)&n=\(index)")!,
                                    timeout: .milliseconds(timeout)))
                        }
                        if let cancelAfter {
                            try? await Task.sleep(for: .milliseconds(cancelAfter))
                            request.cancel()
                        }
                        do {
                            let response = try await request.value
                            return response.status == 200 && response.body == Array("done \(index)".utf8) ? "answered" : "wrong answer"
                        } catch let error as HTTPClientError {
                            return error.code == .timedOut || error.code == .cancelled ? error.code.description : "\(error)"
                        }
                    }
                }
                for try await outcome in group { outcomes[outcome, default: 0] += 1 }
                return outcomes
            }
            #expect(outcomes.values.reduce(0, +) == 300)
            #expect(Set(outcomes.keys).isSubset(of: ["answered", "timed_out", "cancelled"]), "\(outcomes)")
            #expect(outcomes.values.allSatisfy { $0 > 0 } && outcomes.count == 3, "\(outcomes)")
            // Every connection whose request was cut off is closed; at most 8 idle ones stay.
            #expect(await eventually(within: .seconds(3)) { server.activeConnections <= 8 }, "\(server.activeConnections) open")
            // And the client still works.
            let after = try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/jitter?n=last")!))
            #expect(after.body == Array("done last".utf8))
        }
    }

    @Test("a reused connection the server closed is retried once for GET, never for POST", arguments: ["GET", "POST"])
    func staleConnection(method: String) async throws {
        // The first connection answers one request, then closes when the second arrives; later
        // connections answer everything.
        let server = try ScriptedServer { index, connection in
            var answered = 0
            while connection.readRequest() != nil {
                if index == 0 && answered == 1 { return }
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n\(index)")
                answered += 1
            }
        }
        defer { server.stop() }
        let client = EventHTTPClient()
        let request = OutboundRequest(
            url: URL(string: "http://127.0.0.1:\(server.port)/")!, method: HTTPMethod(rawValue: method),
            body: method == "POST" ? Array("x".utf8) : [])
        #expect(try await client.send(request).body == Array("0".utf8))
        if method == "GET" {
            #expect(try await client.send(request).body == Array("1".utf8))
            #expect(server.connections == 2)
        } else {
            let error = await #expect(throws: HTTPClientError(.transport, "")) { try await client.send(request) }
            #expect(error?.message.contains("127.0.0.1") == true)
            #expect(server.connections == 1)
            // The next request gets a new connection.
            #expect(try await client.send(request).body == Array("1".utf8))
        }
    }

    @Test("a connection the server closes after its response is not reused")
    func serverCloses() async throws {
        let server = try ScriptedServer { index, connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n\(index)")
        }
        defer { server.stop() }
        let client = EventHTTPClient()
        for index in 0..<3 {
            let response = try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!, method: .post))
            #expect(response.body == Array("\(index)".utf8))
        }
        #expect(server.connections == 3)
    }
}

/// The Python with `cryptography` that `make test` prepared.
private let tlsPython = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"]

@Suite("Outbound client over TLS", .enabled(if: tlsPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct ClientTLSTests {
    @Test("a certificate from a trusted extra CA is accepted, for a name and for an IP address, and the connection is reused")
    func trusted() async throws {
        let servers = try await TLSServers.start()
        defer { servers.stop() }
        let client = try EventHTTPClient(configuration: .init(additionalCAFile: servers.caFile))
        for url in ["https://localhost:\(servers.goodPort)/by-name", "https://127.0.0.1:\(servers.goodPort)/by-address"] {
            let response = try await client.send(OutboundRequest(url: URL(string: url)!))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "hello over TLS: " + URL(string: url)!.path)
        }
        let again = try await client.send(OutboundRequest(url: URL(string: "https://localhost:\(servers.goodPort)/again")!))
        #expect(String(decoding: again.body, as: UTF8.self) == "hello over TLS: /again")
        #expect(try servers.connections() == 2)
    }

    @Test("without the extra CA the same server is refused")
    func untrusted() async throws {
        let servers = try await TLSServers.start()
        defer { servers.stop() }
        let error = await #expect(throws: HTTPClientError(.transport, "")) {
            try await EventHTTPClient().send(OutboundRequest(url: URL(string: "https://localhost:\(servers.goodPort)/")!))
        }
        let reason = error?.message ?? ""
        #expect(reason.contains("localhost") && reason.contains("certificate"), "\(reason)")
    }

    @Test("a certificate for another host name is refused, even from a trusted CA")
    func wrongHost() async throws {
        let servers = try await TLSServers.start()
        defer { servers.stop() }
        let client = try EventHTTPClient(configuration: .init(additionalCAFile: servers.caFile))
        for host in ["localhost", "127.0.0.1"] {
            let error = await #expect(throws: HTTPClientError(.transport, "")) {
                try await client.send(OutboundRequest(url: URL(string: "https://\(host):\(servers.otherPort)/")!))
            }
            let reason = error?.message ?? ""
            #expect(reason.contains(host) && reason.lowercased().contains("mismatch"), "\(reason)")
        }
    }

    @Test("a CA file that cannot be read fails at init")
    func missingCAFile() {
        #expect(throws: HTTPClientError(.transport, "")) {
            try EventHTTPClient(configuration: .init(additionalCAFile: "/nonexistent/ca.pem"))
        }
    }
}

// MARK: Helpers

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
func eventually(within timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// A TCP server on 127.0.0.1 that plays a script on each connection, on a thread of its own, for
/// what ``HTTPServer`` never does: chunked bodies, closing a kept-alive connection without an
/// answer, announcing a body it never sends. With `accepting: false` it listens and never
/// accepts: connections complete in the kernel's backlog and nothing ever answers.
///
/// Each socket is closed by the one thread that uses it, and `stop()` only shuts sockets down
/// (under the lock that closing takes), so a descriptor number is never reused under a thread
/// that still holds it.
final class ScriptedServer: Sendable {
    let port: Int
    private let fd: Int32
    private let accepting: Bool
    private let accepted = Atomic<Int>(0)
    /// The listening socket and the connections not closed yet; `nil` once stopped.
    private let open = Mutex<Set<Int32>?>([])

    /// Connections accepted so far.
    var connections: Int { accepted.load(ordering: .acquiring) }

    init(accepting: Bool = true, script: @escaping @Sendable (_ index: Int, _ connection: ScriptedConnection) -> Void = { _, _ in })
        throws
    {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        self.accepting = accepting
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard accepting else { return }
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { break }
                let index = accepted.add(1, ordering: .acquiringAndReleasing).oldValue
                let kept = open.withLock { open -> Bool in
                    guard open != nil else { return false }
                    open!.insert(client)
                    return true
                }
                guard kept else {
                    close(client)
                    break
                }
                Thread.detachNewThread {
                    script(index, ScriptedConnection(fd: client))
                    self.open.withLock { open in
                        open?.remove(client)
                        close(client)
                    }
                }
            }
            close(fd)
        }
    }

    /// Stops accepting and ends every connection (their scripts see end of stream).
    func stop() {
        open.withLock { open in
            Glibc.shutdown(fd, Int32(SHUT_RDWR))
            for socket in open ?? [] { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
            open = nil
        }
        if !accepting { close(fd) }
    }
}

/// One accepted connection of a ``ScriptedServer``, with blocking reads.
final class ScriptedConnection: @unchecked Sendable {
    // @unchecked: used by its one script thread only.
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next request's head and body as text; `nil` when the client closed the connection.
    func readRequest() -> String? {
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                while buffer.count < end + length { guard fill() else { return nil } }
                let request = String(decoding: buffer[..<(end + length)], as: UTF8.self)
                buffer.removeFirst(end + length)
                return request
            }
            guard fill() else { return nil }
        }
    }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Blocks until the client closes the connection (or 10 s pass).
    func waitForClose() {
        while fill() {}
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index..<(index + 4)].elementsEqual([13, 10, 13, 10]) {
            return index + 4
        }
        return nil
    }
}

/// Two HTTPS servers in a Python process, with certificates from a CA made for the test: one for
/// `localhost` and 127.0.0.1, one for `other.example` only.
final class TLSServers: Sendable {
    let process: Process
    /// Python's standard input: the script serves until it closes.
    let input: Pipe
    let directory: URL
    let goodPort: Int
    let otherPort: Int
    var caFile: String { directory.appendingPathComponent("ca.pem").path }

    private init(process: Process, input: Pipe, directory: URL, goodPort: Int, otherPort: Int) {
        self.process = process
        self.input = input
        self.directory = directory
        self.goodPort = goodPort
        self.otherPort = otherPort
    }

    static func start() async throws -> TLSServers {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-tls-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(tlsPython))
        process.arguments = ["-c", script, directory.path]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try Subprocess.launch(process)
        // The ports, or end of file if Python failed (its error goes to the test's stderr).
        let line = await offload { () -> String in
            var bytes: [UInt8] = []
            while !bytes.contains(UInt8(ascii: "\n")) {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                bytes += data
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let ports = line.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let servers = TLSServers(process: process, input: input, directory: directory, goodPort: 0, otherPort: 0)
        guard ports.count == 2 else {
            servers.stop()
            throw POSIXError(.ECHILD)
        }
        return TLSServers(process: process, input: input, directory: directory, goodPort: ports[0], otherPort: ports[1])
    }

    /// TLS connections the good server has accepted.
    func connections() throws -> Int {
        Int(try String(contentsOf: directory.appendingPathComponent("connections"), encoding: .utf8)) ?? -1
    }

    /// Ends Python: the end of its standard input ends the script, and SIGKILL makes sure (a
    /// child of the test process may inherit a signal mask that blocks SIGTERM).
    func stop() {
        try? input.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    private static let script = #"""
        import datetime, ipaddress, os, ssl, sys, threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        directory = sys.argv[1]
        now = datetime.datetime.now(datetime.timezone.utc)

        def name(common):
            return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

        def builder(subject, issuer, key):
            return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key)
                    .serial_number(x509.random_serial_number())
                    .not_valid_before(now - datetime.timedelta(minutes=5))
                    .not_valid_after(now + datetime.timedelta(hours=1)))

        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (builder(name("Latchkey test CA"), name("Latchkey test CA"), ca_key.public_key())
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                           data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                           crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
        with open(os.path.join(directory, "ca.pem"), "wb") as f:
            f.write(ca.public_bytes(serialization.Encoding.PEM))

        def leaf(file, dns_names, addresses):
            key = ec.generate_private_key(ec.SECP256R1())
            names = [x509.DNSName(n) for n in dns_names] + [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
            cert = (builder(name(dns_names[0]), ca.subject, key.public_key())
                    .add_extension(x509.SubjectAlternativeName(names), critical=False)
                    .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                    .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                    .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
                    .sign(ca_key, hashes.SHA256()))
            path = os.path.join(directory, file)
            with open(path, "wb") as f:
                f.write(cert.public_bytes(serialization.Encoding.PEM))
                f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
            return path

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                if self.server.count:
                    with lock:
                        counts[0] += 1
                        with open(os.path.join(directory, "connections"), "w") as f:
                            f.write(str(counts[0]))

            def do_GET(self):
                body = b"hello over TLS: " + self.path.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        lock = threading.Lock()
        counts = [0]

        def serve(certificate, count):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certificate)
            server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            server.daemon_threads = True
            server.count = count
            server.socket = context.wrap_socket(server.socket, server_side=True)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            return server.server_address[1]

        good = serve(leaf("good.pem", ["localhost"], ["127.0.0.1"]), True)
        other = serve(leaf("other.pem", ["other.example"], []), False)
        print(good, other, flush=True)
        sys.stdin.read()
        """#
}
