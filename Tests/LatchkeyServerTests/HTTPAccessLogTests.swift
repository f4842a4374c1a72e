import Foundation
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// The access log of the real `latchkey serve`, stopped by SIGTERM right after its last request.
@Suite("HTTP access log at shutdown")
struct HTTPAccessLogTests {
    @Test("every response before SIGTERM has its access-log line when the process has exited, five runs in a row")
    func everyLineSurvivesSIGTERM() async throws {
        for run in 0..<5 {
            let directory = try ServeTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try await ServerProcess.start(["serve", "--dev", "--listen", "127.0.0.1:0"], in: directory)
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let ids = (0..<20).map { "flush-\(run)-\($0)" }
            let statuses = await BlockingWorkers.run(1) { _ in
                ids.map { id -> Int in
                    let request = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(id)\r\nConnection: close\r\n\r\n"
                    guard case .response(let bytes) = RawHTTP.exchange(port: port, Array(request.utf8)) else { return 0 }
                    return RawHTTP.parse(bytes)?.status ?? 0
                }
            }[0]
            #expect(statuses == Array(repeating: 200, count: ids.count))
            server.send(SIGTERM)
            #expect(await server.waitForExit(timeout: 15) == 0)
            // Raw JSON: the access log's lines, not wire bodies.
            let logged = Set(
                server.errors.split(separator: "\n").compactMap { line in
                    (try? JSONValue(parsing: String(line)))?["request_id"]?.stringValue
                })
            let missing = ids.filter { !logged.contains($0) }
            #expect(missing.isEmpty, "run \(run): no access-log line for \(missing)")
        }
    }
}
