import Foundation
import LatchkeyHTTP
import LatchkeyJSON
import Testing

@Suite("Messages")
struct MessageTests {
    @Test("headers keep order and repeats, and look names up case-insensitively")
    func headers() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "Set-Cookie": "a=1"]
        headers.add("set-cookie", "b=2")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["SET-COOKIE"] == "a=1")
        #expect(headers.values("Set-Cookie") == ["a=1", "b=2"])
        #expect(headers.count == 3)
        headers.set("SET-cookie", "c=3")
        #expect(headers.values("set-cookie") == ["c=3"])
        #expect(headers.map(\.name) == ["Content-Type", "SET-cookie"])
        headers.remove("content-type")
        #expect(headers["Content-Type"] == nil)
        #expect(!headers.contains("Content-Type") && headers.contains("Set-Cookie"))
        #expect(HTTPHeaders()["X"] == nil && HTTPHeaders().isEmpty)
    }

    @Test("the media type check ignores case and parameters")
    func mediaType() throws {
        var request = HTTPRequest(method: .post, path: "/", headers: ["Content-Type": "Application/JSON ; charset=UTF-8"], body: Array("{}".utf8))
        #expect(try request.jsonBody() == [:])
        request.headers.set("Content-Type", "application/jsonp")
        #expect(throws: HTTPError.unsupportedMediaType()) { try request.jsonBody() }
        request.headers.set("Content-Type", "application/x-www-form-urlencoded")
        request.body = Array("a=%zz".utf8)
        #expect(throws: HTTPError.invalidRequest("")) { try request.formBody() }
    }

    @Test("error responses have exactly the fields of docs/reference.md")
    func errorBodies() throws {
        let notFound = HTTPError.notFound().response
        #expect(notFound.status == 404)
        #expect(try JSONValue(parsing: notFound.body) == ["error": "not_found", "error_description": "no such resource"])
        let tooLarge = HTTPError.payloadTooLarge().response
        #expect(try JSONValue(parsing: tooLarge.body)["error"] == "payload_too_large")
        let allowed = HTTPError.methodNotAllowed(allowed: [.get, .post]).response
        #expect(allowed.headers["Allow"] == "GET, POST")
        let server = HTTPError.serverError(requestID: "r1").response
        #expect(try JSONValue(parsing: server.body) == ["error": "server_error", "error_description": "internal error", "request_id": "r1"])
    }

    @Test("response helpers set the content type")
    func responses() {
        #expect(HTTPResponse.json(["a": 1]).headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(HTTPResponse.json(["a": 1], status: 201).body == Array(#"{"a":1}"#.utf8))
        #expect(HTTPResponse.text("hi").headers["Content-Type"] == "text/plain; charset=utf-8")
        #expect(HTTPResponse.empty().status == 204 && HTTPResponse.empty().body.isEmpty)
        #expect(HTTPMethod(rawValue: "GET") == .get)
    }
}
