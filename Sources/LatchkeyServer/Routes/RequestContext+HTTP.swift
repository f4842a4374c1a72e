import LatchkeyHTTP

extension RequestContext {
    /// Who sent `request`: its peer address, its `User-Agent` (at most 256 characters) and its request id.
    init(_ request: HTTPRequest) {
        self.init(ip: request.remoteAddress, userAgent: request.headers["User-Agent"].map { String($0.prefix(256)) }, requestID: request.requestID)
    }
}
