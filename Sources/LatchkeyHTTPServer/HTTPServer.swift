internal import CLatchkeyEvent
import Glibc
package import LatchkeyHTTP
import LatchkeyLibevent
import Synchronization

/// An HTTP/1.1 server on libevent: one event loop per core, each on its own thread.
///
/// A request is read and parsed on a loop thread. A synchronous route (see
/// ``Router/on(_:_:synchronous:)``) is answered right there, with no task and no thread hop; any
/// other route runs in a Swift task, and its response is handed back to the same loop through a
/// mailbox (a locked queue plus a libevent event, woken with `event_active`), because libevent
/// objects are only ever touched on their loop's thread. Nothing that can block runs on a loop.
///
/// Limits (docs/security.md S25), all in ``Limits``: the request head is cut at `maxHeaderBytes`
/// (431), a body announced larger than `maxBodyBytes` is refused with 413 before it is read (a
/// chunked body, before the chunk that would pass it is read), the head must arrive within
/// `headerTimeout` of its first byte and the body, chunked or not, within `bodyTimeout`,
/// a keep-alive connection closes after `idleTimeout` without a request, connections over
/// `maxConnections` get 503 and are closed, and the `maxRequestsPerConnection`th response
/// carries `Connection: close`.
///
/// Call ``start()``, then ``shutdown()`` before the last reference goes.
package final class HTTPServer: Sendable {
    private enum State {
        case idle
        case running(listenFD: Int32, port: Int, loops: [LoopHandle])
        case stopping(port: Int)
        case stopped(port: Int)
    }

    /// The configuration the server was created with.
    package let configuration: Configuration
    private let context: ServerContext
    private let state = Mutex(State.idle)

    /// Creates a server; nothing is bound until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: Address, loops, limits.
    ///   - responder: Usually a ``Router``, which lets synchronous routes stay on the loop.
    ///   - accessLog: Receives one entry per response.
    ///   - onUnexpectedError: Sees each error that became a 500 (for an error log), with the
    ///     request and the pattern of the route that threw (`nil` when the responder is not a
    ///     ``Router``).
    package init(
        configuration: Configuration, responder: any HTTPResponder, accessLog: (any AccessLogSink)? = nil,
        onUnexpectedError: (@Sendable (_ error: any Error, _ request: HTTPRequest, _ route: String?) -> Void)? = nil
    ) {
        precondition(configuration.eventLoops >= 1, "HTTPServer: at least one event loop")
        self.configuration = configuration
        // Resolving the request again finds the route that threw: the table is frozen by then.
        let router = responder as? Router
        let report = onUnexpectedError.map { report in
            { @Sendable (error: any Error, request: HTTPRequest) in
                var resolved = request
                report(error, request, router?.table.resolve(&resolved).pattern)
            }
        }
        self.context = ServerContext(
            limits: configuration.limits, trustedProxies: configuration.trustedProxies, responder: responder, accessLog: accessLog,
            errors: ErrorMiddleware(onUnexpectedError: report))
    }

    deinit {
        let state = state.withLock { $0 }
        switch state {
        case .idle, .stopped: break
        case .running, .stopping: assertionFailure("HTTPServer released without shutdown()")
        }
    }

    /// Binds the address and starts the loops.
    ///
    /// - Throws: ``HTTPServerError`` with code `addressInUse` when something already listens
    ///   there, `invalidAddress` for a host that is not this machine's, and so on.
    package func start() throws {
        try state.withLock { state throws(HTTPServerError) in
            guard case .idle = state else { throw HTTPServerError(.alreadyStarted, "the server was already started") }
            Libevent.setUpThreads()
            // Freeze the routes now: every route must be added before the server starts.
            _ = context.router?.table
            let (fd, port) = try ListeningSocket.open(
                host: configuration.host, port: configuration.port, backlog: Int32(clamping: configuration.backlog))
            var handles: [LoopHandle] = []
            do throws(HTTPServerError) {
                for _ in 0..<configuration.eventLoops {
                    let loop = try EventLoop(context: context, listenFD: fd)
                    handles.append(try Self.spawn(loop))
                }
            } catch {
                Glibc.shutdown(fd, Int32(SHUT_RDWR))
                Self.stop(handles)
                Glibc.close(fd)
                throw error
            }
            state = .running(listenFD: fd, port: port, loops: handles)
        }
    }

    private static func spawn(_ loop: EventLoop) throws(HTTPServerError) -> LoopHandle {
        let handle = (mailbox: loop.mailbox, exited: loop.exited)
        var thread = pthread_t()
        let argument = Unmanaged.passRetained(loop).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { argument in
                let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
                loop.run()
                return nil
            }, argument)
        guard status == 0 else {
            Unmanaged<EventLoop>.fromOpaque(argument).release()
            throw HTTPServerError(.eventLoopFailed, "cannot start a loop thread: \(String(cString: strerror(status)))")
        }
        return LoopHandle(mailbox: handle.mailbox, thread: thread, exited: handle.exited)
    }

    /// Stops loops and joins their threads; for a failed start.
    private static func stop(_ handles: [LoopHandle]) {
        for handle in handles { handle.mailbox.post(.stop) }
        for handle in handles { pthread_join(handle.thread, nil) }
    }

    /// The port the server listens on: the configured one, or the one the system chose for 0.
    /// 0 before ``start()``.
    package var boundPort: Int {
        state.withLock { state in
            switch state {
            case .idle: 0
            case .running(_, let port, _), .stopping(let port), .stopped(let port): port
            }
        }
    }

    /// Answers one request with everything a connection applies to it but the socket: the same
    /// head parser and size limits, the client address by the same trusted-proxy rule, the route,
    /// its middleware and the error mapping, and the `X-Request-Id` answer header. Left out is
    /// what only the wire adds (`Date`, `Content-Length`, `Connection`, a HEAD answer without its
    /// body) and the access log. For tests whose subject is not the wire; works whether or not
    /// the server was started.
    ///
    /// - Parameters:
    ///   - head: The request line and header fields, ending with the empty line.
    ///   - body: The whole body (a test sends no chunked framing).
    ///   - peer: The address the connection would come from.
    package func respond(head: [UInt8], body: [UInt8], peer: String = "127.0.0.1") async -> HTTPResponse {
        let limits = configuration.limits
        guard head.count <= limits.maxHeaderBytes else {
            return HTTPError(status: 431, code: "invalid_request", description: "the request head is too large").response
        }
        let parsed: RequestHead
        do {
            parsed = try head.withUnsafeBytes { try RequestHead.parse($0) }
        } catch let error as HTTPError {
            return error.response
        } catch {
            preconditionFailure("RequestHead.parse throws only HTTPError")
        }
        guard body.count <= limits.maxBodyBytes else { return HTTPError.payloadTooLarge(limit: limits.maxBodyBytes).response }
        var ids = RequestIDGenerator()
        var request = context.request(parsed, body: body, peer: peer) { ids.makeID() }
        var response: HTTPResponse
        if let router = context.router {
            let route = router.table.resolve(&request)
            response = await context.errors.respond(to: request, next: route)
        } else {
            response = await context.errors.respond(to: request, next: context.responder)
        }
        response.headers.add("X-Request-Id", request.requestID)
        return response
    }

    /// Open connections over all loops, for `/metrics`.
    package var activeConnections: Int { context.activeConnections.load(ordering: .relaxed) }

    /// Stops the server gracefully.
    ///
    /// New connections are refused at once; idle keep-alive connections are closed; requests in
    /// progress (synchronous and asynchronous) finish and their responses are written, with
    /// `Connection: close`, until ``Configuration-swift.struct/shutdownDeadline``. Then every
    /// connection is closed, the loops stop and their threads are joined. A reply that an
    /// asynchronous handler produces after that is dropped. Last, the access log is flushed, so
    /// it holds a line for every response. Calling it again does nothing.
    package func shutdown() async {
        let running: (Int32, [LoopHandle])? = state.withLock { state in
            switch state {
            case .idle:
                state = .stopped(port: 0)
                return nil
            case .running(let fd, let port, let loops):
                state = .stopping(port: port)
                return (fd, loops)
            case .stopping, .stopped:
                return nil
            }
        }
        guard let (fd, loops) = running else {
            while case .stopping = state.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            return
        }
        let deadline = ContinuousClock.now + configuration.shutdownDeadline
        // Refuse new connections now: on Linux, shutdown(2) on a listening socket resets its
        // queue and makes connect() fail, and wakes every loop's accept event, which then drops it.
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        for loop in loops { loop.mailbox.post(.drain) }
        // The socket may be closed only once no loop has an event on it any more; loops never
        // block, so this takes microseconds.
        while context.acceptingLoops.load(ordering: .acquiring) > 0 { try? await Task.sleep(for: .milliseconds(1)) }
        Glibc.close(fd)
        while context.activeConnections.load(ordering: .relaxed) > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        for loop in loops { loop.mailbox.post(.stop) }
        while !loops.allSatisfy({ $0.exited.value.load(ordering: .acquiring) }) {
            try? await Task.sleep(for: .milliseconds(1))
        }
        for loop in loops { pthread_join(loop.thread, nil) }
        // Entries are recorded on the loop threads only, so after the joins none can follow.
        context.accessLog?.flush()
        state.withLock { state in
            if case .stopping(let port) = state { state = .stopped(port: port) }
        }
    }
}
