package import LatchkeyJSON

/// An error that maps to the JSON error body of docs/reference.md:
/// `{"error": code, "error_description": text, ...extra}`.
///
/// Throw one from a handler or middleware; the server turns it into the response. Anything else
/// thrown becomes a 500 that carries only the request id (docs/security.md S24, S26).
package protocol HTTPResponseError: Error {
    /// The status code, 400–599.
    var status: Int { get }
    /// The wire code (`invalid_request`, `not_found`, ...).
    var errorCode: String { get }
    /// A sentence for a developer. Goes to the client as is: it must hold no secret.
    var errorDescription: String { get }
    /// More members of the error object (`reason`, `retry_after`, ...). Default: none.
    var extraFields: [String: JSONValue] { get }
    /// Header fields to add (`Retry-After`, `WWW-Authenticate`, `Allow`). Default: none.
    var extraHeaders: HTTPHeaders { get }
}

extension HTTPResponseError {
    package var extraFields: [String: JSONValue] { [:] }
    package var extraHeaders: HTTPHeaders { HTTPHeaders() }

    /// The response this error stands for: its JSON body, status and extra headers.
    package var response: HTTPResponse {
        var members = extraFields
        members["error"] = .string(errorCode)
        members["error_description"] = .string(errorDescription)
        var response = HTTPResponse.json(.object(members), status: status)
        response.headers.add(contentsOf: extraHeaders)
        return response
    }
}

/// A ready-made ``HTTPResponseError``.
///
/// Compares by status and code only, so a test can write
/// `#expect(throws: HTTPError.notFound())`.
package struct HTTPError: HTTPResponseError, Sendable, Equatable, CustomStringConvertible {
    /// The status code.
    package var status: Int
    /// The wire code.
    package var errorCode: String
    /// A sentence for a developer, free of secrets.
    package var errorDescription: String
    /// More members of the JSON body.
    package var extraFields: [String: JSONValue]
    /// Header fields for the response.
    package var extraHeaders: HTTPHeaders

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - code: The wire code.
    ///   - description: A sentence for a developer, free of secrets.
    ///   - extraFields: More members of the JSON body.
    ///   - headers: Header fields for the response.
    package init(
        status: Int, code: String, description: String, extraFields: [String: JSONValue] = [:],
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.status = status
        self.errorCode = code
        self.errorDescription = description
        self.extraFields = extraFields
        self.extraHeaders = headers
    }

    package var description: String { "\(status) \(errorCode): \(errorDescription)" }

    package static func == (lhs: HTTPError, rhs: HTTPError) -> Bool {
        lhs.status == rhs.status && lhs.errorCode == rhs.errorCode
    }

    /// 400 `invalid_request`: malformed JSON, a missing or wrong-typed field, bad base64.
    package static func invalidRequest(_ description: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", description: description)
    }

    /// 404 `not_found`.
    package static func notFound(_ description: String = "no such resource") -> HTTPError {
        HTTPError(status: 404, code: "not_found", description: description)
    }

    /// 405 `method_not_allowed` with the `Allow` field RFC 9110 §15.5.6 requires.
    package static func methodNotAllowed(allowed: [HTTPMethod]) -> HTTPError {
        HTTPError(
            status: 405, code: "method_not_allowed", description: "this resource does not support the method",
            headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
    }

    /// 413 `payload_too_large`: the body is over the limit.
    package static func payloadTooLarge(limit: Int? = nil) -> HTTPError {
        HTTPError(
            status: 413, code: "payload_too_large",
            description: limit.map { "the body is larger than \($0) bytes" } ?? "the body is too large")
    }

    /// 415 `unsupported_media_type`.
    package static func unsupportedMediaType(_ description: String = "unsupported Content-Type") -> HTTPError {
        HTTPError(status: 415, code: "unsupported_media_type", description: description)
    }

    /// 429 `rate_limited` with `Retry-After` and the `retry_after` field of docs/reference.md.
    package static func rateLimited(retryAfter seconds: Int) -> HTTPError {
        HTTPError(
            status: 429, code: "rate_limited", description: "too many attempts; try again later",
            extraFields: ["retry_after": .number(Double(seconds))], headers: ["Retry-After": String(seconds)])
    }

    /// 503 `overloaded` with `Retry-After`: a bounded queue is full (docs/security.md S15).
    package static func overloaded(retryAfter seconds: Int) -> HTTPError {
        HTTPError(
            status: 503, code: "overloaded", description: "the server is busy; try again later",
            headers: ["Retry-After": String(seconds)])
    }

    /// 500 `server_error`: the body every unexpected failure gets, with nothing but the request id.
    package static func serverError(requestID: String) -> HTTPError {
        HTTPError(
            status: 500, code: "server_error", description: "internal error",
            extraFields: ["request_id": .string(requestID)])
    }
}
