/// What a router knows of a request when it makes the request's context.
package struct HTTPRequestContextSource: Sendable {
    /// The request's identifier (``HTTPRequest/requestID``).
    package let requestID: String
    /// The client's address (``HTTPRequest/remoteAddress``).
    package let remoteAddress: String
    /// The request's `User-Agent`, if any.
    package let userAgent: String?

    /// Creates a source; the router makes one per request, tests may make their own.
    package init(requestID: String, remoteAddress: String, userAgent: String? = nil) {
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.userAgent = userAgent
    }

    init(_ request: HTTPRequest) {
        self.init(requestID: request.requestID, remoteAddress: request.remoteAddress, userAgent: request.headers["User-Agent"])
    }
}

/// State that travels with one request from a route group's middleware to the handler: the
/// request id, and whatever a middleware found out (the authenticated user, say), typed.
///
/// A ``RouterGroup`` makes a fresh context for every request to one of its routes, inside the
/// router-wide middleware, and hands it through the group's ``RouterMiddleware`` (which may
/// change its copy before calling `next`) to the handler: `group.get("/me") { request, context in … }`.
/// Modelled on hummingbird 2's `RequestContext`. A context is a value: a middleware's change is
/// seen by what it calls, never by what called it.
package protocol HTTPRequestContext: Sendable {
    /// The context of a request that no middleware has seen yet.
    init(source: HTTPRequestContextSource)

    /// The request's identifier, as in `X-Request-Id` and the access log.
    var requestID: String { get }
}

/// A context with nothing but what the router knows: for groups whose middleware sets nothing.
package struct BasicRequestContext: HTTPRequestContext {
    package let requestID: String
    /// The client's address (``HTTPRequest/remoteAddress``).
    package let remoteAddress: String

    package init(source: HTTPRequestContextSource) {
        self.requestID = source.requestID
        self.remoteAddress = source.remoteAddress
    }
}

/// Code that runs around the routes of one ``RouterGroup``, with the request's typed context:
/// authentication that stores who is calling, checks that need it.
///
/// It runs inside the router-wide ``HTTPMiddleware`` and only for the group's routes, never for
/// the router's 404 and 405 answers. Throw an ``HTTPResponseError`` to refuse the request;
/// call `next` with the (possibly changed) request and context to go on.
package protocol RouterMiddleware<Context>: Sendable {
    /// The context type of the groups this middleware can guard.
    associatedtype Context: HTTPRequestContext

    /// Answers `request`, usually by calling `next`.
    func handle(
        _ request: HTTPRequest, context: Context, next: (HTTPRequest, Context) async throws -> HTTPResponse
    ) async throws -> HTTPResponse
}

/// A ``RouterMiddleware`` that can also run without suspending, so that a synchronous route of
/// its group stays on the event-loop thread.
///
/// A synchronous group route runs on the loop only when every middleware of its group conforms
/// to this protocol and every router-wide middleware to ``HTTPSynchronousMiddleware``. Implement
/// both methods the same way; nothing here may block or take more than a few microseconds.
package protocol SynchronousRouterMiddleware<Context>: RouterMiddleware {
    /// Answers `request` without suspending, usually by calling `next`.
    func handle(
        _ request: HTTPRequest, context: Context, next: (HTTPRequest, Context) throws -> HTTPResponse
    ) throws -> HTTPResponse
}
