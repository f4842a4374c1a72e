internal import CLatchkeyEvent
import FoundationEssentials
import Glibc
import LatchkeyBasics
import LatchkeyHTTP
import LatchkeyLibevent
import Synchronization

/// An ``HTTPClient`` on libevent: evhttp for HTTP/1.1, bufferevent_openssl for TLS, evdns for
/// names, all on one event-loop thread that the client owns.
///
/// Made for talking to identity providers: redirects are not followed (the 3xx response is
/// returned), no cookies or cache are kept, the whole exchange (name lookup, connect, TLS, request,
/// last byte of the response) must finish within the request's `timeout`, and a body over
/// ``Configuration-swift.struct/maxResponseBytes`` is refused, by its `Content-Length` before it
/// is read or as soon as the received bytes pass the cap. TLS is always verified; see
/// ``TLSContext``.
///
/// ## Threading
///
/// Every libevent and OpenSSL object of the client lives on its loop thread: a pthread with its
/// own `event_base` and `evdns_base`, started by the first ``send(_:)`` (a server that never calls
/// out pays for no thread) and stopped when the client is released. ``send(_:)`` runs on the
/// caller's task: it checks the request, then posts it with its continuation to the loop's
/// mailbox (a locked queue plus an event woken with `event_active`, as the server's loops do) and
/// suspends; no caller thread ever waits on the loop. Task cancellation posts a cancel message
/// the same way, and sets a flag the loop reads when a request arrives, so a cancellation that
/// overtakes its own request is not lost.
///
/// ## Ownership and exactly-once completion
///
/// On the loop, each request is an `Exchange` (continuation, deadline timer, connection, the
/// `evhttp_request` while libevent owns it). Completion, the deadline, cancellation and errors
/// all end in one `finish`, which resumes the continuation only if the exchange has not finished
/// yet, and then cancels whatever is still in flight: the continuation is resumed exactly once
/// whichever callback comes first, and the later ones find a finished exchange. While libevent
/// holds an `evhttp_request`, it holds a retain of its `Exchange` through the callback argument;
/// the retain ends in the completion callback, or right after `evhttp_cancel_request` (which frees
/// the request and calls no completion callback). Each `evhttp_connection` is wrapped by a
/// `PooledConnection` that its close callback retains; connections are freed on a separate
/// event (never inside one of their own callbacks), and freeing one frees its bufferevent, socket
/// and `SSL`.
///
/// ## Connections
///
/// Requests run concurrently, each on a connection of its own: an idle keep-alive connection to
/// the same origin (scheme, host, port) if there is one, a new one otherwise. After a complete
/// response the connection goes back to its origin's idle pool, unless the server asked to close
/// it or ``Configuration-swift.struct/maxIdleConnectionsPerOrigin`` are already idle; an idle
/// connection is closed after ``Configuration-swift.struct/idleTimeout``, or as soon as the server
/// closes it. Before an idle connection is reused it is checked for a close that the loop has not
/// seen yet. Should a reused connection still turn out closed (the server closed it as the request
/// went out), the request is sent once more on a new connection if its method is idempotent (RFC
/// 9110 §9.2.2: GET, HEAD, PUT, DELETE, OPTIONS) and time remains; a POST is not, since the server
/// may have acted on it, and fails with `transport`.
///
/// ## Names and lifetime
///
/// Names resolve through evdns with the system's `resolv.conf` and hosts file, and the connection
/// goes to the first address found (evdns lists IPv4 before IPv6); IP literals need no lookup.
/// There is no `shutdown()`, unlike ``HTTPServer``: the client is shared as `any HTTPClient` by
/// services that have no single owner, so releasing it is the shutdown. `deinit` posts a stop and
/// returns; the loop thread, which holds no reference back to the client, closes the idle
/// connections, frees its libevent objects and ends by itself.
package final class EventHTTPClient: HTTPClient {
    /// Limits and trust for one client.
    package struct Configuration: Sendable {
        /// The largest response body accepted; default 1 MiB.
        package var maxResponseBytes: Int = 1 << 20
        /// The largest response head (status line and header fields) accepted; default 64 KiB.
        package var maxResponseHeadBytes: Int = 64 * 1024
        /// A PEM file of CA certificates trusted in addition to the system's (a test CA, a
        /// corporate proxy's); `nil` for the system's alone.
        package var additionalCAFile: String?
        /// Idle keep-alive connections kept per origin.
        package var maxIdleConnectionsPerOrigin: Int = 8
        /// How long an idle keep-alive connection is kept.
        package var idleTimeout: Duration = .seconds(30)

        /// Creates a configuration with the defaults.
        package init() {}

        /// Creates a configuration.
        package init(maxResponseBytes: Int = 1 << 20, additionalCAFile: String? = nil) {
            self.maxResponseBytes = maxResponseBytes
            self.additionalCAFile = additionalCAFile
        }
    }

    private enum LoopState {
        case notStarted
        case running(Mailbox<ClientMessage>)
    }

    /// The configuration the client was created with.
    package let configuration: Configuration
    /// Made in init when there is a CA file to check; otherwise by the loop at its first https
    /// request.
    private let tls: TLSContext?
    private let loop = Mutex(LoopState.notStarted)
    private let nextExchangeID = Atomic<Int>(0)

    /// The largest response body accepted.
    package var maxResponseBytes: Int { configuration.maxResponseBytes }

    /// Creates a client that trusts the system's CA certificates.
    ///
    /// - Parameter maxResponseBytes: The largest response body accepted; default 1 MiB.
    package init(maxResponseBytes: Int = 1 << 20) {
        precondition(maxResponseBytes >= 0, "EventHTTPClient: maxResponseBytes must not be negative")
        configuration = Configuration(maxResponseBytes: maxResponseBytes)
        tls = nil
    }

    /// Creates a client.
    ///
    /// - Parameter configuration: Limits and trust.
    /// - Throws: ``HTTPClientError`` with code `transport` when the CA file cannot be read.
    package init(configuration: Configuration) throws(HTTPClientError) {
        precondition(configuration.maxResponseBytes >= 0, "EventHTTPClient: maxResponseBytes must not be negative")
        precondition(configuration.maxResponseHeadBytes > 0, "EventHTTPClient: maxResponseHeadBytes must be positive")
        precondition(
            configuration.maxIdleConnectionsPerOrigin >= 0, "EventHTTPClient: maxIdleConnectionsPerOrigin must not be negative")
        self.configuration = configuration
        do {
            tls = try configuration.additionalCAFile.map { file throws(TLSContext.SetupFailure) in try TLSContext(additionalCAFile: file) }
        } catch {
            throw HTTPClientError(.transport, error.description)
        }
    }

    deinit {
        // A send in progress holds the client, so no request is in flight here; the loop closes
        // its idle connections, frees everything and ends its thread. Nothing waits for it.
        if case .running(let mailbox) = loop.withLock({ $0 }) { mailbox.post(.stop) }
    }

    /// Sends `request` and returns the whole response, whatever its status.
    ///
    /// - Throws: ``HTTPClientError``: `invalidRequest` for a request that cannot be sent (nothing
    ///   was), `timedOut` when the exchange did not finish within the request's timeout,
    ///   `responseTooLarge` for a body over the cap, `transport` when the name did not resolve,
    ///   the connection or TLS failed or the server closed the connection early, `cancelled` when
    ///   the calling task was cancelled.
    package func send(_ request: OutboundRequest) async throws -> OutboundResponse {
        let prepared = try PreparedRequest(request)
        guard !Task.isCancelled else {
            throw HTTPClientError(.cancelled, "the request to \(prepared.origin.host) was cancelled")
        }
        let mailbox = try startedLoop()
        let ticket = ExchangeTicket(id: nextExchangeID.add(1, ordering: .relaxed).newValue)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<OutboundResponse, any Error>) in
                if !mailbox.post(.start(prepared, ticket, continuation)) {
                    continuation.resume(throwing: HTTPClientError(.transport, "the HTTP client has shut down"))
                }
            }
        } onCancel: {
            ticket.cancel()
            mailbox.post(.cancel(ticket.id))
        }
    }

    /// The loop's mailbox; the loop and its thread are made on first use.
    private func startedLoop() throws(HTTPClientError) -> Mailbox<ClientMessage> {
        try loop.withLock { state throws(HTTPClientError) in
            if case .running(let mailbox) = state { return mailbox }
            Libevent.setUpThreads()
            let clientLoop = try ClientLoop(configuration: configuration, tls: tls)
            let mailbox = clientLoop.mailbox
            try Self.spawn(clientLoop)
            state = .running(mailbox)
            return mailbox
        }
    }

    private static func spawn(_ loop: ClientLoop) throws(HTTPClientError) {
        // The loop is the thread's from here on; nothing else touches it.
        nonisolated(unsafe) let loop = loop
        do {
            try DetachedThread.start { loop.run() }
        } catch {
            loop.discard()
            throw HTTPClientError(.transport, "the HTTP client's \(error)")
        }
    }
}

/// An ``OutboundRequest`` checked and converted for the loop, on the caller's thread.
struct PreparedRequest: Sendable {
    /// Where a connection goes; connections are pooled per origin.
    struct Origin: Hashable, Sendable, CustomStringConvertible {
        var isTLS: Bool
        /// A name or an IP literal (IPv6 without brackets).
        var host: String
        var port: Int

        var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    var origin: Origin
    var command: evhttp_cmd_type
    var isIdempotent: Bool
    /// The request target: the URL's path and query, percent-encoded as they were.
    var target: String
    /// Every field to send, `Host` and `Content-Length` included.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Monotonic nanoseconds by which the whole exchange must be over: the request's timeout
    /// from the moment `send` was called.
    var deadline: UInt64

    init(_ request: OutboundRequest) throws(HTTPClientError) {
        let (seconds, attoseconds) = max(request.timeout, .zero).components
        deadline = Monotonic.nanoseconds() + UInt64(min(seconds, 1 << 32)) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        let url = request.url
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw HTTPClientError(.invalidRequest, "only http and https URLs can be requested, not \(scheme ?? "a relative URL")")
        }
        guard let host = url.host(percentEncoded: false), !host.isEmpty,
            host.utf8.allSatisfy({ Self.isHostByte($0) })
        else {
            throw HTTPClientError(.invalidRequest, "the URL has no usable host")
        }
        guard url.user == nil && url.password == nil else {
            throw HTTPClientError(.invalidRequest, "the URL for \(host) carries credentials, which are never sent")
        }
        let isTLS = scheme == "https"
        let defaultPort = isTLS ? 443 : 80
        let port = url.port ?? defaultPort
        guard (1...65535).contains(port) else { throw HTTPClientError(.invalidRequest, "the URL for \(host) has port \(port)") }
        origin = Origin(isTLS: isTLS, host: host.lowercased(), port: port)

        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        guard target.utf8.first == UInt8(ascii: "/"), target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPClientError(.invalidRequest, "the URL for \(host) has a path that cannot go on a request line")
        }
        self.target = target

        guard let command = Self.commands[request.method.rawValue] else {
            throw HTTPClientError(.invalidRequest, "the method \(request.method) is not supported")
        }
        self.command = command
        isIdempotent = Self.idempotent.contains(request.method.rawValue)

        var headers: [(name: String, value: String)] = []
        var hasHost = false
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(ASCII.isToken) else {
                throw HTTPClientError(.invalidRequest, "a header field name for \(host) is not a token")
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                // The value may be a secret: only the field's name is told.
                throw HTTPClientError(.invalidRequest, "the \(name) header field for \(host) holds a control character")
            }
            switch name.lowercased() {
            // The body is always sent whole with its length, so these are ours to write.
            case "content-length", "transfer-encoding": continue
            case "host": hasHost = true
            default: break
            }
            headers.append((name, value))
        }
        if !hasHost {
            let hostField = host.contains(":") ? "[\(origin.host)]" : origin.host
            headers.insert(("Host", port == defaultPort ? hostField : "\(hostField):\(port)"), at: 0)
        }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method.rawValue) {
            headers.append(("Content-Length", String(request.body.count)))
        }
        self.headers = headers
        body = request.body
    }

    private static let commands: [String: evhttp_cmd_type] = [
        "GET": EVHTTP_REQ_GET, "POST": EVHTTP_REQ_POST, "HEAD": EVHTTP_REQ_HEAD, "PUT": EVHTTP_REQ_PUT,
        "DELETE": EVHTTP_REQ_DELETE, "OPTIONS": EVHTTP_REQ_OPTIONS, "PATCH": EVHTTP_REQ_PATCH,
    ]

    /// RFC 9110 §9.2.2.
    private static let idempotent: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]

    /// Letters, digits and what host names and IP literals hold; never a byte that could end a
    /// header line or a name lookup.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"):
            true
        default: false
        }
    }
}
