import FoundationEssentials
import Glibc
import LatchkeyJOSE
import LatchkeyStore

/// Writes the store's storage outages to standard error as JSON lines, beside the access log:
/// one line when writes start failing, naming the failure (SQLite's message and code, never a
/// bound value: see ``LatchkeyStore/StoreError``), and one when they succeed again.
///
/// One line per outage, not per failed write, so a full disk under load does not flood the log
/// it may be sharing the disk with.
enum StorageErrorLog {
    static func record(_ event: StorageEvent) {
        var fields: [String: JSONValue] = ["time": .string(Date().formatted(.iso8601))]
        switch event {
        case .writesFailing(let error):
            fields["level"] = "error"
            fields["event"] = "storage_writes_failing"
            fields["error"] = .string(error.code.description)
            fields["reason"] = .string(error.reason)
        case .writesRecovered(let failedWrites, let duration):
            fields["level"] = "info"
            fields["event"] = "storage_writes_recovered"
            fields["failed_writes"] = .number(Double(failedWrites))
            let (seconds, attoseconds) = duration.components
            let outage = Double(seconds) + Double(attoseconds) / 1e18
            fields["outage_seconds"] = .number((outage * 1000).rounded() / 1000)
        }
        let line = JSONValue.object(fields).serialized + [UInt8(ascii: "\n")]
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
}
