import Foundation
import Glibc
import LatchkeyJOSE
import LatchkeyTestSupport
import Testing

@testable import LatchkeyHTTP

@Suite("Hostile input")
struct HostileInputTests {
    static let seeds: [[UInt8]] = [
        "GET /v1/sessions/abc?x=1&y=%20 HTTP/1.1\r\nHost: a\r\nUser-Agent: t\r\nX-Request-Id: abc\r\n\r\n",
        "POST /v1/token HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
        "HEAD http://a/b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close, upgrade\r\n\r\n",
    ].map { Array($0.utf8) }

    @Test("S24: 30,000 mutated request heads parse or fail with a 4xx, never crash")
    func parserMutations() throws {
        var mutator = Mutator(seed: 0x4854_5450)
        var accepted = 0
        for iteration in 0..<30_000 {
            var input = mutator.mutate(Self.seeds[iteration % Self.seeds.count])
            // The connection hands the parser a head that ends with an empty line.
            input.append(contentsOf: "\r\n\r\n".utf8)
            guard let end = input.withUnsafeBytes({ RequestHead.end(in: $0, from: 0) }) else { continue }
            do {
                let head = try input.withUnsafeBytes { try RequestHead.parse(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
                accepted += 1
                #expect(head.contentLength >= 0)
                #expect(!head.path.isEmpty)
                #expect(!head.method.rawValue.isEmpty)
            } catch let error as HTTPError {
                #expect((400..<600).contains(error.status) && error.status != 500, "status \(error.status)")
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        #expect(accepted > 300, "the mutations should not all be refusals")
    }

    @Test("S24: mutated requests on the wire never get a 5xx, and the server stays up")
    func wireMutations() async throws {
        let router = Router()
        router.get("/v1/sessions/{id}", synchronous: { _ in .json(["ok": true]) })
        router.post("/v1/token") { request in .json(.object(try request.formBody().mapValues { .string($0) })) }
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        try await withServer(router, limits: testLimits { $0.headerTimeout = .milliseconds(300) }) { _, port in
            let statuses = await offload {
                var mutator = Mutator(seed: 0x5749_5245)
                var statuses: [Int] = []
                for iteration in 0..<300 {
                    // Most inputs are closed with an empty line so that the server answers at once
                    // instead of waiting for the rest of a head.
                    var input = mutator.mutate(Self.seeds[iteration % Self.seeds.count])
                    if iteration % 4 != 0 { input.append(contentsOf: "\r\n\r\n".utf8) }
                    guard let connection = try? RawConnection(port: port, receiveTimeout: 0.3) else { continue }
                    // Sent synchronously on this thread; responses are read the same way.
                    var sent = 0
                    while sent < input.count {
                        let count = input.withUnsafeBytes { send(connection.fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                        if count <= 0 { break }
                        sent += count
                    }
                    var buffer = [UInt8](repeating: 0, count: 512)
                    let received = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
                    if received >= 12, let status = Int(String(decoding: buffer[9..<12], as: UTF8.self)) {
                        statuses.append(status)
                    }
                }
                return statuses
            }
            #expect(!statuses.isEmpty)
            #expect(statuses.allSatisfy { $0 < 500 || $0 == 505 }, "\(statuses.filter { $0 >= 500 })")
            let healthy = try await exchange(port, get("/healthz"))
            #expect(healthy?.json == ["status": "ok"])
        }
    }
}
