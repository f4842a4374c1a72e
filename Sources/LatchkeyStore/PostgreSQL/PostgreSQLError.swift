internal import CLatchkeyPQ

/// PostgreSQL's errors as ``StoreError``s, by SQLSTATE (PostgreSQL manual, appendix A).
///
/// The server's primary message names tables, columns and constraints; for data exceptions
/// (class 22) it may quote the value that did not fit, so those keep only the SQLSTATE. The
/// detail line (`Key (username)=(…) already exists`) quotes values and is never read.
enum PostgreSQLError {
    /// Serialization failure: a transaction that would not have been serializable; retried.
    static let serializationFailure = "40001"
    /// Deadlock detected; retried.
    static let deadlockDetected = "40P01"
    /// Canceled by `statement_timeout` (or an operator's `pg_cancel_backend`).
    static let queryCanceled = "57014"

    /// Whether a transaction that failed with `state` may simply run again.
    static func isRetryable(_ state: String) -> Bool {
        state == serializationFailure || state == deadlockDetected
    }

    /// The SQLSTATE and the store error of a failed call.
    ///
    /// - Parameters:
    ///   - result: The failed result, or `nil` when libpq returned none (out of memory, a lost
    ///     connection).
    ///   - connection: The connection, for its status and message.
    ///   - context: What was being done, for the message.
    static func error(result: OpaquePointer?, connection: OpaquePointer, context: String) -> (String, StoreError) {
        let state = result.flatMap { field($0, "C") } ?? ""
        if PQstatus(connection) != CONNECTION_OK || state.isEmpty || state.hasPrefix("08") {
            return (state, .unavailable("\(context): the connection to PostgreSQL was lost (\(connectionMessage(connection)))"))
        }
        let primary = state.hasPrefix("22") ? "" : result.flatMap { field($0, "M") } ?? ""
        let message = "\(context): \(primary.isEmpty ? "" : primary + " ")(SQLSTATE \(state))"
        return (state, StoreError(code(for: state), message))
    }

    /// The store's code for an SQLSTATE.
    static func code(for state: String) -> StoreError.Code {
        switch state {
        case serializationFailure, deadlockDetected, "55P03":
            // Only after the retries ran out, or a lock not available (NOWAIT): try later.
            return .busy
        case queryCanceled:
            return .busy
        case "57P01", "57P02", "57P03", "53300":
            // Shutting down, crash recovery, not yet accepting, too many connections.
            return .unavailable
        case "25006":
            // A write in a read-only transaction.
            return .misuse
        case "XX001", "XX002":
            return .corrupt
        default: break
        }
        switch state.prefix(2) {
        case "23": return .constraint
        case "42", "3F", "0A": return .schema
        case "08", "53", "58": return .unavailable
        case "22": return .typeMismatch
        case "XX": return .library
        default: return .library
        }
    }

    /// libpq's message for the connection, first line only: it names the host, the port and
    /// the user, never the password.
    static func connectionMessage(_ connection: OpaquePointer?) -> String {
        guard let connection, let message = PQerrorMessage(connection) else { return "no message" }
        let text = String(cString: message).split(whereSeparator: \.isNewline).joined(separator: "; ")
        return text.isEmpty ? "no message" : text
    }

    private static func field(_ result: OpaquePointer, _ code: Character) -> String? {
        guard let value = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
        return String(cString: value)
    }
}
