import LatchkeyBasics
import LatchkeyCrypto
import LatchkeyLibevent
import Synchronization

/// Hands messages to one SMTP server (RFC 5321): TLS as ``SMTPServer/Security`` demands, AUTH
/// PLAIN or LOGIN (RFC 4954), SMTPUTF8 when an address needs it (RFC 6531), dot-stuffing, and
/// connections kept open between messages.
///
/// ## Threading
///
/// The sockets, bufferevents and `SSL`s live on an event-loop thread of the client's own (an
/// ``SMTPLoop``, started by the first send). A send runs its conversation on the caller's task:
/// every step (connect, a command and its reply, the TLS handshake) is posted to the loop and
/// awaited, each under ``Configuration-swift.struct/stepTimeout``. Sends may run concurrently,
/// each on a connection of its own.
///
/// ## Connections
///
/// After a message is accepted its connection is kept, up to
/// ``Configuration-swift.struct/maximumIdleConnections``, for the next message; one idle for
/// ``Configuration-swift.struct/idleTimeout`` is closed before use. A kept connection the server
/// has closed in the meantime fails at its first command, before anything of the message was
/// accepted, and the message then goes once more on a new connection.
///
/// ## TLS
///
/// On `smtp://` the server must offer STARTTLS; when it does not, nothing is sent and the send
/// fails (an attacker on the path could strip the offer). Certificates are verified against the
/// system's trust store plus `caFile`, and must name the host (``TLSContext``).
package final class SMTPClient: Sendable {
    package struct Configuration: Sendable {
        package var server: SMTPServer
        /// AUTH with these when set; the server must then offer PLAIN or LOGIN.
        package var username: String?
        package var password: String?
        /// A PEM file of CA certificates trusted besides the system's.
        package var caFile: String?
        /// The name this client gives in EHLO.
        package var helloName: String
        /// The longest any one step may take (RFC 5321 §4.5.3.2 allows minutes; a message that
        /// waits longer is retried later instead).
        package var stepTimeout: Duration = .seconds(30)
        /// How long a connection is kept for the next message.
        package var idleTimeout: Duration = .seconds(20)
        package var maximumIdleConnections = 4

        package init(server: SMTPServer, username: String? = nil, password: String? = nil, caFile: String? = nil, helloName: String) {
            self.server = server
            self.username = username
            self.password = password
            self.caFile = caFile
            self.helloName = helloName
        }
    }

    /// An open, greeted, secured and authenticated connection between messages.
    private struct Session: Sendable {
        var id: Int
        var extensions: [String: [String]]
        var idleSince: UInt64
    }

    private enum LoopState {
        case notStarted
        case running(Mailbox<SMTPLoopMessage>)
    }

    package let configuration: Configuration
    private let tls: TLSContext
    private let loop = Mutex(LoopState.notStarted)
    private let idle = Mutex<[Session]>([])
    private let nextID = Atomic<Int>(0)

    /// Makes the client; nothing connects until the first send.
    ///
    /// - Throws: ``SMTPError`` of kind `tls` when the CA file cannot be read.
    package init(configuration: Configuration) throws(SMTPError) {
        self.configuration = configuration
        do {
            tls = try TLSContext(additionalCAFile: configuration.caFile)
        } catch {
            throw SMTPError(.tls, error.description)
        }
    }

    deinit {
        // A send in progress holds the client: nothing is in flight here. The loop closes the
        // kept connections and ends its thread.
        if case .running(let mailbox) = loop.withLock({ $0 }) { mailbox.post(.stop) }
    }

    /// Hands `message` to the server, which has taken responsibility for it when this returns.
    ///
    /// - Throws: ``SMTPError``; ``SMTPError/isPermanent`` tells whether a later try can help.
    package func send(_ message: MIMEMessage) async throws(SMTPError) {
        let mailbox = try startedLoop()
        let data = Self.dotStuffed(Array(message.rendered().utf8))
        if let session = takeIdleSession(mailbox) {
            var answered = false
            do throws(SMTPError) {
                try await transaction(message, data, on: session, answered: &answered, mailbox)
                keep(session, mailbox)
                return
            } catch let error where error.isOutage && !answered {
                // Closed while it was kept, before MAIL FROM was answered: nothing of this
                // message reached the server. Go on with a new connection.
                mailbox.post(.close(id: session.id))
            } catch {
                mailbox.post(.close(id: session.id))
                throw error
            }
        }
        let session = try await open(mailbox)
        var answered = false
        do throws(SMTPError) {
            try await transaction(message, data, on: session, answered: &answered, mailbox)
        } catch {
            mailbox.post(.close(id: session.id))
            throw error
        }
        keep(session, mailbox)
    }

    // MARK: The conversation

    /// Connects, reads the greeting, says EHLO, secures the connection and authenticates.
    private func open(_ mailbox: Mailbox<SMTPLoopMessage>) async throws(SMTPError) -> Session {
        let server = configuration.server
        let id = nextID.add(1, ordering: .relaxed).newValue
        _ = try await step(mailbox) { .connect(id: id, host: server.host, port: server.port, tls: server.security == .implicitTLS, deadline: $0, $1) }
        do throws(SMTPError) {
            try expect(220, try await exchange(id, nil, mailbox), after: "connecting")
            var extensions = try await hello(id, mailbox)
            if server.security == .startTLS {
                guard extensions["STARTTLS"] != nil else {
                    throw SMTPError(.tls, "\(server.host) does not offer STARTTLS, which smtp:// requires; nothing was sent")
                }
                try expect(220, try await exchange(id, "STARTTLS", mailbox), after: "STARTTLS")
                _ = try await step(mailbox) { .startTLS(id: id, host: server.host, deadline: $0, $1) }
                extensions = try await hello(id, mailbox)
            }
            if let username = configuration.username {
                try await authenticate(id, username: username, password: configuration.password ?? "", offered: extensions, mailbox)
            }
            return Session(id: id, extensions: extensions, idleSince: 0)
        } catch {
            mailbox.post(.close(id: id))
            throw error
        }
    }

    private func hello(_ id: Int, _ mailbox: Mailbox<SMTPLoopMessage>) async throws(SMTPError) -> [String: [String]] {
        let reply = try await exchange(id, "EHLO " + configuration.helloName, mailbox)
        try expect(250, reply, after: "EHLO")
        return reply.extensions
    }

    /// AUTH PLAIN when offered, else AUTH LOGIN (RFC 4954). The credentials go only over TLS or
    /// to a loopback relay, and never into an error.
    private func authenticate(
        _ id: Int, username: String, password: String, offered: [String: [String]], _ mailbox: Mailbox<SMTPLoopMessage>
    ) async throws(SMTPError) {
        let mechanisms = Set((offered["AUTH"] ?? []).map { $0.uppercased() })
        let host = configuration.server.host
        func refused(_ reply: SMTPReply) -> SMTPError {
            reply.isTransient
                ? SMTPError(.refused(code: reply.code), "\(host) cannot check credentials now (\(reply.code))")
                : SMTPError(.authentication, "\(host) refused the credentials of \(username) (\(reply.code))")
        }
        func base64(_ text: String) -> String { Base64.encode(Array(text.utf8), padded: true) }
        if mechanisms.contains("PLAIN") {
            let reply = try await exchange(id, "AUTH PLAIN " + base64("\u{0}" + username + "\u{0}" + password), mailbox)
            guard reply.code == 235 else { throw refused(reply) }
        } else if mechanisms.contains("LOGIN") {
            for (line, code) in [("AUTH LOGIN", 334), (base64(username), 334), (base64(password), 235)] {
                let reply = try await exchange(id, line, mailbox)
                guard reply.code == code else { throw refused(reply) }
            }
        } else {
            throw SMTPError(.authentication, "\(host) offers neither AUTH PLAIN nor AUTH LOGIN")
        }
    }

    /// MAIL, RCPT, DATA and the message (RFC 5321 §3.3); `answered` once the server replied to
    /// MAIL FROM.
    private func transaction(
        _ message: MIMEMessage, _ data: [UInt8], on session: Session, answered: inout Bool, _ mailbox: Mailbox<SMTPLoopMessage>
    ) async throws(SMTPError) {
        let international = !data.allSatisfy { $0 < 0x80 } || !(message.from.address + message.to.address).utf8.allSatisfy { $0 < 0x80 }
        var mail = "MAIL FROM:<\(message.from.address)>"
        if international {
            guard session.extensions["SMTPUTF8"] != nil else {
                throw SMTPError(.unsupported, "\(configuration.server.host) does not offer SMTPUTF8, which this message's addresses need")
            }
            mail += " SMTPUTF8"
        }
        let accepted = try await exchange(session.id, mail, mailbox)
        answered = true
        try expect(250, accepted, after: "MAIL FROM")
        let recipient = try await exchange(session.id, "RCPT TO:<\(message.to.address)>", mailbox)
        guard recipient.code == 250 || recipient.code == 251 else { throw Self.refusal(recipient, after: "RCPT TO", host: configuration.server.host) }
        try expect(354, try await exchange(session.id, "DATA", mailbox), after: "DATA")
        try expect(250, try await exchange(session.id, data + Array(".\r\n".utf8), mailbox), after: "the message")
    }

    // MARK: Steps

    /// Writes `command` and CRLF (nothing when `nil`) and reads the reply.
    private func exchange(_ id: Int, _ command: String?, _ mailbox: Mailbox<SMTPLoopMessage>) async throws(SMTPError) -> SMTPReply {
        try await exchange(id, command.map { Array(($0 + "\r\n").utf8) } ?? [], mailbox)
    }

    private func exchange(_ id: Int, _ bytes: [UInt8], _ mailbox: Mailbox<SMTPLoopMessage>) async throws(SMTPError) -> SMTPReply {
        guard let reply = try await step(mailbox, { .exchange(id: id, bytes: bytes, deadline: $0, $1) }) else {
            throw SMTPError(.protocolViolation, "no reply")
        }
        return reply
    }

    /// Posts one step to the loop and waits for its outcome.
    private func step(
        _ mailbox: Mailbox<SMTPLoopMessage>, _ message: (UInt64, CheckedContinuation<SMTPStep, Never>) -> SMTPLoopMessage
    ) async throws(SMTPError) -> SMTPReply? {
        let deadline = Monotonic.nanoseconds() + UInt64(configuration.stepTimeout.milliseconds) * 1_000_000
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<SMTPStep, Never>) in
            if !mailbox.post(message(deadline, continuation)) {
                continuation.resume(returning: .failure(SMTPError(.connection, "the SMTP client has shut down")))
            }
        }
        return try outcome.get()
    }

    private func expect(_ code: Int, _ reply: SMTPReply, after what: String) throws(SMTPError) {
        guard reply.code == code else { throw Self.refusal(reply, after: what, host: configuration.server.host) }
    }

    /// The error for an unexpected reply: its code and first line (the server's words, which
    /// carry no secret of ours).
    private static func refusal(_ reply: SMTPReply, after what: String, host: String) -> SMTPError {
        let text = String((reply.lines.first ?? "").prefix(160))
        let kind: SMTPError.Kind = reply.isTransient || reply.isPermanent ? .refused(code: reply.code) : .protocolViolation
        return SMTPError(kind, "\(host) answered \(what) with \(reply.code) \(text)")
    }

    // MARK: Kept connections

    private func takeIdleSession(_ mailbox: Mailbox<SMTPLoopMessage>) -> Session? {
        let now = Monotonic.nanoseconds()
        let limit = UInt64(configuration.idleTimeout.milliseconds) * 1_000_000
        let (session, stale) = idle.withLock { sessions -> (Session?, [Session]) in
            let stale = sessions.filter { now &- $0.idleSince > limit }
            sessions.removeAll { now &- $0.idleSince > limit }
            return (sessions.popLast(), stale)
        }
        for old in stale { mailbox.post(.close(id: old.id)) }
        return session
    }

    private func keep(_ session: Session, _ mailbox: Mailbox<SMTPLoopMessage>) {
        var session = session
        session.idleSince = Monotonic.nanoseconds()
        let kept = idle.withLock { sessions in
            guard sessions.count < configuration.maximumIdleConnections else { return false }
            sessions.append(session)
            return true
        }
        if !kept { mailbox.post(.close(id: session.id)) }
    }

    private func startedLoop() throws(SMTPError) -> Mailbox<SMTPLoopMessage> {
        try loop.withLock { state throws(SMTPError) in
            if case .running(let mailbox) = state { return mailbox }
            Libevent.setUpThreads()
            let smtpLoop = try SMTPLoop(tls: tls)
            let mailbox = smtpLoop.mailbox
            nonisolated(unsafe) let owned = smtpLoop
            do {
                try DetachedThread.start { owned.run() }
            } catch {
                smtpLoop.discard()
                throw SMTPError(.connection, "the SMTP client's \(error)")
            }
            state = .running(mailbox)
            return mailbox
        }
    }

    /// RFC 5321 §4.5.2: a line that starts with a period gets one more, so that no line of the
    /// message reads as its end; the message ends with CRLF.
    static func dotStuffed(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var lineStart = true
        for byte in bytes {
            if lineStart && byte == UInt8(ascii: ".") { output.append(byte) }
            output.append(byte)
            lineStart = byte == 0x0A
        }
        if !output.isEmpty && output.suffix(2) != [0x0D, 0x0A] { output += [0x0D, 0x0A] }
        return output
    }
}
