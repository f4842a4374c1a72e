import Foundation
import LatchkeyHTTP
import LatchkeyStore
import LatchkeyWire
import Testing

/// What a 415 tells a client to send, on the real endpoints.
@Suite("HTTP 415 unsupported_media_type")
struct HTTPMediaTypeTests {
    @Test("S24: /v1/token and /v1/revoke name both media types they take; a JSON endpoint names JSON")
    func namesWhatToSend() async throws {
        try await TestServer.with { server in
            for path in ["/v1/token", "/v1/revoke"] {
                let response = try await server.request(
                    .post, path, body: Array("grant_type=refresh_token".utf8), headers: ["Content-Type": "text/plain"])
                #expect(response.status == 415, "\(path)")
                #expect(try response.wireError.error == .unsupportedMediaType)
                #expect(
                    try response.wireError.errorDescription == "send the body as application/json or application/x-www-form-urlencoded",
                    "\(path)")
            }
            let signUp = try await server.request(
                .post, "/v1/auth/password/signup", body: Array("username=a".utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(signUp.status == 415)
            #expect(try signUp.wireError.errorDescription == "send the body as application/json")
        }
    }

    @Test("S24: a gzip-encoded sign-up is 415 naming Content-Encoding, and creates nothing")
    func contentEncodingRefused() async throws {
        try await TestServer.with { server in
            let json = #"{"username":"zip@example.com","password":"correct horse battery"}"#
            for coding in ["gzip", "deflate"] {
                let response = try await server.request(
                    .post, "/v1/auth/password/signup", body: Array(json.utf8),
                    headers: ["Content-Type": "application/json", "Content-Encoding": coding])
                #expect(response.status == 415)
                #expect(try response.wireError.error == .unsupportedMediaType)
                #expect(try response.wireError.errorDescription == "Content-Encoding is not supported: send the body uncompressed")
            }
            let count = try await server.database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM users", [])?.int("n") }
            #expect(count == 0)
        }
    }
}
