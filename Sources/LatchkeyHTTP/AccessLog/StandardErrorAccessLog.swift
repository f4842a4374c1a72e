import Foundation
import Glibc
import Synchronization

/// An access log that writes JSON lines to standard error.
///
/// `record` only appends to a buffer under a lock; a background thread writes the buffer every
/// `flushInterval`, so an event loop never waits on a slow terminal or pipe. When the buffer is
/// over `maxBufferedBytes` (standard error is stuck), lines are dropped and counted rather than
/// blocking or growing without bound, and the next write says how many were lost.
public final class StandardErrorAccessLog: AccessLogSink {
    private final class Shared: Sendable {
        struct Buffer {
            var bytes: [UInt8] = []
            var dropped = 0
            var stopped = false
        }

        let buffer = Mutex(Buffer())
        let maxBufferedBytes: Int
        let fileDescriptor: Int32

        init(maxBufferedBytes: Int, fileDescriptor: Int32) {
            self.maxBufferedBytes = maxBufferedBytes
            self.fileDescriptor = fileDescriptor
        }

        func flush() {
            let (bytes, dropped) = buffer.withLock { state in
                let taken = (state.bytes, state.dropped)
                state.bytes = []
                state.dropped = 0
                return taken
            }
            var output = bytes
            if dropped > 0 {
                output.append(contentsOf: "{\"access_log_dropped_lines\":\(dropped)}\n".utf8)
            }
            output.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    private let shared: Shared

    /// Creates the log and starts its writer thread.
    ///
    /// - Parameters:
    ///   - flushInterval: How long a line may wait in the buffer.
    ///   - maxBufferedBytes: Beyond this, new lines are dropped and counted.
    public convenience init(flushInterval: Duration = .milliseconds(100), maxBufferedBytes: Int = 8 << 20) {
        self.init(flushInterval: flushInterval, maxBufferedBytes: maxBufferedBytes, fileDescriptor: STDERR_FILENO)
    }

    /// Creates a log that writes to `fileDescriptor` instead of standard error (a pipe, a file).
    ///
    /// - Parameters:
    ///   - flushInterval: How long a line may wait in the buffer.
    ///   - maxBufferedBytes: Beyond this, new lines are dropped and counted.
    ///   - fileDescriptor: Written to, never closed.
    public init(flushInterval: Duration = .milliseconds(100), maxBufferedBytes: Int = 8 << 20, fileDescriptor: Int32) {
        let shared = Shared(maxBufferedBytes: maxBufferedBytes, fileDescriptor: fileDescriptor)
        self.shared = shared
        let (seconds, attoseconds) = flushInterval.components
        let microseconds = UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        Thread.detachNewThread {
            while true {
                usleep(max(microseconds, 1000))
                let stopped = shared.buffer.withLock { $0.stopped }
                shared.flush()
                if stopped { return }
            }
        }
    }

    deinit {
        shared.buffer.withLock { $0.stopped = true }
    }

    public func record(_ entry: AccessLogEntry) {
        let line = entry.jsonLine
        shared.buffer.withLock { state in
            guard state.bytes.count + line.utf8.count < shared.maxBufferedBytes else {
                state.dropped += 1
                return
            }
            state.bytes.append(contentsOf: line.utf8)
            state.bytes.append(0x0A)
        }
    }

    /// Writes what is buffered now, on the calling thread (which may block on standard error).
    public func flush() {
        shared.flush()
    }
}
