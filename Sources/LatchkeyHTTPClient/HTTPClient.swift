public import FoundationEssentials
import LatchkeyHTTP

/// Sends HTTP requests to other servers (Apple's token and key endpoints).
public protocol HTTPClient: Sendable {
    /// Sends `request` and returns the whole response, whatever its status.
    ///
    /// - Throws: ``HTTPClientError`` when there is no response within the limits.
    func send(_ request: OutboundRequest) async throws -> OutboundResponse
}

/// An outbound request.
public struct OutboundRequest: Sendable {
    /// The absolute URL.
    public var url: URL
    /// The method.
    public var method: HTTPMethod
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body; empty for none.
    public var body: [UInt8]
    /// The whole exchange, connect to last byte, must fit in this.
    public var timeout: Duration

    /// Creates a request.
    public init(
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
    public static func form(_ url: URL, _ fields: [String: String], timeout: Duration = .seconds(10)) -> OutboundRequest {
        OutboundRequest(
            url: url, method: .post,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: Array(PercentEncoding.encodeForm(fields).utf8), timeout: timeout)
    }
}

/// The response to an ``OutboundRequest``.
public struct OutboundResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body.
    public var body: [UInt8]

    /// Creates a response, for test doubles.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why an outbound request got no usable response.
public struct HTTPClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; errors compare by code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// No complete response within the request's timeout.
        public static let timedOut = Code("timed_out")
        /// The response body is larger than the client's cap.
        public static let responseTooLarge = Code("response_too_large")
        /// Connecting, TLS or the exchange failed.
        public static let transport = Code("transport")
        /// The task calling `send` was cancelled.
        public static let cancelled = Code("cancelled")
        /// The request cannot be sent as given: a URL that is not an absolute http or https URL,
        /// a method or a header field that cannot go on the wire. Nothing was sent.
        public static let invalidRequest = Code("invalid_request")
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence for a developer; names the host, never a body or a header value.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: HTTPClientError, rhs: HTTPClientError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
