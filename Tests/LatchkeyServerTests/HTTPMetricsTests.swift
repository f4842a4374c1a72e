import Foundation
import LatchkeyHTTP
import LatchkeyTestSupport
import Testing

/// `/metrics` label values stay a closed set, whatever clients send.
@Suite("HTTP metrics labels")
struct HTTPMetricsTests {
    /// Sends `requests` pipelined on one connection (the last asks to close) and returns what came back.
    static func pipeline(_ port: Int, _ requests: [String]) async -> [UInt8] {
        let wire = requests.enumerated().map { index, request in
            index == requests.count - 1 ? request.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n") : request
        }.joined()
        let result = await BlockingWorkers.run(1) { _ in RawHTTP.exchange(port: port, Array(wire.utf8), timeout: 20) }
        guard case .response(let bytes) = result[0] else { return [] }
        return bytes
    }

    @Test("S26: 300 made-up methods and 300 scanned paths leave a bounded set of series; the methods count as other")
    func s26BoundedLabels() async throws {
        try await TestServer.with { server in
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            // Any token of up to 32 characters is a method the router answers 405 (or 404).
            let methods = (0..<300).map { "M\($0)" + String(repeating: "X", count: 20) }
            var requests = methods.map { "\($0) /healthz HTTP/1.1\r\nHost: x\r\n\r\n" }
            requests += (0..<300).map { "GET /scan/\($0)?q=\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }
            requests += (0..<50).map { "\(methods[$0]) /scan/\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }
            let answers = String(decoding: await Self.pipeline(port, requests), as: UTF8.self)
            #expect(answers.components(separatedBy: "HTTP/1.1 405 ").count - 1 == 300)
            #expect(answers.components(separatedBy: "HTTP/1.1 404 ").count - 1 == 350)

            let text = try await server.request(.get, "/metrics").text
            let requestSeries = text.split(separator: "\n").filter { $0.hasPrefix("latchkey_http_requests_total{") }
            let durationSeries = text.split(separator: "\n").filter { $0.hasPrefix("latchkey_http_request_duration_seconds_count{") }
            #expect(text.contains(#"latchkey_http_requests_total{method="other",route="unmatched",status="405"} 300"#), "\(requestSeries)")
            #expect(text.contains(#"latchkey_http_requests_total{method="GET",route="unmatched",status="404"} 300"#))
            #expect(text.contains(#"latchkey_http_requests_total{method="other",route="unmatched",status="404"} 50"#))
            #expect(requestSeries.count <= 4, "\(requestSeries)")
            #expect(durationSeries.count <= 2, "\(durationSeries)")
            #expect(!text.contains("M0X"), "a made-up method never becomes a label value")
            #expect(!text.contains("/scan"), "a path never becomes a label value")
        }
    }
}
