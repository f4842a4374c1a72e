internal import Dispatch
import Synchronization

/// A fixed number of ``PostgreSQLSlot``s and the jobs waiting for one.
///
/// A job starts on a free slot at once, or waits in arrival order: a slot that finishes a job
/// takes the next waiting one on its own thread, so under load a job costs one hand-over to a
/// slot and one back to its caller, never a round through the caller's threads in between. The
/// wait is bounded twice (STYLE §6): past ``PostgreSQLDatabase/Configuration/waitTimeout`` a job
/// fails with ``StoreError/Code/busy``, and with ``PostgreSQLDatabase/Configuration/queueLimit``
/// jobs already waiting it fails at once, so an overloaded database is answered with 503 rather
/// than with a backlog that grows without end. One timer at a time checks the waiting jobs'
/// deadlines, not one per job.
final class PostgreSQLPool: Sendable {
    /// A job bound to its caller's continuation: run it on a slot, or fail it.
    private struct Waiter {
        var deadline: ContinuousClock.Instant
        var timeout: Duration
        /// Runs the job and returns what answers the caller, called once the slot is handed on.
        var run: @Sendable (PostgreSQLSlot) -> @Sendable () -> Void
        var fail: @Sendable (any Error) -> Void
    }

    /// What a new job does: start on a free slot, fail, or wait (scheduling a check of the
    /// deadlines when it is the earliest).
    private enum Start {
        case slot(PostgreSQLSlot)
        case failure(StoreError)
        case queued(sweep: Duration?)
    }

    private struct State {
        var idle: [PostgreSQLSlot]
        var waiters: [Waiter] = []
        /// When the next check of the waiters' deadlines runs, if one is scheduled.
        var sweepAt: ContinuousClock.Instant?
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

    /// Jobs waiting for a slot now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Slots free now.
    var idle: Int { state.withLock { $0.idle.count } }

    /// Runs `job` on a free slot's connection, waiting up to `timeout` for one.
    ///
    /// - Throws: What `job` throws; ``StoreError/Code/busy`` when no slot came free in time or
    ///   too many jobs wait already; ``StoreError/Code/closed`` after ``close()``.
    func run<T: Sendable>(timeout: Duration, _ job: @escaping @Sendable (PostgreSQLConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let waiter = Waiter(
                deadline: .now + timeout, timeout: timeout,
                run: { slot in
                    let result = Result { try slot.runHere(job) }
                    return { continuation.resume(with: result) }
                },
                fail: { continuation.resume(throwing: $0) })
            let start: Start = state.withLock { state in
                if state.closed { return .failure(StoreError.closed("the database is closed")) }
                if let slot = state.idle.popLast() { return .slot(slot) }
                guard state.waiters.count < queueLimit else {
                    return .failure(StoreError.busy("every PostgreSQL connection is in use and \(queueLimit) jobs wait already"))
                }
                state.waiters.append(waiter)
                guard state.sweepAt.map({ waiter.deadline < $0 }) ?? true else { return .queued(sweep: nil) }
                state.sweepAt = waiter.deadline
                return .queued(sweep: timeout)
            }
            switch start {
            case .slot(let slot): slot.queue.async { self.serve(on: slot, first: waiter) }
            case .failure(let error): continuation.resume(throwing: error)
            case .queued(let sweep): if let sweep { scheduleSweep(after: sweep) }
            }
        }
    }

    /// Runs `first` on the slot's queue, then every job that waits when it ends, until none
    /// does and the slot goes back to the idle ones; each caller hears after the slot was handed
    /// on, so a caller that has its answer finds the slot free.
    private func serve(on slot: PostgreSQLSlot, first: Waiter) {
        var waiter = first
        while true {
            let answer = waiter.run(slot)
            let next: Waiter? = state.withLock { state in
                guard !state.waiters.isEmpty else {
                    state.idle.append(slot)
                    return nil
                }
                return state.waiters.removeFirst()
            }
            answer()
            guard let next else { return }
            waiter = next
        }
    }

    private func scheduleSweep(after delay: Duration) {
        DispatchQueue.global().asyncAfter(deadline: .now() + DispatchTimeInterval(delay)) { [self] in sweep() }
    }

    /// Fails the jobs whose wait is over, and schedules the next check for the earliest
    /// deadline left, unless an earlier check is scheduled already.
    private func sweep() {
        let now = ContinuousClock.now
        let (expired, next): ([Waiter], Duration?) = state.withLock { state in
            let expired = state.waiters.filter { $0.deadline <= now }
            state.waiters.removeAll { $0.deadline <= now }
            guard let earliest = state.waiters.map(\.deadline).min() else {
                state.sweepAt = nil
                return (expired, nil)
            }
            guard state.sweepAt.map({ $0 <= now || earliest < $0 }) ?? true else { return (expired, nil) }
            state.sweepAt = earliest
            return (expired, earliest - now)
        }
        for waiter in expired {
            waiter.fail(StoreError.busy("no PostgreSQL connection came free within \(waiter.timeout) (pool of \(slots.count))"))
        }
        if let next { scheduleSweep(after: next) }
    }

    /// Refuses new jobs, fails those still waiting, then closes every slot after its running
    /// job.
    func close() async {
        let waiters: [Waiter] = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters {
            waiter.fail(StoreError.closed("the database is closed"))
        }
        for slot in slots {
            await slot.close()
        }
    }
}
