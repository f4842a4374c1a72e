package import FoundationEssentials
import LatchkeyErrors
package import LatchkeyHTTP

/// Sends HTTP requests to other servers (Apple's token and key endpoints).
package protocol HTTPClient: Sendable {
    /// Sends `request` and returns the whole response, whatever its status.
    ///
    /// - Throws: ``HTTPClientError`` when there is no response within the limits.
    func send(_ request: OutboundRequest) async throws -> OutboundResponse
}

/// An outbound request.
package struct OutboundRequest: Sendable {
    /// The absolute URL.
    package var url: URL
    /// The method.
    package var method: HTTPMethod
    /// The header fields.
    package var headers: HTTPHeaders
    /// The body; empty for none.
    package var body: [UInt8]
    /// The whole exchange, connect to last byte, must fit in this.
    package var timeout: Duration

    /// Creates a request.
    package init(
        url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        timeout: Duration = .seconds(10)
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

extension OutboundRequest {
    /// A POST of `application/x-www-form-urlencoded` fields, as OAuth token endpoints take them.
    package static func form(_ url: URL, _ fields: [String: String], timeout: Duration = .seconds(10)) -> OutboundRequest {
        OutboundRequest(
            url: url, method: .post,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: Array(PercentEncoding.encodeForm(fields).utf8), timeout: timeout)
    }
}

/// The response to an ``OutboundRequest``.
package struct OutboundResponse: Sendable {
    /// The status code.
    package var status: Int
    /// The header fields.
    package var headers: HTTPHeaders
    /// The body.
    package var body: [UInt8]

    /// Creates a response, for test doubles.
    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why an outbound request got no usable response.
package struct HTTPClientError: CodedError {
    /// The kind of failure; errors compare by code.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// No complete response within the request's timeout.
        package static let timedOut = Code(rawValue: "timed_out")
        /// The response body is larger than the client's cap.
        package static let responseTooLarge = Code(rawValue: "response_too_large")
        /// Connecting, TLS or the exchange failed.
        package static let transport = Code(rawValue: "transport")
        /// The task calling `send` was cancelled.
        package static let cancelled = Code(rawValue: "cancelled")
        /// The request cannot be sent as given: a URL that is not an absolute http or https URL,
        /// a method or a header field that cannot go on the wire. Nothing was sent.
        package static let invalidRequest = Code(rawValue: "invalid_request")
    }

    /// The kind of failure.
    package var code: Code
    /// A sentence for a developer; names the host, never a body or a header value.
    package var message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    package var description: String { "\(code): \(message)" }
}
