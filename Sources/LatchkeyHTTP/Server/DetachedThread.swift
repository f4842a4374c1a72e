import Glibc

/// Starts a detached POSIX thread that runs `body` once: for the long-lived workers (the
/// access-log writer, the Argon2id pool) that must not hold a thread of the task pool.
public enum DetachedThread {
    /// Starts the thread; stops the process if the system cannot make one, as a server
    /// without its workers cannot run.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let argument = Unmanaged.passRetained(Work(body)).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, argument)
        guard status == 0 else {
            fatalError("cannot start a thread: \(String(cString: strerror(status)))")
        }
        pthread_detach(thread)
    }
}
