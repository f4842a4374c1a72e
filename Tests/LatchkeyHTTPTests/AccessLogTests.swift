import Foundation
import Glibc
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Synchronization
import Testing

@Suite("Access log")
struct AccessLogTests {
    @Test("S26: the access log has the route pattern, and no Authorization, Cookie, query or body value")
    func noSecrets() async throws {
        let log = MemoryAccessLog()
        let router = Router()
        router.post("/v1/sessions/{id}") { _ in .json(["ok": true]) }
        try await withServer(router, accessLog: log) { _, port in
            let body = #"{"password":"hunter2-BODY-SECRET"}"#
            let response = try await exchange(
                port,
                post(
                    "/v1/sessions/s%2042?code=QUERY-SECRET&state=x", body: body,
                    headers: "Authorization: Bearer AUTH-SECRET\r\nCookie: sid=COOKIE-SECRET\r\nUser-Agent: LatchkeyTests/1\r\n"))
            #expect(response?.status == 200)
            _ = try await exchange(port, get("/unknown/path"))
        }
        let entries = log.entries.withLock { $0 }
        try #require(entries.count == 2)
        let entry = entries[0]
        #expect(entry.route == "/v1/sessions/{id}")
        #expect(entry.path == "/v1/sessions/s 42")
        #expect(entry.method == .post)
        #expect(entry.status == 200)
        #expect(entry.remoteAddress == "127.0.0.1")
        #expect(entry.userAgent == "LatchkeyTests/1")
        #expect(entry.requestBytes > 100 && entry.responseBytes > 50)
        #expect(entry.requestID.count == 32)
        let line = entry.jsonLine
        for secret in ["AUTH-SECRET", "COOKIE-SECRET", "QUERY-SECRET", "BODY-SECRET", "hunter2"] {
            #expect(!line.contains(secret), "\(secret) leaked into the access log")
        }
        let parsed = try JSONValue(parsing: line)
        // Compact, members in name order, like every JSON object we write.
        let names = try #require(parsed.objectValue?.keys.sorted())
        #expect(names.count == 11)
        let offsets = names.map { line.range(of: "\"\($0)\":")?.lowerBound }
        #expect(offsets.allSatisfy { $0 != nil } && offsets.map { $0! } == offsets.map { $0! }.sorted(), "\(line)")
        #expect(parsed["duration_seconds"]?.numberValue.map { $0 >= 0 && $0 < 5 } == true)
        #expect(parsed["route"] == "/v1/sessions/{id}")
        #expect(parsed["status"] == 200)
        #expect(parsed["time"]?.stringValue?.hasSuffix("Z") == true)
        #expect(entries[1].route == nil)
        #expect(entries[1].status == 404)
        #expect(try JSONValue(parsing: entries[1].jsonLine)["route"] == .null)
    }

    @Test("a line is compact JSON with its members in name order, the time in RFC 3339 UTC and the duration in seconds")
    func exactLine() throws {
        let entry = AccessLogEntry(
            time: Date(timeIntervalSince1970: 1_796_000_000.0456), requestID: "req-1", method: .get, route: nil, path: "/a \"b\"",
            status: 404, durationSeconds: 1.0000125, remoteAddress: "::1", userAgent: String(repeating: "é", count: 300), requestBytes: 0,
            responseBytes: 1234)
        let expected = #"{"duration_seconds":1.000013,"method":"GET","path":"/a \"b\"","remote_address":"::1","request_bytes":0,"#
            + #""request_id":"req-1","response_bytes":1234,"route":null,"status":404,"time":"2026-11-30T00:53:20.045Z","#
            + #""user_agent":""# + String(repeating: "é", count: 256) + #""}"#
        #expect(entry.jsonLine == expected)
    }

    @Test("StandardErrorAccessLog writes one JSON line per entry")
    func writesLines() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let log = try StandardErrorAccessLog(flushInterval: .seconds(60), fileDescriptor: fds[1])
        for index in 0..<3 {
            log.record(
                AccessLogEntry(
                    time: Date(timeIntervalSince1970: 1_700_000_000.25), requestID: "r\(index)", method: .get,
                    route: "/healthz", path: "/healthz", status: 200, durationSeconds: 0.000_123_4,
                    remoteAddress: "::1", userAgent: nil, requestBytes: 10, responseBytes: 20))
        }
        log.flush()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        let lines = String(decoding: buffer[0..<max(count, 0)], as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        let first = try JSONValue(parsing: String(lines[0]))
        #expect(first["request_id"] == "r0")
        #expect(first["time"] == "2023-11-14T22:13:20.250Z")
        #expect(first["duration_seconds"] == 0.000123)
        #expect(first["user_agent"] == .null)
    }

    @Test("shutdown flushes the access log: every response has its line once shutdown() returns, five times over")
    func shutdownFlushes() async throws {
        let router = Router()
        router.get("/sync", synchronous: { _ in .text("ok") })
        router.get("/async") { _ in .text("ok") }
        for run in 0..<5 {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID()).log").path
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #expect(fd >= 0)
            defer {
                close(fd)
                unlink(path)
            }
            // The writer thread would only write after a minute: what is there comes from shutdown.
            let log = try StandardErrorAccessLog(flushInterval: .seconds(60), fileDescriptor: fd)
            try await withServer(router, accessLog: log) { _, port in
                for index in 0..<10 {
                    let response = try await exchange(port, get(index % 2 == 0 ? "/sync" : "/async", headers: "X-Request-Id: run\(run)-\(index)\r\n"))
                    #expect(response?.status == 200)
                }
            }
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            let ids = lines.compactMap { (try? JSONValue(parsing: String($0)))?["request_id"]?.stringValue }
            #expect(ids == (0..<10).map { "run\(run)-\($0)" }, "run \(run)")
        }
    }

    @Test("S25: a stuck log drops and counts entries instead of growing")
    func dropsWhenFull() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let log = try StandardErrorAccessLog(flushInterval: .seconds(60), maxBufferedEntries: 2, fileDescriptor: fds[1])
        for index in 0..<5 {
            log.record(
                AccessLogEntry(
                    time: Date(), requestID: "r\(index)", method: .get, route: nil, path: "/", status: 404,
                    durationSeconds: 0, remoteAddress: "127.0.0.1", userAgent: nil, requestBytes: 1, responseBytes: 1))
        }
        log.flush()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        let lines = String(decoding: buffer[0..<max(count, 0)], as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.last == #"{"access_log_dropped_lines":3}"#)
    }
}
