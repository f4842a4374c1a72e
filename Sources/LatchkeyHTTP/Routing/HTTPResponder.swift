/// Something that answers requests: a ``Router``, or a test double.
package protocol HTTPResponder: Sendable {
    /// Answers one request.
    ///
    /// - Throws: An ``HTTPResponseError`` for an answer other than success; anything else
    ///   becomes a 500 without internals.
    func respond(to request: HTTPRequest) async throws -> HTTPResponse
}

/// Code that runs around every route of a ``Router``: authentication, metrics, headers.
package protocol HTTPMiddleware: Sendable {
    /// Answers `request`, usually by calling `next` and adjusting its response.
    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse
}

/// A middleware that can also run without suspending, so that synchronous routes stay on the
/// event-loop thread.
///
/// A ``Router`` runs a synchronous route on the loop only when every middleware it has conforms
/// to this protocol; otherwise the route runs in a task like an asynchronous one. Implement both
/// methods the same way. Nothing here may block or take more than a few microseconds.
package protocol HTTPSynchronousMiddleware: HTTPMiddleware {
    /// Answers `request` without suspending, usually by calling `next`.
    func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse
}
