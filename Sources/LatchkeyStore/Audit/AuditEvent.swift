/// What an audit entry records, as a dotted name: `session.created`, `password.login`.
///
/// The names a server writes are declared once, as static members in the server's audit
/// vocabulary; an entry read back from the database keeps whatever name it was stored with.
package struct AuditEvent: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }
}

/// How an audited event ended: `success`, `failure`, `rate_limited`, ...
package struct AuditOutcome: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// The event did what it set out to do.
    package static let success = AuditOutcome(rawValue: "success")
    /// The event was refused: a wrong password, a bad signature, a wrong code.
    package static let failure = AuditOutcome(rawValue: "failure")
}
