import Foundation
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Testing

/// Not a test of behaviour: a server for an outside load generator, run by hand with
/// `LATCHKEY_HTTP_BENCH_PORT=8081 swift test -c release --filter BenchmarkServer` and
/// `wrk -t2 -c64 -d10s http://127.0.0.1:8081/healthz` (see the commit that added it for figures).
@Suite("Benchmark server")
struct BenchmarkServer {
    @Test(
        "serves /healthz until LATCHKEY_HTTP_BENCH_SECONDS pass",
        .enabled(if: ProcessInfo.processInfo.environment["LATCHKEY_HTTP_BENCH_PORT"] != nil))
    func serve() async throws {
        let environment = ProcessInfo.processInfo.environment
        let port = Int(environment["LATCHKEY_HTTP_BENCH_PORT"] ?? "") ?? 8081
        let seconds = Int(environment["LATCHKEY_HTTP_BENCH_SECONDS"] ?? "") ?? 30
        let router = Router()
        router.get("/healthz", synchronous: { _ in .json(["status": "ok"]) })
        router.get("/async") { _ in .json(["status": "ok"]) }
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: port)
        if let loops = environment["LATCHKEY_HTTP_BENCH_LOOPS"].flatMap(Int.init) { configuration.eventLoops = loops }
        let log: (any AccessLogSink)? = environment["LATCHKEY_HTTP_BENCH_LOG"] != nil ? try StandardErrorAccessLog() : nil
        let server = HTTPServer(configuration: configuration, responder: router, accessLog: log)
        try server.start()
        try await Task.sleep(for: .seconds(seconds))
        await server.shutdown()
        #expect(server.activeConnections == 0)
    }
}
