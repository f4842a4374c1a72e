import LatchkeyHTTP

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; errors compare by code.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Another process (or server) already listens on the address.
        public static let addressInUse = Code(rawValue: "address_in_use")
        /// The host is not an address of this machine, or names nothing.
        public static let invalidAddress = Code(rawValue: "invalid_address")
        /// The operating system refused a socket, a bind or a listen for another reason.
        public static let socketFailed = Code(rawValue: "socket_failed")
        /// libevent could not set up an event loop.
        public static let eventLoopFailed = Code(rawValue: "event_loop_failed")
        /// `start()` was called twice, or after `shutdown()`.
        public static let alreadyStarted = Code(rawValue: "already_started")
    }

    /// The kind of failure.
    public var code: Code
    /// One line for the operator.
    public var message: String

    /// The former name of ``message``, kept so that existing callers read on.
    public var reason: String {
        get { message }
        set { message = newValue }
    }

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The ``message``: the line the operator reads.
    public var description: String { message }

    public static func == (lhs: HTTPServerError, rhs: HTTPServerError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
