import FoundationEssentials
import Glibc
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// Mail waiting in the outbox (kind `mail`): written in the transaction that creates the flow,
/// sent by ``runDue()``.
///
/// A crash between the commit and the send loses nothing; each message is claimed by one sender
/// at a time (the outbox's lease), sent, and deleted only while its claim holds. A transient
/// failure (a 4xx, a connection that fails) is retried from 10 seconds, doubling to at most 10
/// minutes, for 24 hours; a permanent one (5xx) and one still failing after 24 hours are dropped
/// and audited `email.bounced`. The message sits sealed under the master key and is gone once sent.
final class MailOutbox: Sendable {
    private let dependencies: Dependencies
    private let masterKey: MasterKey
    private let transport: any MailTransport
    private let sender: String
    private let items = OutboxRepository()
    /// The messages waiting, as the last pass counted them: the `latchkey_queue_depth{queue="mail"}` gauge.
    private let depth = Atomic<Int>(0)

    static let kind = "mail"
    /// How long a claimed message is left alone by other processes.
    static let lease: TimeInterval = 60
    /// How long a message is retried.
    static let retention: TimeInterval = 86_400
    static let batchSize = 32

    init(dependencies: Dependencies, masterKey: MasterKey, transport: any MailTransport, sender: String) {
        self.dependencies = dependencies
        self.masterKey = masterKey
        self.transport = transport
        self.sender = sender
    }

    /// Shows the queue depth in `/metrics`; once, when the server opens.
    func showDepth() {
        dependencies.metrics.gauge(.queueDepth, ["queue": "mail"]) { Double(self.depth.load(ordering: .relaxed)) }
    }

    /// The wait before attempt `attempts + 1`.
    static func backoff(afterAttempts attempts: Int) -> TimeInterval {
        min(10 * pow(2, Double(max(attempts - 1, 0))), 600)
    }

    /// Queues `message` inside the caller's transaction, due at once.
    func enqueue(_ message: MailMessage, now: Date, on connection: any SQLConnection) throws {
        let id = Identifiers.make("out")
        try items.insert(
            OutboxItem(
                id: id, kind: Self.kind, payload: try masterKey.seal(message.json.serialized, context: Self.context(id)), createdAt: now,
                attempts: 0, nextAttemptAt: now, giveUpAt: now.addingTimeInterval(Self.retention), lastError: nil),
            on: connection)
    }

    private static func context(_ id: String) -> String { "outbox.mail:" + id }

    /// Sends every due message once.
    ///
    /// - Returns: How many were delivered.
    @discardableResult
    func runDue() async throws -> Int {
        let clock = dependencies.clock
        let items = items
        let due = try await dependencies.database.read { try items.due(kind: Self.kind, at: clock(), limit: Self.batchSize, on: $0) }
        var delivered = 0
        for item in due {
            if try await send(item) { delivered += 1 }
        }
        depth.store(try await dependencies.database.read { try items.count(kind: Self.kind, on: $0) }, ordering: .relaxed)
        return delivered
    }

    /// Claims, sends and settles one message; whether it was delivered.
    private func send(_ item: OutboxItem) async throws -> Bool {
        let clock = dependencies.clock
        let items = items
        let claimedAt = clock()
        guard let claim = try await dependencies.database.write({ try items.claim(id: item.id, dueAt: claimedAt, until: claimedAt.addingTimeInterval(Self.lease), on: $0) })
        else { return false }
        var failure: MailDeliveryFailure?
        var purpose = "unknown"
        do {
            let message = try MailMessage(json: try JSONValue(parsing: try masterKey.unseal(item.payload, context: Self.context(item.id))))
            purpose = message.purpose
            try await transport.send(message, from: sender)
        } catch let error as MailDeliveryFailure {
            failure = error
        } catch {
            failure = MailDeliveryFailure(permanent: true, reason: "the sealed message cannot be opened")
        }
        let finished = clock()
        let attempts = item.attempts + 1
        let dropped = failure.map { $0.permanent || finished >= item.giveUpAt } ?? false
        let outcome = failure == nil ? "sent" : dropped ? "bounced" : "deferred"
        let settled = try await dependencies.database.write { [failure, purpose] connection -> Bool in
            if let failure, !dropped {
                return try items.release(
                    id: item.id, claim: claim, retryAt: finished.addingTimeInterval(Self.backoff(afterAttempts: attempts)),
                    error: String(failure.reason.prefix(200)), on: connection)
            }
            guard try items.delete(id: item.id, claim: claim, on: connection) else { return false }
            if let failure {
                try self.dependencies.audit.record(
                    .init(time: finished, userID: nil, event: .emailBounced, outcome: .failure,
                          details: ["purpose": purpose, "attempts": String(attempts), "reason": String(failure.reason.prefix(200))]),
                    on: connection)
            }
            return true
        }
        if !settled {
            // The lease ran out during the send and another process owns the message now.
            ServerLog.write(.warning, "mail_outbox_lease_lost", time: finished, ["item": .string(item.id)])
        }
        dependencies.metrics.increment(.emailMessages, ["purpose": purpose, "outcome": outcome])
        return failure == nil && settled
    }
}
