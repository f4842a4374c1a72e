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
/// A crash between the commit and the delivery loses nothing. Due items are taken a few at a
/// time: claimed with a lease, compare-and-sets in one transaction (two processes never deliver
/// one item at once; PostgreSQL skips a row another instance is claiming), delivered
/// concurrently, and settled together in one transaction, each only while its claim holds:
/// deleted when delivered, or when it failed for good or past its give-up time, else scheduled
/// again after the sender's back-off. A crash after a delivery and before its settlement sends
/// that item again once the lease ends: at most ``parallelDeliveries`` items, at least once.
struct Outbox<Sender: OutboxSender>: Sendable {
    let database: any SQLDatabase
    let clock: @Sendable () -> Date
    let sender: Sender
    private let items = OutboxRepository()

    /// How long a claimed item is left alone by other processes.
    static var lease: TimeInterval { 60 }
    /// At most this many items per pass.
    static var batchSize: Int { 32 }
    /// Deliveries in progress at once (each on a connection of its own).
    static var parallelDeliveries: Int { 4 }

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
            for start in stride(from: 0, to: due.count, by: Self.parallelDeliveries) {
                delivered += try await attempt(Array(due[start..<min(start + Self.parallelDeliveries, due.count)]))
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

    /// Claims `group` in one transaction, delivers what it claimed concurrently (while one
    /// waits for the remote end, another is on its way), and settles it in one transaction.
    ///
    /// - Returns: How many were delivered.
    private func attempt(_ group: [OutboxItem]) async throws -> Int {
        let (items, sender) = (items, sender)
        let claimedAt = clock()
        let claimed = try await database.write { connection in
            try group.compactMap { item in
                try items.claim(id: item.id, dueAt: claimedAt, until: claimedAt.addingTimeInterval(Self.lease), on: connection).map { (item, $0) }
            }
        }
        let outcomes = await withTaskGroup(of: (OutboxItem, Date, OutboxAttempt).self) { tasks in
            for (item, claim) in claimed { tasks.addTask { (item, claim, await sender.deliver(item)) } }
            return await tasks.reduce(into: []) { $0.append($1) }
        }
        let finished = clock()
        let settled = try await database.write { connection in
            try outcomes.map { item, claim, attempt in try settle(item, claim: claim, attempt, at: finished, on: connection) }
        }
        var delivered = 0
        for ((item, _, attempt), dropped) in zip(outcomes, settled) {
            guard let dropped else {
                // The lease ran out during the delivery and another process owns the item now;
                // its delivery is harmless (revoking a revoked token, a message sent twice at worst).
                ServerLog.write(.warning, "outbox_lease_lost", time: finished, ["kind": .string(item.kind), "item": .string(item.id)])
                continue
            }
            sender.attempted(item, attempt, dropped: dropped)
            if case .delivered = attempt { delivered += 1 }
        }
        return delivered
    }

    /// Records what became of one attempt, only while `claim` holds.
    ///
    /// - Returns: Whether the item left the outbox without being delivered, or `nil` when the
    ///   claim no longer held.
    private func settle(_ item: OutboxItem, claim: Date, _ attempt: OutboxAttempt, at finished: Date, on connection: any SQLConnection) throws -> Bool? {
        let attempts = item.attempts + 1
        let dropped: Bool
        switch attempt {
        case .delivered: dropped = false
        case .refused: dropped = true
        case .deferred: dropped = finished >= item.giveUpAt
        }
        if case .deferred(let reason) = attempt, !dropped {
            let retryAt = finished.addingTimeInterval(sender.backoff(afterAttempts: attempts))
            return try items.release(id: item.id, claim: claim, retryAt: retryAt, error: String(reason.prefix(200)), on: connection) ? false : nil
        }
        guard try items.delete(id: item.id, claim: claim, on: connection) else { return nil }
        try sender.settle(item, attempt, attempts: attempts, at: finished, on: connection)
        return dropped
    }
}
