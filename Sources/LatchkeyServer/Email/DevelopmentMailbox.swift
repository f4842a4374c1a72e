import FoundationEssentials
import LatchkeyMail
import Synchronization

/// Where mail goes in development mode: kept in memory and shown at `GET /sandbox/mail` and
/// `/sandbox/mail.json`, so `make run` and `latchkey demo` show the whole story without an SMTP
/// server. It keeps the newest ``capacity`` messages.
final class DevelopmentMailbox: MailTransport {
    /// A delivered message and when it arrived.
    struct Delivered: Sendable {
        var id: Int
        var receivedAt: Date
        var from: String
        var message: MailMessage
        /// The RFC 5322 message, as SMTP would carry it.
        var mime: MIMEMessage
        var raw: String
    }

    static let capacity = 200
    private let state = Mutex((next: 1, messages: [Delivered]()))
    private let clock: @Sendable () -> Date

    init(clock: @escaping @Sendable () -> Date) {
        self.clock = clock
    }

    func send(_ message: MailMessage, from sender: String) async throws(MailDeliveryFailure) {
        let now = clock()
        guard let mime = MIMEMessage(message, from: sender, date: now) else {
            throw MailDeliveryFailure(permanent: true, reason: "the sender or the recipient is not an address")
        }
        let raw = mime.rendered()
        state.withLock { state in
            state.messages.append(Delivered(id: state.next, receivedAt: now, from: sender, message: message, mime: mime, raw: raw))
            state.next += 1
            if state.messages.count > Self.capacity { state.messages.removeFirst(state.messages.count - Self.capacity) }
        }
    }

    /// The messages held, newest first.
    var messages: [Delivered] { state.withLock { $0.messages.reversed() } }
}
