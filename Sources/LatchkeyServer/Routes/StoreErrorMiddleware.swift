import LatchkeyHTTP
import LatchkeyStore

/// Answers the store's expected failures with docs/reference.md's statuses on every route: a busy database
/// (its queue full, or another process holding the lock past the timeout) is 503 `overloaded`
/// with `Retry-After`; storage that refuses reads or writes (a full disk, a read-only or moved
/// file, an I/O error) is 503 `unavailable` with `Retry-After`, because nothing was written and
/// the same request succeeds once the cause is gone, and so is a database server that cannot be
/// reached (`unavailable`); a uniqueness clash is 409 `conflict`. Any
/// other store error, a damaged database among them (waiting does not mend it), stays a 500
/// whose body carries only the request id. Routes that can say more about a clash (which
/// username, which device) map it themselves first.
///
/// It is synchronous, so routes that run on the event loop stay there.
struct StoreErrorMiddleware: HTTPSynchronousMiddleware {
    /// The `Retry-After` of a storage failure: long enough for an operator's fix or a cleanup
    /// job to free space, short enough that clients come back soon after.
    static let storageRetryAfter = 5

    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        do {
            return try await next.respond(to: request)
        } catch let error as StoreError {
            throw Self.translate(error)
        }
    }

    func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse {
        do {
            return try next(request)
        } catch let error as StoreError {
            throw Self.translate(error)
        }
    }

    static func translate(_ error: StoreError) -> any Error {
        switch error.code {
        case .busy: HTTPError.overloaded(retryAfter: 1)
        case .io, .unavailable:
            HTTPError(
                status: 503, code: "unavailable", description: "the database cannot be used now; try again later",
                headers: ["Retry-After": String(storageRetryAfter)])
        case .constraint: HTTPError(status: 409, code: "conflict", description: "this conflicts with what is already stored")
        default: error
        }
    }
}
