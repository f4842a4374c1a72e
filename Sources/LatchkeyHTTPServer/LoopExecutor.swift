import LatchkeyLibevent

/// Runs the jobs of request tasks on their loop's thread.
///
/// A request task prefers this executor (`Task(executorPreference:)`), so its handler starts on
/// the thread that read the request and comes back to it after every `await`: a database call
/// costs one hand-over to the database thread and one back, not a trip through the task pool on
/// each side as well. The loop runs jobs between its socket events; nothing a handler awaits
/// blocks, and the work that does (Argon2id) has its own threads.
///
/// Once the loop has stopped, jobs go to the global executor, so a task still in flight at
/// shutdown (a transaction, say) runs to its end.
final class LoopExecutor: TaskExecutor {
    private let mailbox: Mailbox<LoopMessage>

    init(mailbox: Mailbox<LoopMessage>) {
        self.mailbox = mailbox
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !mailbox.post(.job(job)) { Self.runElsewhere(job) }
    }

    /// Runs `job` on the calling thread, the loop's.
    func run(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }

    /// Hands a job the loop will not run to the global executor.
    static func runElsewhere(_ job: UnownedJob) {
        globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }
}
