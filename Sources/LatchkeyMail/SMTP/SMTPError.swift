/// Why a message was not handed over: what went wrong, whether trying later can help, and a
/// sentence for the operator that never holds the message, a password or a credential.
package struct SMTPError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// No connection, a lookup that failed, a connection the server closed.
        case connection
        case timedOut
        /// The handshake failed, or the server does not offer STARTTLS on `smtp://`.
        case tls
        /// The server refused the credentials, or offers no mechanism we speak.
        case authentication
        /// A reply that is malformed or was not expected at that point.
        case protocolViolation
        /// The server answered a command with this code (4xx or 5xx).
        case refused(code: Int)
        /// The message cannot go to this server as it is (an internationalised address without
        /// SMTPUTF8).
        case unsupported
    }

    package var kind: Kind
    package var reason: String

    package init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// Whether the same message to the same server can never succeed: a 5xx reply, or a message
    /// the server cannot take. Everything else may work later (RFC 5321 §4.2.1: 4xx is
    /// transient; an outage, a TLS or credential problem is the operator's to fix).
    package var isPermanent: Bool {
        switch kind {
        case .refused(let code): code >= 500
        case .unsupported: true
        default: false
        }
    }

    /// Whether the server could not be reached or spoken to at all (an outage), as opposed to a
    /// refusal of this message.
    package var isOutage: Bool {
        switch kind {
        case .connection, .timedOut, .tls: true
        case .refused(let code): code == 421
        default: false
        }
    }

    package var description: String { reason }
}
