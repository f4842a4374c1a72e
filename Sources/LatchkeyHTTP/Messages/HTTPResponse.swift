package import LatchkeyJSON

/// An HTTP response: status, header fields and the whole body.
///
/// The server adds `Content-Length`, `Date`, `X-Request-Id` and, when it closes the connection,
/// `Connection: close`; fields of those names set here are replaced.
package struct HTTPResponse: Sendable {
    /// The status code, 100–599.
    package var status: Int
    /// The header fields.
    package var headers: HTTPHeaders
    /// The body; not sent for `HEAD` requests and for 1xx, 204 and 304 responses.
    package var body: [UInt8]

    /// Creates a response.
    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response with `Content-Type: application/json; charset=utf-8`.
    ///
    /// - Parameters:
    ///   - value: Serialized compactly, members sorted.
    ///   - status: The status code.
    package static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: value.serialized)
    }

    /// A text response.
    ///
    /// - Parameters:
    ///   - text: Sent as UTF-8.
    ///   - status: The status code.
    ///   - contentType: The `Content-Type` field.
    package static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8")
        -> HTTPResponse
    {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Array(text.utf8))
    }

    /// A response without a body, by default 204 No Content.
    package static func empty(status: Int = 204) -> HTTPResponse {
        HTTPResponse(status: status)
    }
}
