import Foundation
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Testing

@Suite("Request bodies")
struct BodyTests {
    static func router() -> Router {
        let router = Router()
        router.post("/echo") { request in .json(try request.jsonBody()) }
        router.post("/form") { request in .json(.object(try request.formBody().mapValues { .string($0) })) }
        return router
    }

    static func expectError(_ response: RawResponse?, status: Int, code: String) {
        #expect(response?.status == status)
        let body = response?.json?.objectValue
        #expect(body?["error"]?.stringValue == code)
        #expect(body?["error_description"]?.stringValue?.isEmpty == false)
        #expect(response?.header("X-Request-Id") != nil)
    }

    @Test("a JSON body is parsed")
    func json() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try await exchange(port, post("/echo", contentType: "application/json; charset=utf-8", body: #"{"a":[1,"x"]}"#))
            #expect(response?.status == 200)
            #expect(response?.json == ["a": [1, "x"]])
        }
    }

    @Test("S24: malformed JSON, and JSON with a duplicate member, are 400 invalid_request", arguments: [
        #"{"a":"#, #"{"a":1,"a":2}"#, "", "[1,]", "\u{FEFF}{}",
    ])
    func badJSON(body: String) async throws {
        try await withServer(Self.router()) { _, port in
            Self.expectError(try await exchange(port, post("/echo", body: body)), status: 400, code: "invalid_request")
        }
    }

    @Test("S24: a JSON route given another content type is 415 unsupported_media_type")
    func wrongMediaType() async throws {
        try await withServer(Self.router()) { _, port in
            Self.expectError(
                try await exchange(port, post("/echo", contentType: "text/plain", body: "{}")), status: 415,
                code: "unsupported_media_type")
            Self.expectError(
                try await exchange(port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"), status: 415,
                code: "unsupported_media_type")
        }
    }

    @Test("S24: the 415 says which media types to send")
    func mediaTypeNamed() async throws {
        try await withServer(Self.router()) { _, port in
            let json = try await exchange(port, post("/echo", contentType: "text/plain", body: "{}"))
            #expect(json?.json?["error_description"] == "send the body as application/json")
            let form = try await exchange(port, post("/form", contentType: "application/json", body: "{}"))
            #expect(form?.json?["error_description"] == "send the body as application/x-www-form-urlencoded")
        }
    }

    @Test("S24: a body with a Content-Encoding is 415 naming Content-Encoding, not misread; identity is accepted")
    func contentEncodingRefused() async throws {
        try await withServer(Self.router()) { _, port in
            // `{"a":1}` compressed with gzip -n.
            let gzipped: [UInt8] = [
                0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xab, 0x56, 0x4a, 0x54, 0xb2, 0x32, 0xac, 0x05, 0x00,
                0xaf, 0xac, 0x1b, 0x56, 0x07, 0x00, 0x00, 0x00,
            ]
            for coding in ["gzip", "deflate", "br", "identity, gzip"] {
                let connection = try RawConnection(port: port)
                // Head and body in one write: on a loaded machine two writes could fall further
                // apart than the test server's 2 s body timeout, and the answer would be a 408.
                let head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: \(coding)\r\nContent-Length: \(gzipped.count)\r\n\r\n"
                await connection.send(Array(head.utf8) + gzipped)
                let response = await connection.readResponse()
                Self.expectError(response, status: 415, code: "unsupported_media_type")
                #expect(response?.json?["error_description"] == "Content-Encoding is not supported: send the body uncompressed", "\(coding)")
            }
            let form = try await exchange(
                port, post("/form", contentType: "application/x-www-form-urlencoded", body: "a=1", headers: "Content-Encoding: gzip\r\n"))
            Self.expectError(form, status: 415, code: "unsupported_media_type")
            let identity = try await exchange(port, post("/echo", body: #"{"a":1}"#, headers: "Content-Encoding: identity\r\n"))
            #expect(identity?.json == ["a": 1])
        }
    }

    @Test("a form body is decoded; a repeated parameter is 400")
    func form() async throws {
        try await withServer(Self.router()) { _, port in
            let response = try await exchange(
                port, post("/form", contentType: "application/x-www-form-urlencoded", body: "grant_type=refresh_token&refresh_token=a%2Bb+c"))
            #expect(response?.json == ["grant_type": "refresh_token", "refresh_token": "a+b c"])
            Self.expectError(
                try await exchange(port, post("/form", contentType: "application/x-www-form-urlencoded", body: "a=1&a=2")),
                status: 400, code: "invalid_request")
        }
    }

    @Test("S25: a body over the limit is refused with 413 payload_too_large")
    func bodyOverLimit() async throws {
        try await withServer(Self.router(), limits: testLimits { $0.maxBodyBytes = 1024 }) { _, port in
            let big = "[" + String(repeating: "1,", count: 600) + "1]"
            Self.expectError(try await exchange(port, post("/echo", body: big)), status: 413, code: "payload_too_large")
            let fits = "[" + String(repeating: "1,", count: 500) + "1]"
            #expect(try await exchange(port, post("/echo", body: fits))?.status == 200)
        }
    }

    @Test("S25: a 10 MB body is refused with 413 without being buffered")
    func tenMegabytes() async throws {
        try await withServer(Self.router()) { server, port in
            let connection = try RawConnection(port: port)
            // Only the head goes out: the 413 must come back before any of the body is sent,
            // which proves the server decided on Content-Length instead of reading the body.
            await connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n")
            let response = await connection.readResponse()
            Self.expectError(response, status: 413, code: "payload_too_large")
            #expect(response?.header("Connection") == "close")
            // What the client sends anyway is discarded and the connection ends.
            var chunk = [UInt8](repeating: 0x31, count: 64 * 1024)
            chunk[0] = 0x5B
            var sent = 0
            while sent < 10 << 20 {
                guard await connection.send(chunk) else { break }
                sent += chunk.count
            }
            #expect(await connection.closesWithin(seconds: 5))
            #expect(try await exchange(port, post("/echo", body: "[]"))?.status == 200)
            _ = server
        }
    }

    @Test("Expect: 100-continue gets 100 before the body is sent")
    func expectContinue() async throws {
        try await withServer(Self.router()) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            #expect(count > 0 && String(decoding: buffer[0..<max(count, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"))
            await connection.send("{}")
            #expect(await connection.readResponse()?.json == [:])
        }
    }
}
