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

extension Duration {
    /// The duration in whole milliseconds, clamped to `Int32`, for C APIs.
    var clampedMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return seconds < 0 ? 0 : .max }
        return Int32(clamping: max(0, milliseconds.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
