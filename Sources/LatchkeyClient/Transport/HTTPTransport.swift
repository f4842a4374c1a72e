public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Sends one HTTP request and returns the answer, whatever its status.
///
/// Throw only when no answer came (no connection, a timeout, cancellation): the client treats
/// any thrown error as ``LatchkeyError/Code/network`` (or ``LatchkeyError/Code/canceled``) and keeps
/// the session.
public protocol HTTPTransport: Sendable {
    /// Sends `request`.
    ///
    /// - Returns: The body and the response, for every status.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The transport on `URLSession`.
public struct URLSessionTransport: HTTPTransport {
    /// The session requests go through.
    public let session: URLSession

    /// A transport on `session` (by default an ephemeral session: no cookies, no cache, since
    /// every answer here carries tokens).
    public init(session: URLSession = URLSession(configuration: .ephemeral)) {
        self.session = session
    }

    /// Sends `request` with `URLSession.data(for:)`.
    ///
    /// - Throws: what `URLSession` throws when no answer came; ``LatchkeyError/Code/invalidResponse``
    ///   for an answer that is not HTTP.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw LatchkeyError(.invalidResponse, "the answer was not HTTP")
        }
        return (data, http)
    }
}
