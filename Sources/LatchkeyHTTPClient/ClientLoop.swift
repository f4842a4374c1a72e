internal import CLatchkeyEvent
import Glibc
import Synchronization
import LatchkeyHTTP
import LatchkeyLibevent

/// A message for an ``EventHTTPClient``'s loop from another thread.
enum ClientMessage: Sendable {
    /// Send a request and resume the continuation with its outcome.
    case start(PreparedRequest, ExchangeTicket, CheckedContinuation<OutboundResponse, any Error>)
    /// The task that sent the exchange with this id was cancelled.
    case cancel(Int)
    /// The client was released: close everything and end the thread.
    case stop
}

/// What the caller's task and the loop share of one exchange: its id, and whether the task was
/// cancelled (read by the loop when the request arrives, in case the cancel message overtook it).
final class ExchangeTicket: Sendable {
    let id: Int
    private let cancelled = Atomic<Bool>(false)

    init(id: Int) {
        self.id = id
    }

    func cancel() { cancelled.store(true, ordering: .releasing) }
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}

/// One request on the loop, from its message to its continuation's resumption.
final class Exchange {
    let ticket: ExchangeTicket
    let request: PreparedRequest
    private let continuation: CheckedContinuation<OutboundResponse, any Error>
    unowned let loop: ClientLoop
    /// Set once, by `ClientLoop.finish`; every later callback finds it and does nothing.
    var finished = false
    private var resumed = false
    var timer: OpaquePointer?
    /// The connection the request is on, until it completes or fails.
    var connection: PooledConnection?
    /// The `evhttp_request` while libevent owns it; libevent then holds a retain of this exchange.
    var inFlight: OpaquePointer?
    /// What evhttp's error callback reported, read when its completion callback follows.
    var failure: evhttp_request_error?
    /// Whether the request was already sent again after a reused connection turned out closed.
    var retried = false

    init(
        ticket: ExchangeTicket, request: PreparedRequest, continuation: CheckedContinuation<OutboundResponse, any Error>,
        loop: ClientLoop
    ) {
        self.ticket = ticket
        self.request = request
        self.continuation = continuation
        self.loop = loop
    }

    /// Monotonic nanoseconds by which the whole exchange must be over.
    var deadline: UInt64 { request.deadline }

    var host: String { request.origin.host }

    /// Resumes the continuation; the only place that does.
    func resume(_ result: Result<OutboundResponse, HTTPClientError>) {
        precondition(!resumed, "an exchange resumed twice")
        resumed = true
        finished = true
        continuation.resume(with: result.mapError { $0 })
    }
}

/// One `evhttp_connection` to an origin, confined to the loop thread.
final class PooledConnection {
    let origin: PreparedRequest.Origin
    let handle: OpaquePointer
    unowned let loop: ClientLoop
    /// Complete responses received on it; above 0, the connection is a reused one.
    var responses = 0
    /// A request is on it.
    var busy = false
    /// libevent reported it closed (its close callback ran): it is never used again.
    var closed = false
    /// Queued to be freed.
    var doomed = false

    init(origin: PreparedRequest.Origin, handle: OpaquePointer, loop: ClientLoop) {
        self.origin = origin
        self.handle = handle
        self.loop = loop
    }

    var bufferEvent: OpaquePointer { evhttp_connection_get_bufferevent(handle) }
}

/// The event loop of one ``EventHTTPClient``: an `event_base` and an `evdns_base` on a thread of
/// their own, with the exchanges in progress and the idle connections.
///
/// Everything here except `mailbox` is confined to the loop's thread; see ``EventHTTPClient`` for
/// the design.
final class ClientLoop {
    let base: OpaquePointer
    let mailbox: Mailbox<ClientMessage>
    private var dns: OpaquePointer?
    private var reapEvent: OpaquePointer?
    private let configuration: EventHTTPClient.Configuration
    private var tls: TLSContext?
    private var exchanges: [Int: Exchange] = [:]
    private var idle: [PreparedRequest.Origin: [PooledConnection]] = [:]
    /// Connections to free on the next run of `reapEvent`, outside their own callbacks.
    private var doomed: [PooledConnection] = []
    private var stopping = false

    init(configuration: EventHTTPClient.Configuration, tls: TLSContext?) throws(HTTPClientError) {
        guard let base = event_base_new() else { throw HTTPClientError(.transport, "event_base_new failed") }
        guard let wake = event_new(base, -1, 0, { _, _, _ in }, nil) else {
            event_base_free(base)
            throw HTTPClientError(.transport, "event_new failed")
        }
        self.base = base
        self.mailbox = Mailbox<ClientMessage>(event: wake)
        self.configuration = configuration
        self.tls = tls
        let me = Unmanaged.passUnretained(self).toOpaque()
        event_assign(wake, base, -1, 0, { _, _, argument in ClientLoop.from(argument).receiveMessages() }, me)
        reapEvent = event_new(base, -1, 0, { _, _, argument in ClientLoop.from(argument).reap() }, me)
        dns = Libevent.makeDNSBase(base)
        guard reapEvent != nil, dns != nil else {
            discard()
            throw HTTPClientError(.transport, "cannot set up the HTTP client's event loop")
        }
    }

    static func from(_ argument: UnsafeMutableRawPointer?) -> ClientLoop {
        Unmanaged<ClientLoop>.fromOpaque(argument!).takeUnretainedValue()
    }

    /// Runs the loop on the current thread until ``ClientMessage/stop``, then frees everything.
    func run() {
        event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        stopping = true
        for exchange in Array(exchanges.values) {
            finish(exchange, .failure(HTTPClientError(.transport, "the HTTP client shut down")))
        }
        for message in mailbox.close() {
            if case .start(_, _, let continuation) = message {
                continuation.resume(throwing: HTTPClientError(.transport, "the HTTP client shut down"))
            }
        }
        for connections in idle.values {
            for connection in connections { doom(connection) }
        }
        idle = [:]
        reap()
        discard()
    }

    /// Frees the loop's own libevent objects; for a loop that never ran, and at the end of `run`.
    func discard() {
        if let reapEvent { event_free(reapEvent) }
        reapEvent = nil
        event_free(mailbox.event)
        // Fails lookups still pending (their bufferevents then let go of their last reference).
        if let dns { evdns_base_free(dns, 1) }
        dns = nil
        event_base_free(base)
    }

    // MARK: Messages

    private func receiveMessages() {
        for message in mailbox.take() {
            switch message {
            case .start(let request, let ticket, let continuation):
                start(Exchange(ticket: ticket, request: request, continuation: continuation, loop: self))
            case .cancel(let id):
                if let exchange = exchanges[id] {
                    finish(exchange, .failure(HTTPClientError(.cancelled, "the request to \(exchange.host) was cancelled")))
                }
            case .stop:
                event_base_loopbreak(base)
            }
        }
    }

    private func start(_ exchange: Exchange) {
        if exchange.ticket.isCancelled {
            exchange.resume(.failure(HTTPClientError(.cancelled, "the request to \(exchange.host) was cancelled")))
            return
        }
        exchanges[exchange.ticket.id] = exchange
        let me = Unmanaged.passUnretained(exchange).toOpaque()
        // The timer's argument is unretained: `finish` frees the timer before the exchange goes.
        exchange.timer = event_new(
            base, -1, 0,
            { _, _, argument in
                let exchange = Unmanaged<Exchange>.fromOpaque(argument!).takeUnretainedValue()
                exchange.loop.finish(exchange, .failure(HTTPClientError(.timedOut, "\(exchange.host) did not answer in time")))
            }, me)
        guard let timer = exchange.timer else {
            finish(exchange, .failure(HTTPClientError(.transport, "event_new failed")))
            return
        }
        var delay = Self.interval(nanoseconds: exchange.deadline &- min(exchange.deadline, Monotonic.nanoseconds()))
        event_add(timer, &delay)
        send(exchange, reuse: true)
    }

    // MARK: Exchanges

    /// Puts the request on a connection: an idle one to its origin when `reuse` allows, else a
    /// new one.
    private func send(_ exchange: Exchange, reuse: Bool) {
        let connection: PooledConnection
        if reuse, let idle = takeIdleConnection(to: exchange.request.origin) {
            connection = idle
        } else {
            do throws(HTTPClientError) {
                connection = try openConnection(to: exchange.request.origin)
            } catch {
                finish(exchange, .failure(error))
                return
            }
        }
        connection.busy = true
        exchange.connection = connection
        // libevent's retain of the exchange, for as long as it holds the request.
        let argument = Unmanaged.passRetained(exchange).toOpaque()
        guard let request = evhttp_request_new({ request, argument in ClientLoop.requestDone(request, argument) }, argument)
        else {
            Unmanaged<Exchange>.fromOpaque(argument).release()
            finish(exchange, .failure(HTTPClientError(.transport, "evhttp_request_new failed")))
            return
        }
        evhttp_request_set_error_cb(request) { error, argument in
            Unmanaged<Exchange>.fromOpaque(argument!).takeUnretainedValue().failure = error
        }
        let fields = evhttp_request_get_output_headers(request)
        for (name, value) in exchange.request.headers { evhttp_add_header(fields, name, value) }
        if !exchange.request.body.isEmpty {
            _ = exchange.request.body.withUnsafeBytes {
                evbuffer_add(evhttp_request_get_output_buffer(request), $0.baseAddress, $0.count)
            }
        }
        // libevent's own read/write timeout, reset by every byte, only backs up the exchange's
        // deadline (and takes the place of the idle timeout the pool set).
        var backstop = Self.interval(
            nanoseconds: exchange.deadline &- min(exchange.deadline, Monotonic.nanoseconds()) + 5_000_000_000)
        evhttp_connection_set_timeout_tv(connection.handle, &backstop)
        exchange.inFlight = request
        // A connection that fails at once calls `requestDone` before this returns.
        if evhttp_make_request(connection.handle, request, exchange.request.command, exchange.request.target) != 0 {
            // Out of memory: libevent dropped the request without calling back.
            if exchange.inFlight != nil {
                exchange.inFlight = nil
                Unmanaged<Exchange>.fromOpaque(argument).release()
            }
            finish(exchange, .failure(HTTPClientError(.transport, "cannot send the request to \(exchange.request.origin)")))
        }
    }

    /// evhttp's completion callback: a response, or `nil` after the error callback, or a request
    /// with status 0 when the connection could not be made.
    private static func requestDone(_ request: OpaquePointer?, _ argument: UnsafeMutableRawPointer?) {
        let exchange = Unmanaged<Exchange>.fromOpaque(argument!).takeRetainedValue()
        exchange.inFlight = nil
        exchange.loop.completed(exchange, request)
    }

    private func completed(_ exchange: Exchange, _ request: OpaquePointer?) {
        // `finish` cancels the request of a finished exchange, so evhttp does not call back for
        // it; these guards only keep a surprise from leaking a connection or a continuation.
        guard let connection = exchange.connection else {
            finish(exchange, .failure(HTTPClientError(.transport, "the request to \(exchange.host) lost its connection")))
            return
        }
        exchange.connection = nil
        guard !exchange.finished else {
            doom(connection)
            return
        }
        if let request, evhttp_request_get_response_code(request) != 0 {
            let response = Self.response(of: request)
            connection.responses += 1
            checkIn(connection)
            if response.body.count > configuration.maxResponseBytes {
                finish(exchange, .failure(tooLarge(exchange)))
            } else {
                finish(exchange, .success(response))
            }
            return
        }
        let error = failure(of: exchange, on: connection, connecting: request != nil)
        let reused = connection.responses > 0
        doom(connection)
        if reused && error.code == .transport && exchange.failure == EVREQ_HTTP_EOF && exchange.request.isIdempotent
            && !exchange.retried && Monotonic.nanoseconds() < exchange.deadline
        {
            exchange.retried = true
            exchange.failure = nil
            send(exchange, reuse: false)
            return
        }
        finish(exchange, .failure(error))
    }

    /// Ends `exchange` with `result` unless it has ended already, and lets go of whatever it still
    /// holds: its timer, its request (cancelled) and its connection (closed).
    func finish(_ exchange: Exchange, _ result: Result<OutboundResponse, HTTPClientError>) {
        guard !exchange.finished else { return }
        exchange.finished = true
        exchanges[exchange.ticket.id] = nil
        if let timer = exchange.timer { event_free(timer) }
        exchange.timer = nil
        if let request = exchange.inFlight {
            exchange.inFlight = nil
            // Frees the request, resets its connection and calls the error callback (with
            // EVREQ_HTTP_REQUEST_CANCEL) but never the completion callback.
            evhttp_cancel_request(request)
            Unmanaged.passUnretained(exchange).release()
        }
        if let connection = exchange.connection {
            exchange.connection = nil
            doom(connection)
        }
        exchange.resume(result)
    }

    private static func response(of request: OpaquePointer) -> OutboundResponse {
        var headers = HTTPHeaders()
        if let fields = evhttp_request_get_input_headers(request) {
            var field = fields.pointee.tqh_first
            while let current = field {
                headers.add(String(cString: current.pointee.key), String(cString: current.pointee.value))
                field = current.pointee.next.tqe_next
            }
        }
        let buffer = evhttp_request_get_input_buffer(request)
        let length = evbuffer_get_length(buffer)
        let body = [UInt8](unsafeUninitializedCapacity: length) { bytes, count in
            count = max(0, evbuffer_copyout(buffer, bytes.baseAddress, length))
        }
        return OutboundResponse(status: Int(evhttp_request_get_response_code(request)), headers: headers, body: body)
    }

    private func tooLarge(_ exchange: Exchange) -> HTTPClientError {
        HTTPClientError(
            .responseTooLarge, "the response from \(exchange.host) is larger than \(configuration.maxResponseBytes) bytes")
    }

    /// Why a request got no response: what evhttp reported, and what the name lookup, the
    /// socket and OpenSSL left behind. Names the host, never a header or body byte.
    private func failure(of exchange: Exchange, on connection: PooledConnection, connecting: Bool) -> HTTPClientError {
        let origin = exchange.request.origin
        switch exchange.failure {
        case EVREQ_HTTP_DATA_TOO_LONG?:
            // evhttp reports a malformed chunk-size line the same way; no server of ours sends one.
            return tooLarge(exchange)
        case EVREQ_HTTP_TIMEOUT?:
            return HTTPClientError(.timedOut, "\(origin.host) did not answer in time")
        default:
            break
        }
        let lookup = bufferevent_socket_get_dns_error(connection.bufferEvent)
        if lookup != 0 {
            return HTTPClientError(.transport, "cannot resolve \(origin.host): \(String(cString: evutil_gai_strerror(lookup)))")
        }
        if origin.isTLS, let reason = TLSContext.failure(of: connection.bufferEvent) {
            return HTTPClientError(.transport, "TLS with \(origin) failed: \(reason)")
        }
        if exchange.failure == EVREQ_HTTP_INVALID_HEADER {
            return HTTPClientError(
                .transport,
                "\(origin.host) sent a response head that is malformed or over \(configuration.maxResponseHeadBytes) bytes")
        }
        // The close callback runs only for a connection that was established.
        if connecting || !connection.closed {
            return HTTPClientError(.transport, "cannot connect to \(origin)\(Self.socketError())")
        }
        return HTTPClientError(.transport, "the connection to \(origin) closed before the response was complete")
    }

    /// The errno of a failed connect, when errno still holds one (libevent restores it for its
    /// error callbacks; other paths leave an unrelated value, which is not shown).
    private static func socketError() -> String {
        switch errno {
        case ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, ECONNABORTED, EADDRNOTAVAIL:
            ": " + String(cString: strerror(errno))
        default: ""
        }
    }

    // MARK: Connections

    private func openConnection(to origin: PreparedRequest.Origin) throws(HTTPClientError) -> PooledConnection {
        var bufferEvent: OpaquePointer?
        if origin.isTLS {
            if tls == nil {
                do { tls = try TLSContext(additionalCAFile: nil) } catch { throw HTTPClientError(.transport, error.description) }
            }
            guard let ssl = tls?.makeSSL(host: origin.host) else {
                throw HTTPClientError(.transport, "cannot set up TLS for \(origin.host)")
            }
            // Deferred callbacks, as libevent's https-client sample uses: the handshake's events
            // reach evhttp from the loop, not from inside OpenSSL's reads and writes. Unlike a
            // socket bufferevent, this one cannot cancel a name lookup in progress when it is
            // freed: it then lives until the lookup ends, and closes the socket that starts.
            bufferEvent = bufferevent_openssl_socket_new(
                base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
                Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue))
            guard bufferEvent != nil else {
                SSL_free(ssl)
                throw HTTPClientError(.transport, "cannot set up TLS for \(origin.host)")
            }
        }
        // With a bufferevent given, the connection owns it from here; on failure (allocation
        // only) it has not taken it.
        guard let handle = evhttp_connection_base_bufferevent_new(base, dns, bufferEvent, origin.host, UInt16(origin.port))
        else {
            if let bufferEvent { bufferevent_free(bufferEvent) }
            throw HTTPClientError(.transport, "cannot make a connection to \(origin)")
        }
        evhttp_connection_set_max_body_size(handle, Int(configuration.maxResponseBytes))
        evhttp_connection_set_max_headers_size(handle, Int(configuration.maxResponseHeadBytes))
        // A connection is connected once: one that closed is freed, never reconnected (an SSL
        // object cannot be reused), and a failed request is retried here, not by libevent.
        evhttp_connection_set_retries(handle, 0)
        let connection = PooledConnection(origin: origin, handle: handle, loop: self)
        // The close callback's retain; released when the connection is freed.
        evhttp_connection_set_closecb(
            handle,
            { _, argument in
                let connection = Unmanaged<PooledConnection>.fromOpaque(argument!).takeUnretainedValue()
                connection.loop.connectionClosed(connection)
            }, Unmanaged.passRetained(connection).toOpaque())
        return connection
    }

    /// An idle connection to `origin` that is still open, most recently used first.
    private func takeIdleConnection(to origin: PreparedRequest.Origin) -> PooledConnection? {
        while var connections = idle[origin], let connection = connections.popLast() {
            idle[origin] = connections.isEmpty ? nil : connections
            if Self.isOpen(connection) {
                connection.busy = true
                return connection
            }
            doom(connection)
        }
        return nil
    }

    /// Whether an idle connection still looks usable: the server may have closed it in a way the
    /// loop has not processed yet. One `recv(MSG_PEEK)`: nothing to read is the healthy answer;
    /// end of stream, an error or unexpected bytes mean it cannot carry a request.
    private static func isOpen(_ connection: PooledConnection) -> Bool {
        guard !connection.closed, !connection.doomed else { return false }
        let fd = bufferevent_getfd(connection.bufferEvent)
        guard fd >= 0 else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// A connection whose response is complete: back to the idle pool, or closed.
    private func checkIn(_ connection: PooledConnection) {
        connection.busy = false
        guard !stopping, !connection.closed, !connection.doomed, bufferevent_getfd(connection.bufferEvent) >= 0 else {
            doom(connection)
            return
        }
        var connections = idle[connection.origin] ?? []
        guard connections.count < configuration.maxIdleConnectionsPerOrigin else {
            doom(connection)
            return
        }
        // evhttp watches an idle connection for the server's close, with this read timeout; when
        // it expires evhttp closes the connection and the close callback takes it out of the pool.
        let idleMilliseconds = max(configuration.idleTimeout, .milliseconds(1)).milliseconds
        var timeout = Self.interval(nanoseconds: UInt64(idleMilliseconds) * 1_000_000)
        evhttp_connection_set_timeout_tv(connection.handle, &timeout)
        connections.append(connection)
        idle[connection.origin] = connections
    }

    private func connectionClosed(_ connection: PooledConnection) {
        connection.closed = true
        // A busy connection is the exchange's to handle: evhttp calls its callbacks next.
        if !connection.busy { doom(connection) }
    }

    /// Takes a connection out of use and queues it to be freed.
    private func doom(_ connection: PooledConnection) {
        guard !connection.doomed else { return }
        connection.doomed = true
        connection.busy = false
        if var connections = idle[connection.origin], let index = connections.firstIndex(where: { $0 === connection }) {
            connections.remove(at: index)
            idle[connection.origin] = connections.isEmpty ? nil : connections
        }
        doomed.append(connection)
        if let reapEvent { event_active(reapEvent, 0, 0) }
    }

    /// Frees the doomed connections: each one's bufferevent, socket and SSL go with it.
    private func reap() {
        while !doomed.isEmpty {
            let connections = doomed
            doomed = []
            for connection in connections {
                // May call the close callback, which finds the connection doomed already.
                evhttp_connection_free(connection.handle)
                Unmanaged.passUnretained(connection).release()
            }
        }
    }

    private static func interval(nanoseconds: UInt64) -> Glibc.timeval {
        Glibc.timeval(tv_sec: Int(nanoseconds / 1_000_000_000), tv_usec: Int(nanoseconds % 1_000_000_000 / 1000))
    }
}
