import FoundationEssentials
import Glibc
import LatchkeyBasics
import LatchkeyHTTP
import LatchkeyLibevent
import Synchronization

/// An access log that writes JSON lines to standard error.
///
/// `record` only appends the entry to a queue under a lock; a background thread formats the
/// queued entries and writes them every `flushInterval`, so an event loop neither formats JSON
/// nor waits on a slow terminal or pipe. When `maxBufferedEntries` are waiting (standard error is
/// stuck), entries are dropped and counted rather than blocking or growing without bound, and the
/// next write says how many were lost.
package final class StandardErrorAccessLog: AccessLogSink {
    private final class Shared: Sendable {
        struct Buffer {
            var entries: [AccessLogEntry] = []
            var dropped = 0
            var stopped = false
        }

        let buffer = Mutex(Buffer())
        /// Held while taking and writing a batch, so that two flushes keep lines whole and in order.
        let writing = Mutex(())
        let maxBufferedEntries: Int
        let fileDescriptor: Int32

        init(maxBufferedEntries: Int, fileDescriptor: Int32) {
            self.maxBufferedEntries = maxBufferedEntries
            self.fileDescriptor = fileDescriptor
        }

        func flush() {
            writing.withLock { _ in flushLocked() }
        }

        private func flushLocked() {
            let (entries, dropped) = buffer.withLock { state in
                let taken = (state.entries, state.dropped)
                state.entries = []
                state.dropped = 0
                return taken
            }
            var output = [UInt8]()
            output.reserveCapacity(entries.count * 256)
            for entry in entries {
                entry.writeJSONLine(into: &output)
                output.append(0x0A)
            }
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
    ///   - maxBufferedEntries: Beyond this, new entries are dropped and counted.
    /// - Throws: ``DetachedThread/Failure`` when the system cannot make the thread.
    package convenience init(flushInterval: Duration = .milliseconds(50), maxBufferedEntries: Int = 4_096) throws {
        try self.init(flushInterval: flushInterval, maxBufferedEntries: maxBufferedEntries, fileDescriptor: STDERR_FILENO)
    }

    /// Creates a log that writes to `fileDescriptor` instead of standard error (a pipe, a file).
    ///
    /// - Parameters:
    ///   - flushInterval: How long a line may wait in the buffer.
    ///   - maxBufferedEntries: Beyond this, new entries are dropped and counted.
    ///   - fileDescriptor: Written to, never closed.
    /// - Throws: ``DetachedThread/Failure`` when the system cannot make the thread.
    package init(flushInterval: Duration = .milliseconds(50), maxBufferedEntries: Int = 4_096, fileDescriptor: Int32) throws {
        let shared = Shared(maxBufferedEntries: maxBufferedEntries, fileDescriptor: fileDescriptor)
        self.shared = shared
        let (seconds, attoseconds) = flushInterval.components
        let microseconds = UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        try DetachedThread.start {
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

    package func record(_ entry: AccessLogEntry) {
        shared.buffer.withLock { state in
            guard state.entries.count < shared.maxBufferedEntries else {
                state.dropped += 1
                return
            }
            state.entries.append(entry)
        }
    }

    /// Writes what is buffered now, on the calling thread (which may block on standard error, and
    /// gets SIGPIPE if nothing reads it any more, unless the process ignores that signal), after
    /// any batch the writer thread is writing.
    package func flush() {
        shared.flush()
    }
}
