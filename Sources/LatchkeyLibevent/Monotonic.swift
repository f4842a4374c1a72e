import Glibc

/// Milliseconds and nanoseconds of `CLOCK_MONOTONIC`.
package enum Monotonic {
    /// Coarse (a few milliseconds), for deadlines; a vDSO read, no syscall.
    package static func milliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }

    package static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole milliseconds, for libevent's timers and the loops' deadlines.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
