/// Who asked, for audit entries and the sessions list.
package struct RequestContext: Sendable {
    package var ip: String?
    package var userAgent: String?
    package var requestID: String?

    package init(ip: String? = nil, userAgent: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.requestID = requestID
    }
}
