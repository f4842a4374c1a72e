import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// What one attempt to deliver an outbox item came to.
enum OutboxAttempt: Sendable {
    case delivered
    /// Worth another try later: a connection failure, an outage, a 4xx.
    case deferred(String)
    /// Never going to work (an SMTP 5xx): dropped at once.
    case refused(String)
}

/// Delivers one kind of outbox item: Apple revocations (``AppleRevocationOutbox``), mail
/// (``MailOutbox``).
protocol OutboxSender: Sendable {
    /// The `kind` of the items it sends.
    var kind: String { get }
    /// The wait before attempt `attempts + 1`.
    func backoff(afterAttempts attempts: Int) -> TimeInterval
    /// Tries once to deliver `item`.
    func deliver(_ item: OutboxItem) async -> OutboxAttempt
    /// Writes what became of an item that leaves the outbox (delivered, or dropped after
    /// `attempt` failed), in the transaction that deletes it: its audit entry.
    func settle(_ item: OutboxItem, _ attempt: OutboxAttempt, attempts: Int, at time: Date, on connection: any SQLConnection) throws
    /// Hears of every attempt once it is settled, for metrics; `dropped` when it left the outbox
    /// without being delivered.
    func attempted(_ item: OutboxItem, _ attempt: OutboxAttempt, dropped: Bool)
}

extension OutboxSender {
    func attempted(_ item: OutboxItem, _ attempt: OutboxAttempt, dropped: Bool) {}
}

/// The durable outbox for one kind of work: items written in the transaction that decided them
/// (``enqueue(id:payload:userID:label:giveUpAfter:now:on:)``), delivered by ``runDue()`` in
/// every process.
///
/// A crash between the commit and the delivery loses nothing. Each due item is claimed with a
/// lease, a compare-and-set in a transaction of its own (two processes never deliver one item at
/// once; PostgreSQL skips a row another instance is claiming), delivered, and settled only while
/// the claim holds: deleted when delivered, or when it failed for good or past its give-up time,
/// else scheduled again after the sender's back-off.
struct Outbox<Sender: OutboxSender>: Sendable {
    let database: any SQLDatabase
    let clock: @Sendable () -> Date
    let sender: Sender
    private let items = OutboxRepository()

    /// How long a claimed item is left alone by other processes.
    static var lease: TimeInterval { 60 }
    /// At most this many items per pass.
    static var batchSize: Int { 32 }

    init(database: any SQLDatabase, clock: @escaping @Sendable () -> Date, sender: Sender) {
        self.database = database
        self.clock = clock
        self.sender = sender
    }

    /// Queues an item inside the caller's transaction, due at once.
    ///
    /// - Parameters:
    ///   - payload: Sealed by the caller; deleted with the item once it is done.
    ///   - userID: Whose it is, for the audit entry (no foreign key: it may outlive the account).
    ///   - label: What it is, in words that are no secret (a client id, a mail purpose).
    ///   - giveUpAfter: How long failures are retried.
    func enqueue(
        id: String, payload: [UInt8], userID: String?, label: String?, giveUpAfter: TimeInterval, now: Date, on connection: any SQLConnection
    ) throws {
        try items.insert(
            OutboxItem(
                id: id, kind: sender.kind, payload: payload, userID: userID, label: label, createdAt: now, attempts: 0, nextAttemptAt: now,
                giveUpAt: now.addingTimeInterval(giveUpAfter), lastError: nil),
            on: connection)
    }

    /// Delivers every due item once, a batch at a time, until a batch comes back short.
    ///
    /// - Returns: How many were delivered.
    @discardableResult
    func runDue() async throws -> Int {
        let (items, kind) = (items, sender.kind)
        var delivered = 0
        while true {
            let now = clock()
            let due = try await database.read { try items.due(kind: kind, at: now, limit: Self.batchSize, on: $0) }
            for item in due {
                if try await attempt(item) { delivered += 1 }
            }
            // An item that failed is due later and one another process holds is not due, so
            // each batch holds new items: a full one means more may wait.
            if due.count < Self.batchSize { return delivered }
        }
    }

    /// How many items of this kind wait: for everyone's, or one user's.
    func pending(userID: String? = nil) async throws -> Int {
        let (items, kind) = (items, sender.kind)
        return try await database.read { try items.count(kind: kind, userID: userID, on: $0) }
    }

    /// Claims, delivers and settles one item; whether it was delivered.
    private func attempt(_ item: OutboxItem) async throws -> Bool {
        let (items, sender) = (items, sender)
        let claimedAt = clock()
        let claim = try await database.write { try items.claim(id: item.id, dueAt: claimedAt, until: claimedAt.addingTimeInterval(Self.lease), on: $0) }
        guard let claim else { return false }
        let attempt = await sender.deliver(item)
        let finished = clock()
        let attempts = item.attempts + 1
        let dropped: Bool
        switch attempt {
        case .delivered: dropped = false
        case .refused: dropped = true
        case .deferred: dropped = finished >= item.giveUpAt
        }
        let settled = try await database.write { connection -> Bool in
            if case .deferred(let reason) = attempt, !dropped {
                return try items.release(
                    id: item.id, claim: claim, retryAt: finished.addingTimeInterval(sender.backoff(afterAttempts: attempts)),
                    error: String(reason.prefix(200)), on: connection)
            }
            guard try items.delete(id: item.id, claim: claim, on: connection) else { return false }
            try sender.settle(item, attempt, attempts: attempts, at: finished, on: connection)
            return true
        }
        guard settled else {
            // The lease ran out during the delivery and another process owns the item now; its
            // delivery is harmless (revoking a revoked token, a message sent twice at worst).
            ServerLog.write(.warning, "outbox_lease_lost", time: finished, ["kind": .string(item.kind), "item": .string(item.id)])
            return false
        }
        sender.attempted(item, attempt, dropped: dropped)
        if case .delivered = attempt { return true }
        return false
    }
}
