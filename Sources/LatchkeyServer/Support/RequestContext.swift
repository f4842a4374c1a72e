/// Who asked, for audit entries and the sessions list.
package struct RequestContext: Sendable {
    package var ip: String?
    package var userAgent: String?
    package var requestID: String?
    /// The thumbprint of the key whose DPoP proof this token request carried and the server
    /// accepted (RFC 9449): what the tokens it issues are bound to. `nil` without a proof.
    package var dpopKeyThumbprint: String?
    /// That proof while its `jti` is still to be spent, by the transaction that issues the
    /// tokens (a refresh: ``RefreshTokens/refresh(_:client:context:)``). `nil` once spent.
    package var unspentDPoPProof: DPoPService.CheckedProof?
    /// The account of the admin API's caller when an admin or support account acts on another
    /// account or on the server, or `operator` for the CLI's account actions: every audit entry
    /// of the request names it (`actor`).
    package var actor: String?

    package init(ip: String? = nil, userAgent: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.requestID = requestID
    }
}

extension RequestContext {
    /// The CLI acting on an account from the server's machine: audit entries name `actor: operator`.
    package static var operatorCLI: RequestContext {
        var context = RequestContext(requestID: "cli")
        context.actor = "operator"
        return context
    }
}
