package import FoundationEssentials
package import LatchkeyStore
import LatchkeyJSON

/// What the domain services share: the database with its audit log and user rows, the metrics
/// and the clock.
///
/// The application makes one and hands it to each service it builds; a service uses its own
/// copy and never borrows these from another service (`LayeringTests` checks).
package struct Dependencies: Sendable {
    package let database: any SQLDatabase
    let audit: AuditLog
    let users: UserRepository
    package let metrics: Metrics
    /// The time of every check and row; tests move it.
    package let clock: @Sendable () -> Date

    package init(database: any SQLDatabase, metrics: Metrics, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.audit = AuditLog(database: database)
        self.users = UserRepository(database: database)
        self.metrics = metrics
        self.clock = clock
    }

    /// Records an audit entry of `context`'s caller inside the caller's transaction; an admin's
    /// request adds `actor`, the admin's user id, to the details.
    func record(
        _ event: AuditEvent, _ outcome: AuditOutcome, userID: String?, context: RequestContext, now: Date, details: [String: String] = [:],
        on connection: any SQLConnection
    ) throws {
        try audit.record(context.entry(event, outcome, userID: userID, now: now, details: details), on: connection)
    }
}

extension RequestContext {
    /// An audit entry of this caller: its address and request id, and `actor` in the details when
    /// an admin acts.
    func entry(_ event: AuditEvent, _ outcome: AuditOutcome, userID: String?, now: Date, details: [String: String] = [:]) -> AuditLog.Entry {
        var details = details
        if let actor { details["actor"] = actor }
        return AuditLog.Entry(time: now, userID: userID, event: event, outcome: outcome, ip: ip, requestID: requestID, details: details)
    }
}

extension Dependencies {
    /// Records an audit entry in a transaction of its own, for a refusal that wrote nothing else;
    /// a failure to write it is logged with the event's name rather than thrown over the refusal.
    func recordOutsideTransaction(
        _ event: AuditEvent, _ outcome: AuditOutcome, userID: String?, context: RequestContext, details: [String: String]
    ) async {
        let now = clock()
        do {
            try await audit.record(
                .init(time: now, userID: userID, event: event, outcome: outcome, ip: context.ip, requestID: context.requestID, details: details))
        } catch {
            var fields: [String: JSONValue] = [
                "audit_event": .string(event.rawValue), "request_id": context.requestID.map(JSONValue.string) ?? .null,
                "error": .string(String(String(describing: error).prefix(200))),
            ]
            if let method = details["method"] { fields["method"] = .string(method) }
            ServerLog.write(.error, "audit_write_failed", time: now, fields)
        }
    }
}
