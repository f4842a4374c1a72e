internal import CLatchkeyEvent
import FoundationEssentials
import Glibc
import LatchkeyHTTP
import LatchkeyLibevent

/// One client connection, confined to its loop's thread.
///
/// A state machine over the bytes of one TCP connection: read a head (bounded by
/// `maxHeaderBytes` and `headerTimeout`, counted from its first byte, so a client that sends one
/// byte a second is cut off), read the body it announced (bounded by `maxBodyBytes`, refused
/// with 413 before any of it is read, and by `bodyTimeout`) or its chunked body (the same
/// limits, checked chunk by chunk; see ``ChunkedDecoder``), run the handler, write the
/// response, and start again or close. One request is handled at a time; pipelined requests wait
/// in the input buffer and are answered in order.
///
/// Asynchronous handlers run in a task on the loop's thread (see ``LoopExecutor``) and send their
/// response back through the loop's mailbox with this connection's id and the request's sequence
/// number; a reply for a connection that has closed in the meantime finds no connection and is
/// dropped, so a handler never touches a freed connection or socket.
final class Connection {
    enum State {
        case awaitingRequest
        case readingHead
        case readingBody
        case processing
        /// After an error response: the write side is shut, what the client still sends is read
        /// and discarded for a moment, so that our close does not reset the connection before the
        /// client has read the response.
        case lingering
        case closed
    }

    /// What the loop remembers of the request being handled, for the response and the log.
    private struct InFlight {
        var method: HTTPMethod
        var requestID: String
        var closeAfter: Bool
        var isHTTP10: Bool
        var startNanoseconds: UInt64
        var route: String?
        var path: String
        var userAgent: String?
        var requestBytes: Int
        var clientAddress: String
    }

    let id: Int
    let fd: Int32
    unowned let loop: EventLoop
    let remoteAddress: String
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    private(set) var state = State.awaitingRequest
    /// When reading must have progressed (monotonic milliseconds; 0 for none).
    private var deadline: UInt64 = 0
    /// When pending output must have been written.
    private var writeDeadline: UInt64 = 0
    /// Received bytes not yet consumed: the partial head or body, or pipelined requests.
    private var input: [UInt8] = []
    /// Bytes of the partial head already searched for its end.
    private var scanned = 0
    private var head: RequestHead?
    private var headLength = 0
    /// For a chunked body: where decoding stands, and the data so far.
    private var chunked: ChunkedDecoder?
    private var chunkedBody: [UInt8] = []
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private var closeWhenFlushed = false
    private var lingerWhenFlushed = false
    private var readPaused = false
    private var requests = 0
    private var sequence = 0
    private var inFlight: InFlight?
    private var processingInput = false
    private var discarded = 0

    private var limits: HTTPServer.Limits { loop.context.limits }

    init(id: Int, fd: Int32, loop: EventLoop, remoteAddress: String) {
        self.id = id
        self.fd = fd
        self.loop = loop
        self.remoteAddress = remoteAddress
    }

    /// Registers the read event; `false` when libevent could not.
    func start() -> Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(
            loop.base, fd, Int16(EV_READ | EV_PERSIST),
            { _, _, argument in
                let connection = Unmanaged<Connection>.fromOpaque(argument!).takeUnretainedValue()
                withExtendedLifetime(connection) { connection.readable() }
            }, me)
        guard let readEvent, event_add(readEvent, nil) == 0 else { return false }
        deadline = Monotonic.milliseconds() + UInt64(limits.headerTimeout.milliseconds)
        return true
    }

    private var hasPendingOutput: Bool { pendingOffset < pending.count }

    /// Whether closing now loses nothing: no request in progress, nothing unwritten.
    var isIdle: Bool { state == .awaitingRequest && input.isEmpty && !hasPendingOutput }

    // MARK: Reading

    private func readable() {
        let count = recv(fd, loop.readBuffer.baseAddress, loop.readBuffer.count, 0)
        if count > 0 {
            if state == .lingering {
                discarded += count
                if discarded > 1 << 20 { close() }
                return
            }
            input.append(contentsOf: UnsafeRawBufferPointer(start: loop.readBuffer.baseAddress, count: count))
            processInput()
            // While a handler runs or a response waits to be written, stop reading once a full
            // request's worth is buffered: the kernel's window then slows the client down.
            if state != .closed && state != .lingering && input.count > limits.maxHeaderBytes + limits.maxBodyBytes {
                pauseReading()
            }
        } else if count == 0 {
            peerFinished()
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            close()
        }
    }

    /// The client closed its side. Half-closed clients that still wait for an answer are rare,
    /// and treating end of stream as an abort (as nginx does) frees the connection at once; a
    /// reply that a handler still produces is then dropped.
    private func peerFinished() {
        close()
    }

    private func processInput() {
        guard !processingInput else { return }
        processingInput = true
        defer { processingInput = false }
        // Moved out so that the parser reads it while `self` stays free to change.
        var buffer = input
        input = []
        let consumed = buffer.withUnsafeBytes { parseRequests($0) }
        guard state != .closed && state != .lingering && !closeWhenFlushed else { return }
        if consumed == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
        } else if consumed > 0 {
            buffer.removeFirst(consumed)
        }
        input = buffer
    }

    /// Parses and dispatches as many requests as `raw` holds; returns the bytes consumed.
    private func parseRequests(_ raw: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while true {
            switch state {
            case .awaitingRequest, .readingHead:
                if hasPendingOutput || closeWhenFlushed { return offset }
                if state == .awaitingRequest {
                    // RFC 9112 §2.2: empty lines before a request line are ignored.
                    while offset < raw.count && (raw[offset] == 0x0D || raw[offset] == 0x0A) { offset += 1 }
                    guard offset < raw.count else { return offset }
                    state = .readingHead
                    scanned = 0
                    deadline = Monotonic.milliseconds() + UInt64(limits.headerTimeout.milliseconds)
                }
                let region = UnsafeRawBufferPointer(rebasing: raw[offset...])
                guard let end = RequestHead.end(in: region, from: scanned) else {
                    if region.count > limits.maxHeaderBytes {
                        fail(HTTPError(status: 431, code: "invalid_request", description: "the request head is too large"))
                        return raw.count
                    }
                    scanned = region.count
                    return offset
                }
                if end > limits.maxHeaderBytes {
                    fail(HTTPError(status: 431, code: "invalid_request", description: "the request head is too large"))
                    return raw.count
                }
                let parsed: RequestHead
                do {
                    parsed = try RequestHead.parse(UnsafeRawBufferPointer(rebasing: region[0..<end]))
                } catch {
                    fail(error)
                    return raw.count
                }
                offset += end
                if parsed.contentLength > limits.maxBodyBytes {
                    // Refused on the announced length, before a byte of the body is read.
                    fail(HTTPError.payloadTooLarge(limit: limits.maxBodyBytes))
                    return raw.count
                }
                if parsed.contentLength == 0 && !parsed.isChunked {
                    dispatch(parsed, requestBytes: end, body: [])
                    continue
                }
                head = parsed
                headLength = end
                if parsed.isChunked {
                    chunked = ChunkedDecoder(maxBodyBytes: limits.maxBodyBytes, maxFramingBytes: limits.maxHeaderBytes)
                    chunkedBody = []
                }
                state = .readingBody
                deadline = Monotonic.milliseconds() + UInt64(limits.bodyTimeout.milliseconds)
                let bodyArrived = parsed.isChunked ? raw.count > offset : raw.count - offset >= parsed.contentLength
                if parsed.expectsContinue && !bodyArrived {
                    let sent = Self.continueLine.withUnsafeBytes { queue($0) }
                    if state == .closed { return raw.count }
                    _ = sent
                }
            case .readingBody:
                guard let head else { return offset }
                let body: [UInt8]
                var requestBytes = headLength
                if var decoder = chunked {
                    do {
                        offset += try decoder.decode(UnsafeRawBufferPointer(rebasing: raw[offset...]), into: &chunkedBody)
                    } catch {
                        fail(error)
                        return raw.count
                    }
                    guard decoder.isComplete else {
                        chunked = decoder
                        return offset
                    }
                    chunked = nil
                    body = chunkedBody
                    chunkedBody = []
                    requestBytes += decoder.consumedBytes
                } else {
                    guard raw.count - offset >= head.contentLength else { return offset }
                    body = Array(raw[offset..<(offset + head.contentLength)])
                    offset += head.contentLength
                    requestBytes += body.count
                }
                self.head = nil
                dispatch(head, requestBytes: requestBytes, body: body)
            case .processing, .lingering, .closed:
                return offset
            }
        }
    }

    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    // MARK: Handling

    private func dispatch(_ head: RequestHead, requestBytes: Int, body: [UInt8]) {
        requests += 1
        sequence += 1
        let context = loop.context
        let closeAfter = !head.keepAlive || requests >= limits.maxRequestsPerConnection || loop.draining
        var request = context.request(head, body: body, peer: remoteAddress) { loop.requestIDs.makeID() }
        let clientAddress = request.remoteAddress
        state = .processing
        deadline = 0
        let logging = context.accessLog != nil
        inFlight = InFlight(
            method: head.method, requestID: request.requestID, closeAfter: closeAfter, isHTTP10: head.isHTTP10,
            startNanoseconds: logging ? Monotonic.nanoseconds() : 0, route: nil, path: logging ? head.path : "",
            userAgent: logging ? head.headers["User-Agent"] : nil, requestBytes: requestBytes, clientAddress: clientAddress)
        guard let routes = context.router?.table else {
            spawn(request, responder: context.responder)
            return
        }
        let route = routes.resolve(&request)
        inFlight?.route = route.pattern
        if route.isSynchronous {
            let response = context.errors.respond(to: request) { try route.respondSynchronously(to: $0) }
            deliver(response, sequence: sequence)
        } else {
            spawn(request, responder: route)
        }
    }

    private func spawn(_ request: HTTPRequest, responder: any HTTPResponder) {
        let mailbox = loop.mailbox
        let errors = loop.context.errors
        let id = id
        let sequence = sequence
        Task(executorPreference: loop.executor) {
            let response = await errors.respond(to: request, next: responder)
            mailbox.post(.response(connection: id, sequence: sequence, response))
        }
    }

    /// Writes the response to the request in progress; called on the loop thread, directly for
    /// synchronous routes and from the mailbox for asynchronous ones.
    func deliver(_ response: HTTPResponse, sequence: Int) {
        guard state == .processing, sequence == self.sequence, let inFlight else { return }
        self.inFlight = nil
        state = .awaitingRequest
        let close = inFlight.closeAfter || loop.draining || closeWhenFlushed
        loop.output.removeAll(keepingCapacity: true)
        ResponseWriter.write(
            response, requestID: inFlight.requestID, date: loop.date.bytes,
            connection: close ? .close : inFlight.isHTTP10 ? .keepAlive : .none, omitBody: inFlight.method == .head,
            into: &loop.output)
        if let log = loop.context.accessLog {
            log.record(
                AccessLogEntry(
                    time: .now, requestID: inFlight.requestID, method: inFlight.method, route: inFlight.route,
                    path: inFlight.path, status: response.status,
                    durationSeconds: Double(Monotonic.nanoseconds() - inFlight.startNanoseconds) / 1e9,
                    remoteAddress: inFlight.clientAddress, userAgent: inFlight.userAgent, requestBytes: inFlight.requestBytes,
                    responseBytes: loop.output.count))
        }
        if close {
            closeWhenFlushed = true
            lingerWhenFlushed = !input.isEmpty
        } else {
            deadline = Monotonic.milliseconds() + UInt64(limits.idleTimeout.milliseconds)
        }
        if loop.output.withUnsafeBytes({ queue($0) }) { flushed() }
    }

    /// Answers a request that cannot be handled (malformed, too large) and closes the connection.
    private func fail(_ error: HTTPError) {
        requests += 1
        let requestID = loop.requestIDs.makeID()
        loop.output.removeAll(keepingCapacity: true)
        ResponseWriter.write(
            error.response, requestID: requestID, date: loop.date.bytes, connection: .close, omitBody: false,
            into: &loop.output)
        loop.context.accessLog?.record(
            AccessLogEntry(
                time: .now, requestID: requestID, method: HTTPMethod(rawValue: "-"), route: nil, path: "",
                status: error.status, durationSeconds: 0, remoteAddress: remoteAddress, userAgent: nil,
                requestBytes: 0, responseBytes: loop.output.count))
        head = nil
        chunked = nil
        chunkedBody = []
        closeWhenFlushed = true
        lingerWhenFlushed = true
        deadline = 0
        if loop.output.withUnsafeBytes({ queue($0) }) { flushed() }
    }

    // MARK: Writing

    /// Sends `bytes` now, or keeps what the socket does not take and waits until it is writable.
    /// - Returns: `true` when every byte was sent now.
    private func queue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if hasPendingOutput {
            pending.append(contentsOf: bytes)
            return false
        }
        var offset = 0
        while offset < bytes.count {
            let sent = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                close()
                return false
            }
        }
        if offset == bytes.count { return true }
        pending = Array(bytes[offset...])
        pendingOffset = 0
        waitUntilWritable()
        return false
    }

    private func waitUntilWritable() {
        if writeEvent == nil {
            writeEvent = event_new(
                loop.base, fd, Int16(EV_WRITE | EV_PERSIST),
                { _, _, argument in
                    let connection = Unmanaged<Connection>.fromOpaque(argument!).takeUnretainedValue()
                    withExtendedLifetime(connection) { connection.writable() }
                }, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let writeEvent, event_add(writeEvent, nil) == 0 else {
            close()
            return
        }
        // A client that does not read its response must not hold the connection for ever.
        writeDeadline = Monotonic.milliseconds() + UInt64(limits.bodyTimeout.milliseconds)
    }

    private func writable() {
        let sent = pending.withUnsafeBytes { raw in
            send(fd, raw.baseAddress! + pendingOffset, raw.count - pendingOffset, Int32(MSG_NOSIGNAL))
        }
        if sent > 0 {
            pendingOffset += sent
        } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            return
        } else {
            close()
            return
        }
        guard !hasPendingOutput else { return }
        pending = []
        pendingOffset = 0
        writeDeadline = 0
        if let writeEvent { event_del(writeEvent) }
        flushed()
    }

    /// Everything queued has been sent.
    private func flushed() {
        if closeWhenFlushed {
            if lingerWhenFlushed { startLingering() } else { close() }
            return
        }
        if readPaused { resumeReading() }
        if state == .awaitingRequest && !input.isEmpty { processInput() }
    }

    private func startLingering() {
        Glibc.shutdown(fd, Int32(SHUT_WR))
        state = .lingering
        input = []
        discarded = 0
        deadline = Monotonic.milliseconds() + UInt64(min(2000, limits.bodyTimeout.milliseconds))
        if readPaused { resumeReading() }
    }

    private func pauseReading() {
        guard !readPaused, let readEvent else { return }
        event_del(readEvent)
        readPaused = true
    }

    private func resumeReading() {
        guard readPaused, let readEvent else { return }
        event_add(readEvent, nil)
        readPaused = false
    }

    // MARK: Closing

    /// Closes the connection if a deadline has passed.
    func checkDeadlines(now: UInt64) {
        if (deadline != 0 && deadline <= now) || (writeDeadline != 0 && writeDeadline <= now) { close() }
    }

    func close() {
        guard state != .closed else { return }
        state = .closed
        if let readEvent { event_free(readEvent) }
        if let writeEvent { event_free(writeEvent) }
        readEvent = nil
        writeEvent = nil
        Glibc.close(fd)
        inFlight = nil
        input = []
        pending = []
        loop.connectionClosed(self)
    }
}
