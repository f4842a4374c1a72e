import Foundation
import Glibc
import LatchkeyHTTP
import LatchkeyJOSE
import Testing

@Suite("Outbound client")
struct ClientTests {
    static func router() -> Router {
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
        router.get("/big", synchronous: { _ in .text(String(repeating: "x", count: 5000)) })
        router.get("/redirect", synchronous: { _ in
            HTTPResponse(status: 302, headers: ["Location": "/big"])
        })
        router.get("/missing", synchronous: { _ in throw HTTPError.notFound() })
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
            #expect(try JSONValue(parsing: response.body) == ["got": "grant_type=authorization_code", "auth": "c1"])
            let missing = try await client.send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/missing")!))
            #expect(missing.status == 404)
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

    @Test("redirects are returned, not followed")
    func noRedirects() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try await EventHTTPClient().send(
                OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/redirect")!))
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/big")
        }
    }

    @Test("a refused connection is a transport error")
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
        await #expect(throws: HTTPClientError(.transport, "")) {
            try await EventHTTPClient().send(OutboundRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
        }
    }
}
