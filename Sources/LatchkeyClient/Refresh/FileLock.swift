import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An exclusive `flock(2)` on a file, shared by processes that open the same path.
///
/// Taking it polls with `LOCK_NB` and sleeps between tries, so a waiting task never blocks a
/// thread of the cooperative pool. The kernel releases the lock if the holder dies.
final class FileLock {
    private var descriptor: Int32

    /// Opens `url` (creating it, mode 0600) and waits until the lock is ours.
    ///
    /// - Throws: ``LatchkeyError/Code/storage`` when the file cannot be opened;
    ///   ``LatchkeyError/Code/canceled`` when the task is canceled while waiting.
    init(url: URL, pollInterval: Duration = .milliseconds(2)) async throws {
        let descriptor = open(url.path, O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw LatchkeyError(.storage, "the refresh lock file cannot be opened (errno \(errno))") }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                throw LatchkeyError(.storage, "the refresh lock cannot be taken (errno \(errno))")
            }
            do {
                try await Task.sleep(for: pollInterval)
            } catch {
                close(descriptor)
                throw LatchkeyError(.canceled, "canceled while waiting for the refresh lock")
            }
        }
        self.descriptor = descriptor
    }

    /// Releases the lock; later calls do nothing.
    func unlock() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        unlock()
    }
}
