package import LatchkeyJSON

/// An HTTP request as a handler sees it: head parsed, body read in full (within the limits).
package struct HTTPRequest: Sendable {
    /// The request method.
    package var method: HTTPMethod
    /// The percent-decoded path, without the query.
    package var path: String
    /// The query parameters, form-decoded (`+` is a space). The server refuses a request that
    /// repeats a name, so each name has one value.
    package var query: [String: String]
    /// The header fields, in the order they arrived.
    package var headers: HTTPHeaders
    /// The body bytes; empty when there was none.
    package var body: [UInt8]
    /// The client's IP address, without the port: the peer's, or the one a trusted proxy names
    /// in `X-Forwarded-For` (LatchkeyHTTPServer's `TrustedProxies`). IPv4-mapped IPv6 addresses
    /// are shown as IPv4.
    package var remoteAddress: String
    /// The values the router took from the path's `{name}` segments.
    package var pathParameters: [String: String]
    /// The request's identifier, sent back as `X-Request-Id` and written to the access log: the
    /// incoming `X-Request-Id` when it is a safe short token, else 128 random bits in hex.
    package var requestID: String

    /// The path as it arrived, still percent-encoded, so the router can split it on `/` before
    /// decoding and an encoded `%2F` stays inside one parameter. `nil` for a request built in code.
    package var encodedPath: Substring?

    /// Creates a request, for tests and for responders that call each other.
    package init(
        method: HTTPMethod, path: String, query: [String: String] = [:], headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], remoteAddress: String = "127.0.0.1", pathParameters: [String: String] = [:],
        requestID: String = "test"
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.pathParameters = pathParameters
        self.requestID = requestID
        self.encodedPath = nil
    }

    /// The body parsed as strict JSON (see `JSONValue.init(parsing:maxDepth:)`).
    ///
    /// - Throws: ``HTTPError/unsupportedMediaType(_:)`` (415) unless the content type is
    ///   `application/json` (parameters such as `charset=utf-8` allowed) and the body has no
    ///   content coding, and ``HTTPError/invalidRequest(_:)`` (400) when the body is not a single
    ///   valid JSON value.
    package func jsonBody() throws -> JSONValue {
        try requireMediaType(["application/json"])
        do {
            return try JSONValue(parsing: body)
        } catch let error as JSONError {
            throw HTTPError.invalidRequest("the body is not valid JSON (\(error.code) at byte \(error.offset))")
        }
    }

    /// The body parsed as `application/x-www-form-urlencoded`, as OAuth clients send it
    /// (RFC 6749 §4.1.3, RFC 7009 §2.1).
    ///
    /// - Throws: ``HTTPError/unsupportedMediaType(_:)`` (415) for another content type or a
    ///   content coding, and ``HTTPError/invalidRequest(_:)`` (400) for a broken escape, text that
    ///   is not UTF-8, or a parameter given twice (RFC 6749 §3.1).
    package func formBody() throws -> [String: String] {
        try requireMediaType(["application/x-www-form-urlencoded"])
        guard let form = body.withUnsafeBytes({ PercentEncoding.parseForm($0) }) else {
            throw HTTPError.invalidRequest("the form body is malformed or repeats a parameter")
        }
        return form
    }

    /// Checks that the body is one of `accepted` media types, as sent: without a content coding.
    ///
    /// A compressed body would otherwise be read as if it were plain and refused for the wrong
    /// reason (RFC 9110 §8.4.1 lets a server answer 415 for a coding it does not accept).
    ///
    /// - Throws: ``HTTPError/unsupportedMediaType(_:)`` (415) naming what to send instead.
    package func requireMediaType(_ accepted: [String]) throws(HTTPError) {
        if headers.values("Content-Encoding").contains(where: { !$0.isEmpty && $0.lowercased() != "identity" }) {
            throw HTTPError.unsupportedMediaType("Content-Encoding is not supported: send the body uncompressed")
        }
        guard accepted.contains(where: mediaType(is:)) else {
            throw HTTPError.unsupportedMediaType("send the body as " + accepted.joined(separator: " or "))
        }
    }

    /// Whether `Content-Type` names `mediaType` (case-insensitive), ignoring parameters.
    package func mediaType(is mediaType: String) -> Bool {
        guard let contentType = headers["Content-Type"] else { return false }
        let essence = contentType.prefix { $0 != ";" }.trimmingASCIIWhitespace()
        return essence.lowercased() == mediaType.lowercased()
    }
}

extension Substring {
    package func trimmingASCIIWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
