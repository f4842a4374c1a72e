import FoundationEssentials
import Glibc
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// Mail waiting to be sent: items of kind `mail` in the ``Outbox``, queued in the transaction
/// that creates the flow.
///
/// A transient failure (a 4xx, a connection that fails) is retried from 10 seconds, doubling to
/// at most 10 minutes, for 24 hours; a permanent one (5xx) and one still failing after 24 hours
/// are dropped and audited `email.bounced`. The message sits sealed under the master key and is
/// deleted once sent.
final class MailOutbox: Sendable {
    private let outbox: Outbox<Sender>
    private let masterKey: MasterKey
    private let metrics: Metrics
    /// The messages waiting, as the last pass counted them: `latchkey_queue_depth{queue="mail"}`.
    private let depth = Atomic<Int>(0)

    /// How long a message is retried.
    static let retention: TimeInterval = 86_400

    init(dependencies: Dependencies, masterKey: MasterKey, transport: any MailTransport, sender: String) {
        self.masterKey = masterKey
        self.metrics = dependencies.metrics
        self.outbox = Outbox(
            database: dependencies.database, clock: dependencies.clock,
            sender: Sender(transport: transport, from: sender, masterKey: masterKey, audit: dependencies.audit, metrics: dependencies.metrics))
    }

    /// Shows the queue depth in `/metrics`; once, when the server opens.
    func showDepth() {
        metrics.gauge(.queueDepth, ["queue": "mail"]) { Double(self.depth.load(ordering: .relaxed)) }
    }

    /// Queues `message` inside the caller's transaction, due at once.
    func enqueue(_ message: MailMessage, now: Date, on connection: any SQLConnection) throws {
        let id = Identifiers.make("out")
        try outbox.enqueue(
            id: id, payload: try masterKey.seal(message.json.serialized, context: Sender.context(id)), userID: nil, label: message.purpose,
            giveUpAfter: Self.retention, now: now, on: connection)
    }

    /// Sends every due message once.
    ///
    /// - Returns: How many were delivered.
    @discardableResult
    func runDue() async throws -> Int {
        let delivered = try await outbox.runDue()
        depth.store(try await outbox.pending(), ordering: .relaxed)
        return delivered
    }

    struct Sender: OutboxSender {
        let transport: any MailTransport
        let from: String
        let masterKey: MasterKey
        let audit: AuditLog
        let metrics: Metrics

        var kind: String { "mail" }

        static func context(_ id: String) -> String { "outbox.mail:" + id }

        func backoff(afterAttempts attempts: Int) -> TimeInterval {
            min(10 * pow(2, Double(max(attempts - 1, 0))), 600)
        }

        func deliver(_ item: OutboxItem) async -> OutboxAttempt {
            let message: MailMessage
            do {
                message = try MailMessage(json: try JSONValue(parsing: try masterKey.unseal(item.payload, context: Self.context(item.id))))
            } catch {
                return .refused("the sealed message cannot be opened")
            }
            do {
                try await transport.send(message, from: from)
                return .delivered
            } catch {
                return error.permanent ? .refused(error.reason) : .deferred(error.reason)
            }
        }

        func settle(_ item: OutboxItem, _ attempt: OutboxAttempt, attempts: Int, at time: Date, on connection: any SQLConnection) throws {
            let reason: String
            switch attempt {
            case .delivered: return
            case .deferred(let text), .refused(let text): reason = text
            }
            try audit.record(
                .init(time: time, userID: nil, event: .emailBounced, outcome: .failure,
                      details: ["purpose": item.label ?? "", "attempts": String(attempts), "reason": String(reason.prefix(200))]),
                on: connection)
        }

        func attempted(_ item: OutboxItem, _ attempt: OutboxAttempt, dropped: Bool) {
            let outcome = if case .delivered = attempt { "sent" } else if dropped { "bounced" } else { "deferred" }
            metrics.increment(.emailMessages, ["purpose": item.label ?? "unknown", "outcome": outcome])
        }
    }
}
