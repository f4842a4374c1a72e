import Foundation
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// Chunked request bodies from a real client library, against real endpoints.
@Suite("HTTP chunked bodies from Python's http.client")
struct HTTPChunkedTests {
    /// The Python `make test` prepared, or the one on the PATH; a test that needs it fails without it.
    static func python() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"] { return URL(fileURLWithPath: path) }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/python3" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        return URL(fileURLWithPath: try #require(path, "these tests need python3 (scripts/bootstrap installs it)"))
    }

    /// Posts `json` to `path` with http.client, which streams an iterable body in the chunked
    /// coding, `piece` bytes per chunk, and prints the status and the response body.
    static let client = """
        import http.client, sys
        port, path, piece, body = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        chunks = (body[i:i + piece] for i in range(0, len(body), piece))
        connection.request("POST", path, body=chunks, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        print(response.status)
        print(response.read().decode())
        """

    static func post(_ server: TestServer, _ path: String, json: String, piece: Int) async throws -> (status: Int, body: [UInt8]) {
        let python = try Self.python()
        let port = try #require(URLComponents(string: server.baseURL)?.port)
        let results = await BlockingWorkers.run(1) { _ in
            Result { try Subprocess.run(python, ["-c", Self.client, String(port), path, String(piece), json]) }
        }
        let result = try results[0].get()
        let lines = result.output.split(separator: "\n", maxSplits: 1)
        #expect(result.status == 0, "\(result.error)")
        let status = try #require(lines.first.flatMap { Int($0) }, "\(result.output) \(result.error)")
        return (status, Array((lines.count > 1 ? lines[1] : "").utf8))
    }

    @Test("S24 S25: a sign-up whose JSON body arrives chunked creates the account, its session and the audit entry")
    func signUpChunked() async throws {
        try await TestServer.with { server in
            let json = #"{"username":"chunky@example.com","password":"correct horse battery","given_name":"Chunk"}"#
            let (status, body) = try await Self.post(server, "/v1/auth/password/signup", json: json, piece: 7)
            #expect(status == 201, "\(String(decoding: body, as: UTF8.self))")
            let tokens = try WireTokenResponse(parsing: body)
            #expect(tokens.user.givenName == "Chunk")
            let userID = tokens.user.id
            let row = try await server.database.read {
                try $0.queryOne("SELECT username FROM password_credentials WHERE user_id = ?", [.text(userID)])
            }
            #expect(try row?.string("username") == "chunky@example.com")
            let audit = try await AuditLog(database: server.database).entries(userID: userID, limit: 10).map { "\($0.event) \($0.outcome)" }
            #expect(audit.contains("password.signup success"))
            // The session is real: its access token opens /v1/me.
            let token = tokens.accessToken
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        }
    }

    @Test("S25: a chunked body over 64 KiB is 413 payload_too_large, and nothing is created")
    func oversizedChunked() async throws {
        try await TestServer.with { server in
            let padding = String(repeating: "a", count: 70 * 1024)
            let json = #"{"username":"big@example.com","password":"correct horse battery","given_name":"\#(padding)"}"#
            let (status, body) = try await Self.post(server, "/v1/auth/password/signup", json: json, piece: 4096)
            #expect(status == 413)
            #expect(try WireErrorBody(parsing: body).error == .payloadTooLarge)
            let count = try await server.database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM users", [])?.int("n") }
            #expect(count == 0)
        }
    }
}
