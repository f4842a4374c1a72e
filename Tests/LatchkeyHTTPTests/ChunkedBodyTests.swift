import Foundation
import Glibc
import LatchkeyJSON
import Testing

@testable import LatchkeyHTTP
@testable import LatchkeyHTTPServer
import Synchronization

/// Chunked request bodies (RFC 9112 §7.1): read within the same limits as a `Content-Length`
/// body, strict about framing.
@Suite("Chunked request bodies")
struct ChunkedBodyTests {
    static func router() -> Router {
        let router = Router()
        router.post("/echo") { request in .json(try request.jsonBody()) }
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        return router
    }

    static func chunkedPost(_ chunks: String, headers: String = "") -> String {
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\(headers)\r\n\(chunks)"
    }

    /// Encodes `body` as chunks of `size` bytes, then the last chunk.
    static func chunks(_ body: String, size: Int) -> String {
        let bytes = Array(body.utf8)
        var text = ""
        for start in stride(from: 0, to: bytes.count, by: size) {
            let piece = bytes[start..<min(bytes.count, start + size)]
            text += String(piece.count, radix: 16) + "\r\n" + String(decoding: piece, as: UTF8.self) + "\r\n"
        }
        return text + "0\r\n\r\n"
    }

    /// Feeds `wire` to a decoder `step` bytes at a time, as a connection would: what is not
    /// consumed comes back at the start of the next call.
    static func decode(_ wire: String, step: Int, maxBodyBytes: Int = 1024, maxFramingBytes: Int = 256) throws
        -> (body: [UInt8], rest: [UInt8], complete: Bool)
    {
        var decoder = ChunkedDecoder(maxBodyBytes: maxBodyBytes, maxFramingBytes: maxFramingBytes)
        var body: [UInt8] = []
        var pending: [UInt8] = []
        var remaining = Array(wire.utf8)[...]
        while !remaining.isEmpty || !pending.isEmpty {
            let take = remaining.prefix(step)
            remaining = remaining.dropFirst(take.count)
            pending += take
            let consumed = try pending.withUnsafeBytes { try decoder.decode($0, into: &body) }
            pending.removeFirst(consumed)
            if decoder.isComplete || take.isEmpty { break }
        }
        return (body, pending + remaining, decoder.isComplete)
    }

    @Test("the decoder gives the same body whether bytes arrive at once or one by one, with extensions and trailers")
    func decoderSplits() throws {
        let wire = "5;name=value;quoted=\"a \\\" b\" ; bare\r\nhello\r\n000006\r\n world\r\n0;last\r\nX-Trailer: t\r\nOther:\r\n\r\nGET /next"
        for step in [1, 2, 3, 7, 1000] {
            let result = try Self.decode(wire, step: step)
            #expect(result.complete, "step \(step)")
            #expect(String(decoding: result.body, as: UTF8.self) == "hello world", "step \(step)")
            #expect(String(decoding: result.rest, as: UTF8.self) == "GET /next", "pipelined bytes stay unread (step \(step))")
        }
        #expect(try Self.decode("0\r\n\r\n", step: 1).body.isEmpty)
        #expect(try !Self.decode("5\r\nhel", step: 100).complete)
    }

    @Test(
        "S24: broken chunk framing is 400 invalid_request",
        arguments: [
            "x\r\nhello\r\n0\r\n\r\n",  // no size
            "5\nhello\r\n0\r\n\r\n",  // bare LF after the size
            "5\r\nhello\n0\r\n\r\n",  // bare LF after the data
            "5\r\nhelloXX0\r\n\r\n",  // data longer than announced
            "-5\r\nhello\r\n0\r\n\r\n",
            "0x5\r\nhello\r\n0\r\n\r\n",
            " 5\r\nhello\r\n0\r\n\r\n",
            "5 \r\nhello\r\n0\r\n\r\n",  // whitespace without an extension
            "5;\r\nhello\r\n0\r\n\r\n",  // extension without a name
            "5;a=\r\nhello\r\n0\r\n\r\n",
            "5;a=\"open\r\nhello\r\n0\r\n\r\n",
            "5;a\rb\r\nhello\r\n0\r\n\r\n",  // CR inside an extension
            "5;a=b c\r\nhello\r\n0\r\n\r\n",
            "0\r\nNoColon\r\n\r\n",
            "0\r\n folded: x\r\n\r\n",
            "0\r\nX-A: a\u{01}\r\n\r\n",
            "0\r\nX-A: 1\n\r\n",
        ])
    func brokenFraming(wire: String) throws {
        #expect(throws: HTTPError.invalidRequest("")) { _ = try Self.decode(wire, step: 1000) }
        #expect(throws: HTTPError.invalidRequest("")) { _ = try Self.decode(wire, step: 1) }
    }

    @Test("S25: data over maxBodyBytes is 413 on the size line, before the data; so is framing over its budget")
    func decoderLimits() throws {
        // The size line alone is refused: the data never has to arrive.
        #expect(throws: HTTPError.payloadTooLarge()) { _ = try Self.decode("401\r\n", step: 1000, maxBodyBytes: 1024) }
        #expect(throws: HTTPError.payloadTooLarge()) {
            _ = try Self.decode("400\r\n" + String(repeating: "a", count: 1024) + "\r\n1\r\n", step: 1000, maxBodyBytes: 1024)
        }
        #expect(try Self.decode("400\r\n" + String(repeating: "a", count: 1024) + "\r\n0\r\n\r\n", step: 1000).body.count == 1024)
        // However many digits: no overflow, just 413.
        #expect(throws: HTTPError.payloadTooLarge()) { _ = try Self.decode(String(repeating: "f", count: 40) + "\r\n", step: 3) }
        #expect(try Self.decode(String(repeating: "0", count: 40) + "1\r\na\r\n0\r\n\r\n", step: 3).body == [UInt8(ascii: "a")])
        // Framing: a long extension, many tiny chunks, long trailers, or a line that never ends.
        #expect(throws: HTTPError.payloadTooLarge()) {
            _ = try Self.decode("1;x=" + String(repeating: "a", count: 300) + "\r\na\r\n0\r\n\r\n", step: 1000)
        }
        #expect(throws: HTTPError.payloadTooLarge()) { _ = try Self.decode(String(repeating: "1\r\na\r\n", count: 100), step: 1000) }
        #expect(throws: HTTPError.payloadTooLarge()) {
            _ = try Self.decode("0\r\n" + String(repeating: "X-T: aaaaaaaa\r\n", count: 30) + "\r\n", step: 10)
        }
        #expect(throws: HTTPError.payloadTooLarge()) { _ = try Self.decode("1" + String(repeating: "0", count: 300), step: 1) }
    }

    @Test("a chunked JSON body reaches the handler whole, extensions and trailers ignored; the next request on the connection is answered")
    func echoesOverTheWire() async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            let first = "3;ext=1\r\n" + #"{"a"# + "\r\n"
            let rest = Self.chunks(#"":[1,"x"],"b":"chunked"}"#, size: 5)
            let trailers = rest.replacingOccurrences(of: "\r\n0\r\n\r\n", with: "\r\n0\r\nX-Checksum: none\r\n\r\n")
            await connection.send(Self.chunkedPost(first + trailers))
            let response = await connection.readResponse()
            #expect(response?.status == 200)
            #expect(response?.json == ["a": [1, "x"], "b": "chunked"])
            await connection.send(get("/healthz"))
            #expect(await connection.readResponse()?.json == ["status": "ok"])
        }
    }

    @Test("a chunked body sent a few bytes at a time is read; a pipelined request after it is answered in order")
    func trickles() async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            let wire = Array((Self.chunkedPost(Self.chunks(#"["trickle",1,2,3]"#, size: 4)) + get("/healthz")).utf8)
            for start in stride(from: 0, to: wire.count, by: 3) {
                await connection.send(Array(wire[start..<min(wire.count, start + 3)]))
            }
            #expect(await connection.readResponse()?.json == ["trickle", 1, 2, 3])
            #expect(await connection.readResponse()?.json == ["status": "ok"])
        }
    }

    @Test("S25: a chunked body over maxBodyBytes is 413 payload_too_large and a close, whether one chunk or many")
    func overLimitOnTheWire() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.maxBodyBytes = 1024 }) { _, port in
            // One chunk announced too large: refused on its size line, before its data is sent.
            let connection = try RawConnection(port: port)
            await connection.send(Self.chunkedPost("100000\r\n"))
            let response = await connection.readResponse()
            #expect(response?.status == 413)
            #expect(response?.json?["error"] == "payload_too_large")
            #expect(response?.header("Connection") == "close")
            #expect(await connection.closesWithin(seconds: 3))

            let many = try RawConnection(port: port)
            let big = "[" + String(repeating: "1,", count: 600) + "1]"
            await many.send(Self.chunkedPost(Self.chunks(big, size: 100)))
            #expect(await many.readResponse()?.status == 413)
            #expect(await many.closesWithin(seconds: 3))

            let fits = "[" + String(repeating: "1,", count: 500) + "1]"
            #expect(try await exchange(port, Self.chunkedPost(Self.chunks(fits, size: 100)))?.status == 200)
        }
    }

    @Test("S25: a chunked body that stops arriving is cut off at the body timeout")
    func slowChunkedBody() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.bodyTimeout = .milliseconds(500) }) { server, port in
            let connection = try RawConnection(port: port)
            await connection.send(Self.chunkedPost("2\r\n[1\r\n"))
            #expect(await connection.closesWithin(seconds: 4))
            // Trickling chunks does not extend the deadline: it runs from the end of the head.
            let trickler = try RawConnection(port: port)
            await trickler.send(Self.chunkedPost(""))
            var cut = false
            for _ in 0..<40 {
                guard await trickler.send("1\r\n \r\n") else {
                    cut = true
                    break
                }
                if await trickler.closesWithin(seconds: 0.1) {
                    cut = true
                    break
                }
            }
            #expect(cut)
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.activeConnections == 0)
        }
    }

    @Test("Expect: 100-continue on a chunked body gets 100 before the body is sent")
    func expectContinue() async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(Self.chunkedPost("", headers: "Expect: 100-continue\r\n"))
            let interim = await connection.receiveSome(64)
            #expect(String(decoding: interim, as: UTF8.self).hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"))
            await connection.send(Self.chunks("{}", size: 1))
            #expect(await connection.readResponse()?.json == [:])
        }
    }

    @Test(
        "S24: broken chunk framing on the wire is 400 invalid_request and a close; the server stays up",
        arguments: ["5\r\nhelloXX", "5\nhello\r\n0\r\n\r\n", "5;a\u{0B}\r\nhello\r\n0\r\n\r\n", "2\r\n{}\r\n0\r\nX: a\rb\r\n\r\n"])
    func brokenFramingOnTheWire(chunks: String) async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(Self.chunkedPost(chunks))
            let response = await connection.readResponse()
            #expect(response?.status == 400)
            #expect(response?.json?["error"] == "invalid_request")
            #expect(response?.header("Connection") == "close")
            #expect(await connection.closesWithin(seconds: 3))
            #expect(try await exchange(port, get("/healthz"))?.status == 200)
        }
    }

    @Test(
        "S24: Transfer-Encoding other than chunked alone stays refused, and never together with Content-Length",
        arguments: [
            ("Transfer-Encoding: gzip, chunked\r\n", 501),
            ("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", 501),
            ("Transfer-Encoding: chunked, gzip\r\n", 400),
            ("Transfer-Encoding: gzip\r\n", 400),
            ("Transfer-Encoding: chunked, chunked\r\n", 400),
            ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400),
            ("Transfer-Encoding: identity\r\n", 400),
            ("Transfer-Encoding:\r\n", 400),
            ("Transfer-Encoding: chunked;x=1\r\n", 400),
            ("Transfer-Encoding: chunked\r\nContent-Length: 9\r\n", 400),
            ("Content-Length: 9\r\nTransfer-Encoding: chunked\r\n", 400),
        ])
    func refusedCodings(fields: String, status: Int) async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(fields)\r\n2\r\n{}\r\n0\r\n\r\n")
            let response = await connection.readResponse()
            #expect(response?.status == status)
            #expect(response?.json?["error"] == "invalid_request")
            #expect(response?.header("Connection") == "close")
            #expect(await connection.closesWithin(seconds: 3))
        }
    }

    @Test("S24: HTTP/1.0 with Transfer-Encoding is 400: its framing cannot be trusted (RFC 9112 §6.1)")
    func http10Chunked() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try await exchange(
                port, "POST /echo HTTP/1.0\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
            #expect(response?.status == 400)
            #expect(response?.json?["error"] == "invalid_request")
        }
    }

    @Test("the access log counts a chunked request's bytes as sent, framing included")
    func accessLogBytes() async throws {
        let log = MemoryAccessLog()
        try await withServer(Self.router(), accessLog: log) { _, port in
            let request = Self.chunkedPost(Self.chunks("[1,2]", size: 2), headers: "Connection: close\r\n")
            let response = try await exchange(port, request)
            #expect(response?.status == 200)
            let logged = log.entries.withLock { $0.first?.requestBytes }
            #expect(logged == request.utf8.count)
        }
    }
}
