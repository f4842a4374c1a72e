import FoundationEssentials
import Glibc
import LatchkeyJOSE

/// Where the server reports something an operator should see that is not a request, such as a key
/// in Apple's JWK Set that it skipped (SECURITY.md S30): one JSON line per event on standard
/// error, next to the access log.
///
/// Events are rare by design, so each line is written at once with one `write(2)`, which keeps it
/// whole among access-log lines. Fields never hold a token, key, password or code (S26).
enum ServerLog {
    /// Writes `{"event": …, "level": "warning", "time": …}` with `fields` besides.
    static func warning(_ event: String, time: Date, _ fields: [String: JSONValue]) {
        var members = fields
        members["event"] = .string(event)
        members["level"] = "warning"
        members["time"] = .string(time.formatted(.iso8601))
        let bytes = Array((JSONValue.object(members).serializedString + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
