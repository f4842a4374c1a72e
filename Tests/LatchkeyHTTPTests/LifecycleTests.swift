import Foundation
import Glibc
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Testing

@Suite("Server lifecycle")
struct LifecycleTests {
    @Test("S25: a client that disconnects during an asynchronous handler loses its reply, and the server goes on")
    func disconnectDuringHandler() async throws {
        let gate = Gate()
        let router = Router()
        router.get("/slow") { _ in
            await gate.wait()
            return .json(["done": true])
        }
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        try await withServer(router) { server, port in
            for _ in 0..<20 {
                let connection = try RawConnection(port: port)
                await connection.send(get("/slow"))
            }
            // Each client closed right after sending; the server notices and closes its side
            // while the handlers still wait.
            await gate.waitForArrivals(20)
            while server.activeConnections > 0 { try await Task.sleep(for: .milliseconds(5)) }
            gate.open()
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await exchange(port, get("/healthz"))?.status == 200)
        }
    }

    @Test("S25: shutdown refuses new connections at once and lets requests in flight finish")
    func gracefulShutdown() async throws {
        let gate = Gate()
        let router = Router()
        router.get("/slow") { _ in
            await gate.wait()
            return .json(["done": true])
        }
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, eventLoops: 2, limits: testLimits())
        configuration.shutdownDeadline = .seconds(10)
        let server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
        let port = server.boundPort
        let busy = try (0..<3).map { _ in try RawConnection(port: port) }
        for connection in busy { await connection.send(get("/slow")) }
        let idle = try RawConnection(port: port)
        await idle.send(get("/healthz"))
        #expect(await idle.readResponse()?.status == 200)
        await gate.waitForArrivals(3)

        let stopping = Task { await server.shutdown() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(throws: POSIXError(.ECONNREFUSED)) { try RawConnection(port: port) }
        #expect(await idle.closesWithin(seconds: 1), "an idle keep-alive connection is closed at once")

        gate.open()
        for connection in busy {
            let response = await connection.readResponse()
            #expect(response?.status == 200)
            #expect(response?.json == ["done": true])
            #expect(response?.header("Connection") == "close")
        }
        await stopping.value
        #expect(server.activeConnections == 0)
    }

    @Test("shutdown gives up on a handler that outlives the deadline, and its late reply is dropped")
    func shutdownDeadline() async throws {
        let gate = Gate()
        let router = Router()
        router.get("/stuck") { _ in
            await gate.wait()
            return .json(["late": true])
        }
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0, eventLoops: 1, limits: testLimits())
        configuration.shutdownDeadline = .milliseconds(300)
        let server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
        let connection = try RawConnection(port: server.boundPort)
        await connection.send(get("/stuck"))
        await gate.waitForArrivals(1)
        let start = ContinuousClock.now
        await server.shutdown()
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(await connection.readResponse() == nil)
        gate.open()
        try await Task.sleep(for: .milliseconds(50))
    }

    @Test("a port that is taken gives a clear address-in-use error")
    func addressInUse() async throws {
        try await withServer(Router()) { _, port in
            let second = HTTPServer(
                configuration: HTTPServer.Configuration(host: "127.0.0.1", port: port, eventLoops: 1), responder: Router())
            #expect(throws: HTTPServerError(.addressInUse, "")) { try second.start() }
            do {
                try second.start()
            } catch let error as HTTPServerError {
                #expect(error.message == "127.0.0.1:\(port) is already in use")
            }
            await second.shutdown()
        }
    }

    @Test("an address that is not this machine's is refused, and start() runs once")
    func badAddressAndRestart() async throws {
        let elsewhere = HTTPServer(
            configuration: HTTPServer.Configuration(host: "192.0.2.1", port: 0, eventLoops: 1), responder: Router())
        #expect(throws: HTTPServerError(.invalidAddress, "")) { try elsewhere.start() }
        await elsewhere.shutdown()
        try await withServer(Router()) { server, _ in
            #expect(throws: HTTPServerError(.alreadyStarted, "")) { try server.start() }
        }
    }

    @Test("IPv6 loopback works, and the peer address is reported without the port")
    func ipv6() async throws {
        let router = Router()
        router.get("/ip", synchronous: { request in .text(request.remoteAddress) })
        try await withServer(router, host: "::1") { _, port in
            let connection = try RawConnection(port: port, host: "::1")
            await connection.send(get("/ip"))
            #expect(await connection.readResponse()?.text == "::1")
        }
    }
}
