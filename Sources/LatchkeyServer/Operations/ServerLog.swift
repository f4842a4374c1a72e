import FoundationEssentials
import Glibc
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// Where the server reports what an operator should see that is not a request: a key in Apple's
/// JWK Set that it skipped (S30), storage that stopped taking writes and came back. One JSON
/// line per event on standard error, next to the access log.
///
/// Events are rare by design, so each line is written at once with one `write(2)`, which keeps it
/// whole among access-log lines. Fields never hold a token, key, password or code (S26).
enum ServerLog {
    enum Level: String { case info, warning, error }

    /// Writes `{"event": …, "level": …, "time": …}` with `fields` besides.
    static func write(_ level: Level, _ event: String, time: Date = Date(), _ fields: [String: JSONValue] = [:]) {
        var members = fields
        members["event"] = .string(event)
        members["level"] = .string(level.rawValue)
        members["time"] = .string(time.formatted(.iso8601))
        let line = JSONValue.object(members).serialized + [UInt8(ascii: "\n")]
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Storage outages, one line when writes start failing (SQLite's message and code, never a
    /// bound value) and one when they succeed again: one pair per outage, not a line per failed
    /// write, so a full disk under load does not flood a log that may share that disk.
    static func storage(_ event: StorageEvent) {
        switch event {
        case .writesFailing(let error):
            write(.error, "storage_writes_failing", ["error": .string(error.code.description), "reason": .string(error.reason)])
        case .writesRecovered(let failedWrites, let duration):
            let (seconds, attoseconds) = duration.components
            let outage = Double(seconds) + Double(attoseconds) / 1e18
            write(
                .info, "storage_writes_recovered",
                ["failed_writes": .number(Double(failedWrites)), "outage_seconds": .number((outage * 1000).rounded() / 1000)])
        }
    }
}
