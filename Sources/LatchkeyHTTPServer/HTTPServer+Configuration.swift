import FoundationEssentials
import LatchkeyHTTP

extension HTTPServer {
    /// Where to listen, how many loops, the limits.
    package struct Configuration: Sendable {
        /// The address to bind: an IPv4 or IPv6 literal, or a name that resolves to one.
        package var host: String = "127.0.0.1"
        /// The port; 0 asks the system for a free one (see ``HTTPServer/boundPort``).
        package var port: Int = 8080
        /// Event loops, each with its own thread; one per core by default.
        package var eventLoops: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Request limits.
        package var limits: Limits = Limits()
        /// How long ``HTTPServer/shutdown()`` lets requests in progress finish.
        package var shutdownDeadline: Duration = .seconds(10)
        /// The listen backlog.
        package var backlog: Int = 1024
        /// Proxies whose `X-Forwarded-For` names the client (``HTTPRequest/remoteAddress``).
        package var trustedProxies: TrustedProxies = .none

        /// Creates a configuration with the defaults.
        package init() {}

        /// Creates a configuration.
        package init(host: String = "127.0.0.1", port: Int = 8080, eventLoops: Int? = nil, limits: Limits = Limits()) {
            self.host = host
            self.port = port
            self.eventLoops = eventLoops ?? ProcessInfo.processInfo.activeProcessorCount
            self.limits = limits
        }
    }

    /// Bounds on what one client can make the server hold (docs/security.md S25).
    package struct Limits: Sendable {
        /// Request line plus header fields, in bytes; more gets 431 and a close. Also the budget
        /// for a chunked body's framing (chunk-size lines, extensions, trailers); more gets 413.
        package var maxHeaderBytes = 16 * 1024
        /// Body bytes; a larger `Content-Length` gets 413 `payload_too_large` before the body is
        /// read, and a chunked body gets it on the size line of the chunk that would pass it.
        package var maxBodyBytes = 64 * 1024
        /// From the first byte of a request to the end of its head (also: from accepting a
        /// connection to its first byte).
        package var headerTimeout: Duration = .seconds(10)
        /// From the end of the head to the end of the body; also the time a response may take to
        /// be written to a client that does not read.
        package var bodyTimeout: Duration = .seconds(30)
        /// How long a keep-alive connection may wait for its next request.
        package var idleTimeout: Duration = .seconds(60)
        /// Open connections over all loops; more are answered 503 and closed.
        package var maxConnections = 10_000
        /// Requests on one connection; the last response carries `Connection: close`.
        package var maxRequestsPerConnection = 1_000

        /// Creates limits with the defaults.
        package init() {}
    }
}
