import LatchkeyHTTP
import LatchkeyStore

/// Answers the store's expected failures with API.md's statuses on every route: a busy database
/// (its queue full, or another process holding the lock past the timeout) is 503 `overloaded`
/// with `Retry-After`, and a uniqueness clash is 409 `conflict`. Any other store error stays a
/// 500 whose body carries only the request id. Routes that can say more about a clash (which
/// username, which device) map it themselves first.
///
/// It is synchronous, so routes that run on the event loop stay there.
struct StoreErrorMiddleware: HTTPSynchronousMiddleware {
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
        case .constraint: HTTPError(status: 409, code: "conflict", description: "this conflicts with what is already stored")
        default: error
        }
    }
}

/// Runs a store operation and answers a uniqueness clash with 409 `conflict` saying what clashed;
/// ``StoreErrorMiddleware`` answers the rest (a busy database is 503) on every route.
func mappingStoreErrors<T: Sendable>(conflict: String = "this already exists", _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as StoreError where error.code == .constraint {
        throw HTTPError(status: 409, code: "conflict", description: conflict)
    }
}
