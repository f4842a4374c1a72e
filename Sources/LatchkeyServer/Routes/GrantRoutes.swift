import LatchkeyHTTP
import LatchkeyWire

/// `GET /v1/grants` and `DELETE /v1/grants/{client_id}`: the consents the caller gave
/// third-party clients, and withdrawing one.
struct GrantRoutes {
    let grants: GrantService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let grants = grants
        // Routes of `signedIn` run behind the bearer check, which puts the caller in the context.
        let signedIn = router.group("/v1", middleware: bearer)

        signedIn.get("/grants") { request, context in
            let principal = try context.requirePrincipal()
            let list = try await grants.grants(userID: principal.userID)
            return .json(WireGrantList(grants: list.map(WireGrant.init)).json)
        }

        // Also ends the caller's sessions of that client; 404 when there is no consent to withdraw.
        signedIn.delete("/grants/{client_id}") { request, context in
            let principal = try context.requirePrincipal()
            let clientID = request.pathParameters["client_id"] ?? ""
            guard try await grants.withdraw(userID: principal.userID, clientID: clientID, context: context.caller) else {
                throw AuthError.notFound("no consent to client \(clientID)")
            }
            return .empty()
        }
    }
}

extension WireGrant {
    init(_ grant: Grant) {
        self.init(
            clientID: grant.clientID, clientName: grant.clientName, scopes: grant.scopes.sorted(), grantedAt: WireTimestamp(grant.grantedAt),
            updatedAt: WireTimestamp(grant.updatedAt))
    }
}
