import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``HTTPClient`` on `URLSession` (FoundationNetworking on Linux).
///
/// Made for talking to identity providers: redirects are not followed (the 3xx response is
/// returned), no cookies or cache are kept, the whole exchange must finish within the request's
/// `timeout` (not only each read), and a body over `maxResponseBytes` is refused, by its
/// `Content-Length` before it is read or as soon as the received bytes pass the cap.
///
/// The session is made on the first request, not in `init`: a server only talks to Apple now and
/// then, and creating a `URLSession` on Linux initialises libcurl and FoundationNetworking's
/// machinery, 0.8 MB of resident memory in `latchkey serve --dev` that never sent a request
/// (39.2 MB after start with the session made in `init`, 38.4 MB without).
public final class URLSessionHTTPClient: HTTPClient {
    private let configuration: URLSessionConfiguration
    private let delegate: Delegate
    /// `nil` until the first ``send(_:)``.
    private let session = Mutex<URLSession?>(nil)
    /// The largest response body accepted.
    public let maxResponseBytes: Int

    /// Creates a client with its own session.
    ///
    /// - Parameter maxResponseBytes: The largest response body accepted; default 1 MiB.
    public init(maxResponseBytes: Int = 1 << 20) {
        self.maxResponseBytes = maxResponseBytes
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        self.configuration = configuration
        delegate = Delegate(maxResponseBytes: maxResponseBytes)
    }

    deinit {
        session.withLock { $0?.invalidateAndCancel() }
    }

    /// The session, made on first use.
    private var sharedSession: URLSession {
        session.withLock { session in
            if let session { return session }
            let made = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            session = made
            return made
        }
    }

    public func send(_ request: OutboundRequest) async throws -> OutboundResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        let seconds = Double(request.timeout.components.seconds) + Double(request.timeout.components.attoseconds) / 1e18
        // URLSession's own timeout is per read and in whole seconds; it is only a backstop for the
        // deadline below.
        urlRequest.timeoutInterval = max(1, seconds.rounded(.up))
        let task = sharedSession.dataTask(with: urlRequest)
        let host = request.url.host ?? "the server"
        let delegate = delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<OutboundResponse, any Error>) in
                delegate.register(task, host: host, continuation: continuation)
                task.resume()
                Task {
                    try? await Task.sleep(for: request.timeout)
                    if delegate.markTimedOut(task) { task.cancel() }
                }
            }
        } onCancel: {
            task.cancel()
        }
    }

    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked: NSObject is not Sendable on Linux; every mutable field is in the Mutex.
        private struct Exchange {
            var continuation: CheckedContinuation<OutboundResponse, any Error>
            var host: String
            var response: HTTPURLResponse?
            var body: [UInt8] = []
            var timedOut = false
            var tooLarge = false
        }

        private let exchanges = Mutex<[Int: Exchange]>([:])
        private let maxResponseBytes: Int

        init(maxResponseBytes: Int) {
            self.maxResponseBytes = maxResponseBytes
        }

        func register(
            _ task: URLSessionTask, host: String, continuation: CheckedContinuation<OutboundResponse, any Error>
        ) {
            exchanges.withLock { $0[task.taskIdentifier] = Exchange(continuation: continuation, host: host) }
        }

        /// `true` when the exchange was still running and is now marked as timed out.
        func markTimedOut(_ task: URLSessionTask) -> Bool {
            exchanges.withLock { exchanges in
                guard exchanges[task.taskIdentifier] != nil else { return false }
                exchanges[task.taskIdentifier]!.timedOut = true
                return true
            }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            let tooLarge = response.expectedContentLength > Int64(maxResponseBytes)
            exchanges.withLock { exchanges in
                exchanges[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
                if tooLarge { exchanges[dataTask.taskIdentifier]?.tooLarge = true }
            }
            completionHandler(tooLarge ? .cancel : .allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let overCap = exchanges.withLock { exchanges -> Bool in
                guard var exchange = exchanges[dataTask.taskIdentifier], !exchange.tooLarge else { return false }
                if exchange.body.count + data.count > maxResponseBytes {
                    exchange.tooLarge = true
                    exchange.body = []
                } else {
                    exchange.body.append(contentsOf: data)
                }
                exchanges[dataTask.taskIdentifier] = exchange
                return exchange.tooLarge
            }
            if overCap { dataTask.cancel() }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if exchange.tooLarge {
                exchange.continuation.resume(
                    throwing: HTTPClientError(
                        .responseTooLarge, "the response from \(exchange.host) is larger than \(maxResponseBytes) bytes"))
            } else if exchange.timedOut || (error as? URLError)?.code == .timedOut {
                exchange.continuation.resume(
                    throwing: HTTPClientError(.timedOut, "\(exchange.host) did not answer in time"))
            } else if let error {
                let cancelled = (error as? URLError)?.code == .cancelled
                exchange.continuation.resume(
                    throwing: HTTPClientError(
                        cancelled ? .cancelled : .transport,
                        cancelled ? "the request to \(exchange.host) was cancelled" : "the request to \(exchange.host) failed: \(error.localizedDescription)"))
            } else if let response = exchange.response {
                var headers = HTTPHeaders()
                for (name, value) in response.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers.add(name, value) }
                }
                exchange.continuation.resume(
                    returning: OutboundResponse(status: response.statusCode, headers: headers, body: exchange.body))
            } else {
                exchange.continuation.resume(
                    throwing: HTTPClientError(.transport, "\(exchange.host) sent no HTTP response"))
            }
        }
    }
}
