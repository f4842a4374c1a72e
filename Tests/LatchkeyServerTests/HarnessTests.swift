import LatchkeyHTTP
import LatchkeyJSON
import Testing

/// The router-level harness (`TestServer.request`) answers as the socket does, so the tests that
/// use it prove what a client on the network would see.
@Suite("Router-level harness")
struct HarnessTests {
    /// The headers only the wire writes, or that differ per request.
    static let wireOnly: Set<String> = ["date", "content-length", "connection", "x-request-id"]

    static func comparable(_ headers: HTTPHeaders) -> [String] {
        headers.map { "\($0.name.lowercased()): \($0.value)" }.filter { !wireOnly.contains(String($0.prefix { $0 != ":" })) }.sorted()
    }

    @Test("the harness and the socket give the same status, headers and body: successes, refusals, 404, 405; the parser's and the size limit's refusals")
    func sameAnswerAsTheSocket() async throws {
        try await TestServer.with { server in
            let requests: [(HTTPMethod, String, JSONValue?, [UInt8]?, [String: String])] = [
                (.get, "/healthz", nil, nil, [:]),
                (.get, "/.well-known/openid-configuration", nil, nil, [:]),
                (.get, "/v1/me", nil, nil, [:]),
                (.get, "/v1/me", nil, nil, ["Authorization": "Bearer not-a-token"]),
                (.post, "/v1/auth/password", ["username": "nobody@example.com", "password": "wrong password here"], nil, [:]),
                (.post, "/v1/auth/password", nil, Array("{".utf8), ["Content-Type": "application/json"]),
                (.post, "/oauth/token", nil, Array("grant_type=nope".utf8), ["Content-Type": "application/x-www-form-urlencoded"]),
                (.get, "/no/such/path", nil, nil, [:]),
                (.delete, "/healthz", nil, nil, [:]),
            ]
            for (method, path, json, body, headers) in requests {
                let harness = try await server.request(method, path, json: json, body: body, headers: headers)
                let socket = try await server.requestOverSocket(method, path, json: json, body: body, headers: headers)
                #expect(harness.status == socket.status, "\(method) \(path)")
                #expect(Self.comparable(harness.headers) == Self.comparable(socket.headers), "\(method) \(path)")
                #expect(harness.headers["X-Request-Id"] != nil, "\(method) \(path)")
                // Error bodies name no request id, so they match byte for byte.
                #expect(harness.body == socket.body, "\(method) \(path): \(harness.text) vs \(socket.text)")
            }
            // What the parser and the body limit refuse is refused as on the wire (where the
            // connection then closes, which URLSession cannot be relied on to show).
            let malformed = try await server.request(.get, "/v1/me?a=1&a=2")
            #expect(malformed.status == 400)
            #expect(try malformed.json["error"] == "invalid_request")
            let oversized = try await server.request(
                .post, "/v1/auth/password", body: [UInt8](repeating: 0x20, count: 2_000_000), headers: ["Content-Type": "application/json"])
            #expect(oversized.status == 413)
        }
    }
}
