internal import CLatchkeyEvent
import Glibc
import Synchronization
import LatchkeyHTTP
import LatchkeyLibevent

/// What every loop of one server reads; immutable after start apart from the atomics.
final class ServerContext: Sendable {
    let limits: HTTPServer.Limits
    let trustedProxies: TrustedProxies
    let responder: any HTTPResponder
    /// The responder when it is a ``Router``: lets a loop resolve a request and run a synchronous
    /// route without a task. Its table is frozen by `start()`; reading it is one atomic load.
    let router: Router?
    let accessLog: (any AccessLogSink)?
    let errors: ErrorMiddleware
    let activeConnections = Atomic<Int>(0)
    /// Loops that still have an accept event on the listening socket.
    let acceptingLoops = Atomic<Int>(0)
    /// Milliseconds between two deadline sweeps of a loop.
    let tickMilliseconds: Int

    init(
        limits: HTTPServer.Limits, trustedProxies: TrustedProxies, responder: any HTTPResponder, accessLog: (any AccessLogSink)?,
        errors: ErrorMiddleware
    ) {
        self.limits = limits
        self.trustedProxies = trustedProxies
        self.responder = responder
        self.router = responder as? Router
        self.accessLog = accessLog
        self.errors = errors
        let shortest = [limits.headerTimeout, limits.bodyTimeout, limits.idleTimeout].min()!
        self.tickMilliseconds = min(500, max(10, Int(shortest.milliseconds / 8)))
    }
}

extension ServerContext {
    /// What a handler sees of `head` and `body` from `peer`: the client address by the
    /// trusted-proxy rule, and the incoming `X-Request-Id` when it is a safe token, else a new one.
    func request(_ head: RequestHead, body: [UInt8], peer: String, makeID: () -> String) -> HTTPRequest {
        let incomingID = head.headers.withFirstValue("X-Request-Id") { value -> String? in
            guard let value, RequestIDGenerator.isSafe(value) else { return nil }
            return String(decoding: value, as: UTF8.self)
        }
        let clientAddress = trustedProxies.networks.isEmpty
            ? peer : trustedProxies.clientAddress(peer: peer, forwardedFor: head.headers.values("X-Forwarded-For"))
        var request = HTTPRequest(
            method: head.method, path: head.path, query: head.query, headers: head.headers, body: body,
            remoteAddress: clientAddress, pathParameters: [:], requestID: incomingID ?? makeID())
        request.encodedPath = head.encodedPath
        return request
    }
}

/// A message for a loop from another thread.
enum LoopMessage: Sendable {
    /// An asynchronous handler finished.
    case response(connection: Int, sequence: Int, HTTPResponse)
    /// A step of a request task, for ``LoopExecutor``.
    case job(UnownedJob)
    /// Stop accepting, close idle connections, close the others after their current response.
    case drain
    /// Close every connection and leave the loop.
    case stop
}

/// Set by a loop thread once it has freed everything, so the server can join it without blocking.
final class ExitFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// What the server keeps of a loop: its mailbox and its thread.
struct LoopHandle: Sendable {
    let mailbox: Mailbox<LoopMessage>
    let thread: pthread_t
    let exited: ExitFlag
}

/// One event loop: an `event_base` on its own thread, with the connections it accepted.
///
/// Everything here except `mailbox` is confined to the loop's thread: connections, buffers and
/// libevent objects are created, used and freed there, so they need no locks. Other threads
/// reach the loop only through ``Mailbox``.
final class EventLoop {
    let context: ServerContext
    let base: OpaquePointer
    let mailbox: Mailbox<LoopMessage>
    /// Where request tasks run: this loop's thread.
    let executor: LoopExecutor
    let listenFD: Int32
    private var acceptEvent: OpaquePointer?
    private var resumeAcceptEvent: OpaquePointer?
    private var tickEvent: OpaquePointer?
    private(set) var connections: [Int: Connection] = [:]
    private var nextConnectionID = 0
    /// Where `recv` writes; shared by the loop's connections, which copy what they keep.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Where responses are serialized before `send`; reused.
    var output: [UInt8] = []
    private(set) var date = DateField()
    var requestIDs = RequestIDGenerator()
    private(set) var draining = false
    /// Set by the loop thread when it has freed everything.
    let exited = ExitFlag()

    init(context: ServerContext, listenFD: Int32) throws(HTTPServerError) {
        guard let base = event_base_new() else { throw HTTPServerError(.eventLoopFailed, "event_base_new failed") }
        self.context = context
        self.base = base
        self.listenFD = listenFD
        self.readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        guard let wake = event_new(base, -1, 0, { _, _, argument in EventLoop.from(argument).receiveMessages() }, nil)
        else { throw HTTPServerError(.eventLoopFailed, "event_new failed") }
        self.mailbox = Mailbox<LoopMessage>(event: wake)
        self.executor = LoopExecutor(mailbox: mailbox)
        output.reserveCapacity(16 * 1024)
        date.refresh()
        let me = Unmanaged.passUnretained(self).toOpaque()
        event_assign(wake, base, -1, 0, { _, _, argument in EventLoop.from(argument).receiveMessages() }, me)
        acceptEvent = event_new(
            base, listenFD, Int16(EV_READ | EV_PERSIST), { _, _, argument in EventLoop.from(argument).acceptConnections() },
            me)
        resumeAcceptEvent = event_new(base, -1, 0, { _, _, argument in EventLoop.from(argument).resumeAccepting() }, me)
        tickEvent = event_new(base, -1, Int16(EV_PERSIST), { _, _, argument in EventLoop.from(argument).tick() }, me)
        guard acceptEvent != nil, resumeAcceptEvent != nil, tickEvent != nil else {
            throw HTTPServerError(.eventLoopFailed, "event_new failed")
        }
        event_add(acceptEvent, nil)
        context.acceptingLoops.add(1, ordering: .relaxed)
        var interval = timeval(
            tv_sec: context.tickMilliseconds / 1000, tv_usec: Int((context.tickMilliseconds % 1000) * 1000))
        event_add(tickEvent, &interval)
    }

    static func from(_ argument: UnsafeMutableRawPointer?) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(argument!).takeUnretainedValue()
    }

    /// Runs the loop on the current thread until ``LoopMessage/stop``, then frees everything.
    func run() {
        event_base_dispatch(base)
        for connection in Array(connections.values) { connection.close() }
        stopAccepting()
        if let tickEvent { event_free(tickEvent) }
        if let resumeAcceptEvent { event_free(resumeAcceptEvent) }
        for case .job(let job) in mailbox.close() { LoopExecutor.runElsewhere(job) }
        event_free(mailbox.event)
        event_base_free(base)
        readBuffer.deallocate()
        exited.value.store(true, ordering: .releasing)
    }

    // MARK: Accepting

    private func acceptConnections() {
        // A bounded batch, so that one loop does not take a whole burst from its neighbours.
        for _ in 0..<16 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            // accept4 is a GNU extension that the C modules do not expose (see shim.h), so the
            // flags are set with fcntl: two cheap syscalls per connection, not per request.
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenFD, $0, &length) }
            }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop accepting for a moment instead of spinning on a
                    // listening socket that stays readable.
                    pauseAccepting()
                    return
                case EINVAL, EBADF:
                    // The server shut the listening socket down.
                    stopAccepting()
                    return
                default: return
                }
            }
            let count = context.activeConnections.add(1, ordering: .relaxed).newValue
            if count > context.limits.maxConnections {
                context.activeConnections.subtract(1, ordering: .relaxed)
                refuse(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            nextConnectionID += 1
            let connection = Connection(
                id: nextConnectionID, fd: fd, loop: self, remoteAddress: ListeningSocket.addressText(&address))
            guard connection.start() else {
                connection.close()
                continue
            }
            connections[connection.id] = connection
        }
    }

    /// Answers a connection over the cap with 503 and closes it (docs/security.md S25).
    private func refuse(_ fd: Int32) {
        var response = HTTPError(
            status: 503, code: "overloaded", description: "too many connections; try again later",
            headers: ["Retry-After": "1"]
        ).response
        response.headers.set("Content-Type", "application/json; charset=utf-8")
        var bytes = [UInt8]()
        ResponseWriter.write(
            response, requestID: requestIDs.makeID(), date: date.bytes, connection: .close, omitBody: false, into: &bytes)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        Glibc.close(fd)
    }

    private func pauseAccepting() {
        guard let acceptEvent, let resumeAcceptEvent else { return }
        event_del(acceptEvent)
        var pause = timeval(tv_sec: 0, tv_usec: 100_000)
        event_add(resumeAcceptEvent, &pause)
    }

    private func resumeAccepting() {
        guard let acceptEvent, !draining else { return }
        event_add(acceptEvent, nil)
    }

    private func stopAccepting() {
        guard let acceptEvent else { return }
        event_free(acceptEvent)
        self.acceptEvent = nil
        context.acceptingLoops.subtract(1, ordering: .releasing)
    }

    func connectionClosed(_ connection: Connection) {
        connections[connection.id] = nil
        context.activeConnections.subtract(1, ordering: .relaxed)
    }

    // MARK: Messages and time

    private func receiveMessages() {
        for message in mailbox.take() {
            switch message {
            case .response(let id, let sequence, let response):
                // The connection may have closed while the handler ran; then the reply is dropped.
                connections[id]?.deliver(response, sequence: sequence)
            case .job(let job):
                executor.run(job)
            case .drain:
                draining = true
                stopAccepting()
                for connection in Array(connections.values) where connection.isIdle { connection.close() }
            case .stop:
                for connection in Array(connections.values) { connection.close() }
                event_base_loopbreak(base)
            }
        }
    }

    private func tick() {
        date.refresh()
        let now = Monotonic.milliseconds()
        for connection in Array(connections.values) { connection.checkDeadlines(now: now) }
    }
}
