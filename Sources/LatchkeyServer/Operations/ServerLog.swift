import FoundationEssentials
import Glibc
import LatchkeyCrypto
import LatchkeyErrors
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// Where the server reports what an operator should see that is not a request: an unexpected
/// error behind a 500, a periodic job that failed, a key in Apple's JWK Set that it skipped
/// (S30), storage that stopped taking writes and came back. One JSON line per event on standard
/// error, next to the access log.
///
/// Events are rare by design, so each line is written at once with one `write(2)`, which keeps it
/// whole among access-log lines. Fields never hold a token, key, password or code (S26): an
/// error is logged through ``errorFields(_:)``, which names its type and describes only the
/// errors known to be safe.
enum ServerLog {
    enum Level: String { case info, warning, error }

    /// Writes `{"event": …, "level": …, "time": …}` with `fields` besides.
    static func write(_ level: Level, _ event: String, time: Date = Date(), _ fields: [String: JSONValue] = [:]) {
        var members = fields
        members["event"] = .string(event)
        members["level"] = .string(level.rawValue)
        members["time"] = .string(time.formatted(.iso8601))
        let line = JSONValue.object(members)
        let bytes = line.serialized + [UInt8(ascii: "\n")]
        bytes.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        for observer in observers.withLock({ Array($0.values) }) { observer(line) }
    }

    // MARK: Errors

    /// The fields that describe `error` in a log line: `error_type`, its Swift type name, always;
    /// `error`, its description, only for the types whose descriptions are documented to hold no
    /// secret.
    ///
    /// The rule: a description is logged only when its type promises it never carries a bound
    /// value, key material, a token or a request's content. ``StoreError`` (SQL text and
    /// SQLite's message, never a bound value), ``CryptoError`` (never key material or plaintext)
    /// and ``HTTPClientError`` (names the host, never a body or header) make that promise. Any
    /// other error, including the server's own enums whose messages wrap other errors and the
    /// errors a route throws with request data in them, is logged by type alone:
    /// `String(describing: type(of:))` names a type, never a value.
    static func errorFields(_ error: any Error) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["error_type": .string(String(describing: type(of: error)))]
        if let description = safeDescription(of: error) { fields["error"] = .string(description) }
        return fields
    }

    private static func safeDescription(of error: any Error) -> String? {
        switch error {
        case let error as StoreError: "\(error.code): \(error.message)"
        case let error as CryptoError: "\(error.code): \(error.message)"
        case let error as HTTPClientError: "\(error.code): \(error.message)"
        case is CancellationError: "cancelled"
        default: nil
        }
    }

    /// An error that became a 500 (docs/security.md S24): one line per such response, with the
    /// request id the client saw in the body, the method and the route pattern (never the raw
    /// path, which may carry an id or a token), and the error by ``errorFields(_:)``. The request's
    /// headers and body are never read here.
    static func unexpectedError(_ error: any Error, requestID: String, method: String, route: String?) {
        var fields = errorFields(error)
        fields["request_id"] = .string(requestID)
        fields["method"] = .string(Metrics.methodLabel(method))
        fields["route"] = .string(route ?? "unmatched")
        write(.error, "unexpected_error", fields)
    }

    /// A pass of a periodic job that failed (``BackgroundJobs``).
    static func backgroundJobFailed(_ job: BackgroundJob, _ error: any Error) {
        var fields = errorFields(error)
        fields["job"] = .string(job.rawValue)
        write(.error, "background_job_failed", fields)
    }

    /// Storage outages, one line when writes start failing (SQLite's message and code, never a
    /// bound value) and one when they succeed again: one pair per outage, not a line per failed
    /// write, so a full disk under load does not flood a log that may share that disk.
    static func storage(_ event: StorageEvent) {
        switch event {
        case .writesFailing(let error):
            write(.error, "storage_writes_failing", ["error": .string(error.code.description), "reason": .string(error.message)])
        case .writesRecovered(let failedWrites, let duration):
            let (seconds, attoseconds) = duration.components
            let outage = Double(seconds) + Double(attoseconds) / 1e18
            write(
                .info, "storage_writes_recovered",
                ["failed_writes": .number(Double(failedWrites)), "outage_seconds": .number((outage * 1000).rounded() / 1000)])
        }
    }

    // MARK: Observing

    /// Receivers of every line besides standard error, by registration.
    private static let observers = Mutex<[UInt64: @Sendable (JSONValue) -> Void]>([:])
    private static let nextObserver = Atomic<UInt64>(0)

    /// Runs `body` with `observe` receiving every line written meanwhile, from any task, as
    /// well as standard error. Tests read what the server logged through it; lines of other work
    /// in the process arrive too, so an observer filters by what it is looking for (a request id,
    /// a job).
    static func observing<T>(_ observe: @escaping @Sendable (JSONValue) -> Void, _ body: () async throws -> T) async rethrows -> T {
        let id = nextObserver.wrappingAdd(1, ordering: .relaxed).newValue
        observers.withLock { $0[id] = observe }
        defer { _ = observers.withLock { $0.removeValue(forKey: id) } }
        return try await body()
    }
}
