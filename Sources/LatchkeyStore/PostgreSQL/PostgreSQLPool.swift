internal import Dispatch
import Synchronization

/// A fixed number of ``PostgreSQLSlot``s and the callers waiting for one.
///
/// A caller takes a free slot at once, or waits in arrival order for one to come back. The
/// wait is bounded twice (STYLE §6): past ``PostgreSQLDatabase/Configuration/waitTimeout`` it
/// fails with ``StoreError/Code/busy``, and with ``PostgreSQLDatabase/Configuration/queueLimit``
/// callers already waiting it fails at once, so an overloaded database is answered with 503
/// rather than with a backlog that grows without end.
final class PostgreSQLPool: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<PostgreSQLSlot, any Error>
    }

    private struct State {
        var idle: [PostgreSQLSlot]
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var closed = false
    }

    let slots: [PostgreSQLSlot]
    private let state: Mutex<State>
    private let queueLimit: Int

    init(size: Int, queueLimit: Int, connector: PostgreSQLConnector) {
        let slots = (0..<size).map { PostgreSQLSlot(index: $0, connector: connector) }
        self.slots = slots
        // Popped from the end: slot 0 first, so a lightly loaded pool keeps using few connections.
        self.state = Mutex(State(idle: slots.reversed()))
        self.queueLimit = queueLimit
    }

    /// Callers waiting for a slot now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Slots free now.
    var idle: Int { state.withLock { $0.idle.count } }

    /// Runs `job` on a free slot's connection, waiting up to `timeout` for one.
    ///
    /// - Throws: What `job` throws; ``StoreError/Code/busy`` when no slot came free in time or
    ///   too many callers wait already; ``StoreError/Code/closed`` after ``close()``.
    func run<T: Sendable>(timeout: Duration, _ job: @escaping @Sendable (PostgreSQLConnection) throws -> T) async throws -> T {
        let slot = try await acquire(timeout: timeout)
        defer { release(slot) }
        return try await slot.run(job)
    }

    private func acquire(timeout: Duration) async throws -> PostgreSQLSlot {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<PostgreSQLSlot, any Error>? = state.withLock { state in
                if state.closed { return .failure(StoreError.closed("the database is closed")) }
                if let slot = state.idle.popLast() { return .success(slot) }
                guard state.waiters.count < queueLimit else {
                    return .failure(StoreError.busy("every PostgreSQL connection is in use and \(queueLimit) callers wait already"))
                }
                state.nextID += 1
                let id = state.nextID
                state.waiters.append(Waiter(id: id, continuation: continuation))
                let (seconds, attoseconds) = timeout.components
                let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                    expire(id, after: timeout)
                }
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private func expire(_ id: UInt64, after timeout: Duration) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(
            throwing: StoreError.busy("no PostgreSQL connection came free within \(timeout) (pool of \(slots.count))"))
    }

    private func release(_ slot: PostgreSQLSlot) {
        let waiter: Waiter? = state.withLock { state in
            guard !state.waiters.isEmpty else {
                state.idle.append(slot)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: slot)
    }

    /// Refuses new callers, fails those still waiting, then closes every slot after its
    /// running job.
    func close() async {
        let waiters: [Waiter] = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: StoreError.closed("the database is closed"))
        }
        for slot in slots {
            await slot.close()
        }
    }
}
