/// Turns whatever a responder throws into a response (docs/security.md S24, S26).
///
/// An ``HTTPResponseError`` becomes its JSON body, status and headers; any other error becomes
/// 500 `{"error":"server_error","error_description":"internal error","request_id":...}` with
/// nothing of the error itself. LatchkeyHTTPServer's `HTTPServer` always applies it outermost, so
/// adding it to a ``Router`` is only needed when a responder is used outside a server.
package struct ErrorMiddleware: HTTPSynchronousMiddleware {
    /// Called with each error that is not an ``HTTPResponseError``, for an error log. The error
    /// may describe internals; it never reaches the client.
    package let onUnexpectedError: (@Sendable (any Error, HTTPRequest) -> Void)?

    /// Creates the middleware.
    package init(onUnexpectedError: (@Sendable (any Error, HTTPRequest) -> Void)? = nil) {
        self.onUnexpectedError = onUnexpectedError
    }

    package func respond(to request: HTTPRequest, next: any HTTPResponder) async -> HTTPResponse {
        do {
            return try await next.respond(to: request)
        } catch {
            return response(for: error, request: request)
        }
    }

    package func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) -> HTTPResponse {
        do {
            return try next(request)
        } catch {
            return response(for: error, request: request)
        }
    }

    /// The response for `error`.
    package func response(for error: any Error, request: HTTPRequest) -> HTTPResponse {
        if let error = error as? any HTTPResponseError { return error.response }
        onUnexpectedError?(error, request)
        return HTTPError.serverError(requestID: request.requestID).response
    }
}
