import LatchkeyHTTP

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; errors compare by code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Another process (or server) already listens on the address.
        public static let addressInUse = Code("address_in_use")
        /// The host is not an address of this machine, or names nothing.
        public static let invalidAddress = Code("invalid_address")
        /// The operating system refused a socket, a bind or a listen for another reason.
        public static let socketFailed = Code("socket_failed")
        /// libevent could not set up an event loop.
        public static let eventLoopFailed = Code("event_loop_failed")
        /// `start()` was called twice, or after `shutdown()`.
        public static let alreadyStarted = Code("already_started")
    }

    /// The kind of failure.
    public var code: Code
    /// One line for the operator.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    public static func == (lhs: HTTPServerError, rhs: HTTPServerError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
