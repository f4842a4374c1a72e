#if canImport(Glibc)
private import Glibc
#elseif canImport(Musl)
private import Musl
#elseif canImport(Darwin)
private import Darwin
#endif

/// Operating-system calls the standard library does not offer synchronously.
enum Platform {
    /// Blocks the calling thread; only for waiting on another process's lock, on the store's
    /// own threads.
    ///
    /// - Parameter microseconds: How long to sleep.
    static func sleep(microseconds: UInt32) {
        usleep(microseconds)
    }
}
