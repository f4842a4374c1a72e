import LatchkeyErrors
import LatchkeyHTTP

/// Why the server could not start.
package struct HTTPServerError: CodedError {
    /// The kind of failure; errors compare by code.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// Another process (or server) already listens on the address.
        package static let addressInUse = Code(rawValue: "address_in_use")
        /// The host is not an address of this machine, or names nothing.
        package static let invalidAddress = Code(rawValue: "invalid_address")
        /// The operating system refused a socket, a bind or a listen for another reason.
        package static let socketFailed = Code(rawValue: "socket_failed")
        /// libevent could not set up an event loop.
        package static let eventLoopFailed = Code(rawValue: "event_loop_failed")
        /// `start()` was called twice, or after `shutdown()`.
        package static let alreadyStarted = Code(rawValue: "already_started")
    }

    /// The kind of failure.
    package var code: Code
    /// One line for the operator.
    package var message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The ``message``: the line the operator reads.
    package var description: String { message }
}
