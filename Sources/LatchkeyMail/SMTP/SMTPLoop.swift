internal import CLatchkeyEvent
import Glibc
import LatchkeyLibevent

/// What one step on a channel came to: a reply, or `nil` for a connection or a handshake that
/// is done.
typealias SMTPStep = Result<SMTPReply?, SMTPError>

/// A message for the ``SMTPLoop`` from a sending task.
enum SMTPLoopMessage: Sendable {
    /// Opens channel `id` to `host:port`, with TLS from the first byte when `tls` is set.
    case connect(id: Int, host: String, port: Int, tls: Bool, deadline: UInt64, CheckedContinuation<SMTPStep, Never>)
    /// Writes `bytes` (nothing, for the greeting) and reads the next reply.
    case exchange(id: Int, bytes: [UInt8], deadline: UInt64, CheckedContinuation<SMTPStep, Never>)
    /// Puts TLS over the plain connection after the server's `220` to STARTTLS (RFC 3207).
    case startTLS(id: Int, host: String, deadline: UInt64, CheckedContinuation<SMTPStep, Never>)
    /// Closes the channel.
    case close(id: Int)
    /// The client was released: close everything and end the thread.
    case stop
}

/// One SMTP connection on the loop: its bufferevent and the step in progress.
final class SMTPChannel {
    let id: Int
    let host: String
    unowned let loop: SMTPLoop
    /// The top bufferevent: a socket, TLS over a socket, or a TLS filter over a socket.
    var bufferEvent: OpaquePointer?
    var isTLS = false
    var step: CheckedContinuation<SMTPStep, Never>?
    var waitsForReply = false
    var timer: OpaquePointer?

    init(id: Int, host: String, loop: SMTPLoop) {
        self.id = id
        self.host = host
        self.loop = loop
    }
}

/// The event loop of one ``SMTPClient``: an `event_base` and an `evdns_base` on a thread of their
/// own, and the channels.
///
/// A sending task runs the conversation; each step (connect, write a command and read its reply,
/// the TLS handshake) is one message to this loop and one continuation it resumes, exactly once:
/// with the reply, with the failure libevent or OpenSSL reported, or at the step's deadline. A
/// failed step closes its channel. Everything but `mailbox` is confined to the loop's thread.
final class SMTPLoop {
    let base: OpaquePointer
    let mailbox: Mailbox<SMTPLoopMessage>
    private var dns: OpaquePointer?
    private let tls: TLSContext
    private var channels: [Int: SMTPChannel] = [:]

    /// The most a reply may take before it is complete: a full EHLO reply and then some.
    static let maximumReplyBytes = SMTPReply.maximumLines * SMTPReply.maximumLineLength

    init(tls: TLSContext) throws(SMTPError) {
        guard let base = event_base_new() else { throw SMTPError(.connection, "event_base_new failed") }
        guard let wake = event_new(base, -1, 0, { _, _, _ in }, nil) else {
            event_base_free(base)
            throw SMTPError(.connection, "event_new failed")
        }
        self.base = base
        self.tls = tls
        mailbox = Mailbox(event: wake)
        let me = Unmanaged.passUnretained(self).toOpaque()
        event_assign(wake, base, -1, 0, { _, _, argument in SMTPLoop.from(argument).receiveMessages() }, me)
        dns = Libevent.makeDNSBase(base)
        guard dns != nil else {
            discard()
            throw SMTPError(.connection, "cannot set up the SMTP client's name lookups")
        }
    }

    static func from(_ argument: UnsafeMutableRawPointer?) -> SMTPLoop {
        Unmanaged<SMTPLoop>.fromOpaque(argument!).takeUnretainedValue()
    }

    /// Runs the loop on the current thread until ``SMTPLoopMessage/stop``, then frees everything.
    func run() {
        event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        for channel in Array(channels.values) { fail(channel, SMTPError(.connection, "the SMTP client shut down")) }
        for message in mailbox.close() {
            switch message {
            case .connect(_, _, _, _, _, let step), .exchange(_, _, _, let step), .startTLS(_, _, _, let step):
                step.resume(returning: .failure(SMTPError(.connection, "the SMTP client shut down")))
            case .close, .stop: break
            }
        }
        discard()
    }

    /// Frees the loop's own libevent objects.
    func discard() {
        event_free(mailbox.event)
        if let dns { evdns_base_free(dns, 1) }
        dns = nil
        event_base_free(base)
    }

    private func receiveMessages() {
        for message in mailbox.take() {
            switch message {
            case .connect(let id, let host, let port, let tls, let deadline, let step):
                connect(SMTPChannel(id: id, host: host, loop: self), port: port, tls: tls, deadline: deadline, step)
            case .exchange(let id, let bytes, let deadline, let step):
                guard let channel = channels[id] else {
                    step.resume(returning: .failure(SMTPError(.connection, "the connection is closed")))
                    continue
                }
                exchange(channel, bytes, deadline: deadline, step)
            case .startTLS(let id, let host, let deadline, let step):
                guard let channel = channels[id] else {
                    step.resume(returning: .failure(SMTPError(.connection, "the connection is closed")))
                    continue
                }
                startTLS(channel, host: host, deadline: deadline, step)
            case .close(let id):
                if let channel = channels[id] { close(channel) }
            case .stop:
                event_base_loopbreak(base)
            }
        }
    }

    // MARK: Steps

    private func connect(_ channel: SMTPChannel, port: Int, tls useTLS: Bool, deadline: UInt64, _ step: CheckedContinuation<SMTPStep, Never>) {
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue)
        let bufferEvent: OpaquePointer?
        if useTLS {
            guard let ssl = tls.makeSSL(host: channel.host) else {
                step.resume(returning: .failure(SMTPError(.tls, "cannot set up TLS for \(channel.host)")))
                return
            }
            bufferEvent = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING, options)
            if bufferEvent == nil { SSL_free(ssl) }
            channel.isTLS = true
        } else {
            bufferEvent = bufferevent_socket_new(base, -1, options)
        }
        guard let bufferEvent else {
            step.resume(returning: .failure(SMTPError(.connection, "cannot make a connection to \(channel.host)")))
            return
        }
        channel.bufferEvent = bufferEvent
        channels[channel.id] = channel
        watch(channel)
        begin(channel, step, deadline: deadline, reply: false)
        // Resolves through evdns, then connects; the event callback reports either outcome.
        if bufferevent_socket_connect_hostname(bufferEvent, dns, AF_UNSPEC, channel.host, Int32(port)) != 0, channel.step != nil {
            fail(channel, failure(of: channel, connecting: true))
        }
    }

    private func exchange(_ channel: SMTPChannel, _ bytes: [UInt8], deadline: UInt64, _ step: CheckedContinuation<SMTPStep, Never>) {
        guard let bufferEvent = channel.bufferEvent, channel.step == nil else {
            step.resume(returning: .failure(SMTPError(.connection, "the connection is busy or closed")))
            return
        }
        // Bytes before a command of ours are a reply to nothing (a server closing an idle
        // connection says 421 first): the connection is not in a state to go on.
        if bytes.isEmpty == false, evbuffer_get_length(bufferevent_get_input(bufferEvent)) > 0 {
            step.resume(returning: .failure(SMTPError(.connection, "\(channel.host) sent a reply nobody asked for")))
            close(channel)
            return
        }
        begin(channel, step, deadline: deadline, reply: true)
        if !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { bufferevent_write(bufferEvent, $0.baseAddress, $0.count) }
            guard written == 0 else { return fail(channel, SMTPError(.connection, "cannot write to \(channel.host)")) }
        }
        readReply(channel)
    }

    private func startTLS(_ channel: SMTPChannel, host: String, deadline: UInt64, _ step: CheckedContinuation<SMTPStep, Never>) {
        guard let plain = channel.bufferEvent, channel.step == nil, !channel.isTLS else {
            step.resume(returning: .failure(SMTPError(.connection, "the connection is busy or closed")))
            return
        }
        begin(channel, step, deadline: deadline, reply: false)
        // RFC 3207 §5 and CVE-2011-0411: whatever came after the 220 was sent before TLS, by
        // anyone on the path; it must not be read as a reply inside the TLS session.
        guard evbuffer_get_length(bufferevent_get_input(plain)) == 0 else {
            return fail(channel, SMTPError(.tls, "\(host) sent bytes after its answer to STARTTLS"))
        }
        guard let ssl = tls.makeSSL(host: host) else { return fail(channel, SMTPError(.tls, "cannot set up TLS for \(host)")) }
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue)
        guard let filter = bufferevent_openssl_filter_new(base, plain, ssl, BUFFEREVENT_SSL_CONNECTING, options) else {
            SSL_free(ssl)
            return fail(channel, SMTPError(.tls, "cannot set up TLS for \(host)"))
        }
        // The filter owns the socket's bufferevent from here and frees it with itself.
        channel.bufferEvent = filter
        channel.isTLS = true
        watch(channel)
    }

    /// Sets the channel's callbacks on its top bufferevent and starts reading and writing.
    private func watch(_ channel: SMTPChannel) {
        guard let bufferEvent = channel.bufferEvent else { return }
        let me = Unmanaged.passUnretained(channel).toOpaque()
        bufferevent_setcb(
            bufferEvent,
            { _, argument in
                let channel = Unmanaged<SMTPChannel>.fromOpaque(argument!).takeUnretainedValue()
                channel.loop.readReply(channel)
            }, nil,
            { _, events, argument in
                let channel = Unmanaged<SMTPChannel>.fromOpaque(argument!).takeUnretainedValue()
                channel.loop.event(channel, events)
            }, me)
        if channel.isTLS { bufferevent_openssl_set_allow_dirty_shutdown(bufferEvent, 1) }
        bufferevent_enable(bufferEvent, Int16(EV_READ | EV_WRITE))
    }

    /// Makes `step` the channel's step in progress, with a timer at `deadline`.
    private func begin(_ channel: SMTPChannel, _ step: CheckedContinuation<SMTPStep, Never>, deadline: UInt64, reply: Bool) {
        channel.step = step
        channel.waitsForReply = reply
        let me = Unmanaged.passUnretained(channel).toOpaque()
        channel.timer = event_new(
            base, -1, 0,
            { _, _, argument in
                let channel = Unmanaged<SMTPChannel>.fromOpaque(argument!).takeUnretainedValue()
                channel.loop.fail(channel, SMTPError(.timedOut, "\(channel.host) did not answer in time"))
            }, me)
        let remaining = deadline &- min(deadline, Monotonic.nanoseconds())
        var delay = Glibc.timeval(tv_sec: Int(remaining / 1_000_000_000), tv_usec: Int(remaining % 1_000_000_000 / 1000))
        if let timer = channel.timer { event_add(timer, &delay) }
    }

    /// Ends the channel's step with `outcome`; the only place that resumes a step.
    private func end(_ channel: SMTPChannel, _ outcome: SMTPStep) {
        guard let step = channel.step else { return }
        channel.step = nil
        channel.waitsForReply = false
        if let timer = channel.timer { event_free(timer) }
        channel.timer = nil
        step.resume(returning: outcome)
    }

    /// Ends the step with `error` and closes the channel.
    func fail(_ channel: SMTPChannel, _ error: SMTPError) {
        end(channel, .failure(error))
        close(channel)
    }

    private func close(_ channel: SMTPChannel) {
        end(channel, .failure(SMTPError(.connection, "the connection to \(channel.host) was closed")))
        channels[channel.id] = nil
        if let bufferEvent = channel.bufferEvent {
            bufferevent_setcb(bufferEvent, nil, nil, nil, nil)
            bufferevent_free(bufferEvent)
        }
        channel.bufferEvent = nil
    }

    // MARK: Callbacks

    /// Reads a reply when the step waits for one and it is complete.
    private func readReply(_ channel: SMTPChannel) {
        guard channel.waitsForReply, let bufferEvent = channel.bufferEvent else { return }
        let input = bufferevent_get_input(bufferEvent)
        let length = evbuffer_get_length(input)
        guard length > 0 else { return }
        let bytes = UnsafeRawBufferPointer(start: evbuffer_pullup(input, -1), count: length)
        do {
            guard let (reply, consumed) = try SMTPReply.parse(bytes) else {
                if length > Self.maximumReplyBytes { fail(channel, SMTPError(.protocolViolation, "\(channel.host) sent a reply that is too long")) }
                return
            }
            evbuffer_drain(input, consumed)
            end(channel, .success(reply))
        } catch {
            fail(channel, SMTPError(.protocolViolation, "\(channel.host) sent a malformed reply: \(error.reason)"))
        }
    }

    private func event(_ channel: SMTPChannel, _ events: Int16) {
        if events & Int16(BEV_EVENT_CONNECTED) != 0 {
            if !channel.waitsForReply { end(channel, .success(nil)) }
            return
        }
        guard events & Int16(BEV_EVENT_EOF | BEV_EVENT_ERROR) != 0 else { return }
        fail(channel, failure(of: channel, connecting: !channel.waitsForReply))
    }

    /// Why a channel failed: the name lookup, OpenSSL, or the socket.
    private func failure(of channel: SMTPChannel, connecting: Bool) -> SMTPError {
        guard let bufferEvent = channel.bufferEvent else { return SMTPError(.connection, "the connection to \(channel.host) was closed") }
        let lookup = bufferevent_socket_get_dns_error(bufferEvent)
        if lookup != 0 {
            return SMTPError(.connection, "cannot resolve \(channel.host): \(String(cString: evutil_gai_strerror(lookup)))")
        }
        if channel.isTLS, let reason = TLSContext.failure(of: bufferEvent) {
            return SMTPError(.tls, "TLS with \(channel.host) failed: \(reason)")
        }
        let error = errno
        if connecting {
            let detail = [ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH].contains(error) ? ": " + String(cString: strerror(error)) : ""
            return SMTPError(.connection, "cannot connect to \(channel.host)\(detail)")
        }
        return SMTPError(.connection, "\(channel.host) closed the connection")
    }
}
