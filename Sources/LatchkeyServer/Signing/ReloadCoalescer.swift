import Synchronization

/// Runs a reload at most one at a time: a request while one runs asks for exactly one more
/// after it, however many requests arrive meanwhile. A change feed may fire far more often
/// than a reload is worth (SQLite fires on every commit to the file).
final class ReloadCoalescer: Sendable {
    private enum Phase { case idle, running, runningAndRequested }

    private let phase = Mutex(Phase.idle)

    /// Runs `reload` in a task now when none runs, else once more after the running one.
    ///
    /// - Parameter reload: The reload; the same work each time.
    func request(_ reload: @escaping @Sendable () async -> Void) {
        let start = phase.withLock { phase -> Bool in
            switch phase {
            case .idle:
                phase = .running
                return true
            case .running, .runningAndRequested:
                phase = .runningAndRequested
                return false
            }
        }
        guard start else { return }
        Task {
            while true {
                await reload()
                let again = phase.withLock { phase -> Bool in
                    if phase == .runningAndRequested {
                        phase = .running
                        return true
                    }
                    phase = .idle
                    return false
                }
                if !again { return }
            }
        }
    }
}
