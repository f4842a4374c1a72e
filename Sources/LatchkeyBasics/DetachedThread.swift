import Glibc

/// Starts a detached POSIX thread that runs `body` once: for the long-lived workers (the
/// access-log writer, the Argon2id pool, the outbound client's loop) that must not hold a
/// thread of the task pool.
package enum DetachedThread {
    /// Why no thread was started.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts the thread, with SIGPIPE blocked in it: a write to a pipe or socket whose reader is
    /// gone then fails with EPIPE instead of ending the process (libevent's writev and OpenSSL's
    /// write do not pass MSG_NOSIGNAL, and the CLI does not ignore the signal).
    ///
    /// - Throws: ``Failure`` when the system cannot make a thread.
    package static func start(_ body: @escaping @Sendable () -> Void) throws(Failure) {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let argument = Unmanaged.passRetained(Work(body)).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { argument in
                var signals = sigset_t()
                sigemptyset(&signals)
                sigaddset(&signals, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &signals, nil)
                Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, argument)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(argument).release()
            throw Failure(description: "cannot start a thread: \(String(cString: strerror(status)))")
        }
        pthread_detach(thread)
    }
}
