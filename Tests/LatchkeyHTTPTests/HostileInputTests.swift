import Foundation
import Glibc
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

@testable import LatchkeyHTTP
@testable import LatchkeyHTTPServer

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

    @Test("S24: 20,000 mutated chunked bodies decode or fail with 400 or 413, the same whether they arrive whole or byte by byte")
    func chunkedMutations() throws {
        let seeds: [[UInt8]] = [
            "5;a=b;q=\"x\\\"y\"\r\nhello\r\n1\r\n \r\n0\r\nX-T: v\r\n\r\n",
            "a\r\n0123456789\r\n0\r\n\r\nGET / HTTP/1.1\r\n",
        ].map { Array($0.utf8) }
        /// The body, what was left unread and whether it ended, or the status of the error.
        func decode(_ input: [UInt8], step: Int) -> ([UInt8], Int, Bool)? {
            var decoder = ChunkedDecoder(maxBodyBytes: 64, maxFramingBytes: 128)
            var body: [UInt8] = []
            var pending: [UInt8] = []
            var next = 0
            do {
                while next < input.count {
                    pending += input[next..<min(input.count, next + step)]
                    next += step
                    let consumed = try pending.withUnsafeBytes { try decoder.decode($0, into: &body) }
                    pending.removeFirst(consumed)
                    if decoder.isComplete { break }
                }
            } catch let error as HTTPError {
                #expect(error.status == 400 || error.status == 413, "status \(error.status)")
                return nil
            } catch {
                Issue.record("unexpected error \(error)")
                return nil
            }
            #expect(body.count <= 64)
            return (body, pending.count + max(0, input.count - next), decoder.isComplete)
        }
        var mutator = Mutator(seed: 0x4348_554E)
        var completed = 0
        for iteration in 0..<20_000 {
            let input = mutator.mutate(seeds[iteration % seeds.count])
            let whole = decode(input, step: input.count + 1)
            let trickled = decode(input, step: 1)
            // A complete body reads the same either way; one split can only end it later.
            if let whole, whole.2 {
                completed += 1
                #expect(trickled?.0 == whole.0 && trickled?.1 == whole.1 && trickled?.2 == true, "iteration \(iteration)")
            }
        }
        #expect(completed > 200, "the mutations should not all be refusals")
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
