import Synchronization

/// Runs a reload at most one at a time: a request while one runs asks for exactly one more
/// after it, however many requests arrive meanwhile. A change feed may fire far more often
/// than a reload is worth (SQLite fires on every commit to the file).
final class ReloadCoalescer: Sendable {
    private enum Phase { case idle, running, runningAndRequested, stopped }

    private struct State {
        var phase = Phase.idle
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// Runs `reload` in a task now when none runs, else once more after the running one;
    /// nothing after ``stop()``.
    ///
    /// - Parameter reload: The reload; the same work each time.
    func request(_ reload: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            switch state.phase {
            case .stopped: return
            case .running, .runningAndRequested:
                state.phase = .runningAndRequested
                return
            case .idle:
                state.phase = .running
                state.task = Task { [self] in
                    while true {
                        await reload()
                        let again = self.state.withLock { state -> Bool in
                            guard state.phase == .runningAndRequested else {
                                if state.phase == .running { state.phase = .idle }
                                return false
                            }
                            state.phase = .running
                            return true
                        }
                        if !again || Task.isCancelled { return }
                    }
                }
            }
        }
    }

    /// Cancels the running reload, so a shutdown does not log it failing on the closed
    /// database, and refuses later requests.
    func stop() {
        state.withLock { state in
            state.phase = .stopped
            state.task?.cancel()
            state.task = nil
        }
    }
}
