import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// `GET /v1/me`, `PATCH /v1/me`, `DELETE /v1/me` and `DELETE /v1/me/identities/{provider}`.
struct AccountRoutes {
    let accounts: AccountService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let accounts = accounts
        // Routes of `signedIn` run behind the bearer check, which puts the caller in the context.
        let signedIn = router.group("/v1", middleware: bearer)

        signedIn.get("/me") { request, context in
            let principal = try context.requirePrincipal()
            return .json(WireAccount(try await accounts.profile(userID: principal.userID)).json)
        }

        signedIn.patch("/me") { request, context in
            let principal = try context.requirePrincipal()
            let change = try Self.nameChange(request)
            let user = try await accounts.updateName(userID: principal.userID, change: change, context: context.caller)
            return .json(WireAccountUpdateResponse(user: WireUser(user)).json)
        }

        // Unlinks an upstream provider; the session must have signed in in the last five minutes,
        // and the account keeps another way to sign in.
        signedIn.delete("/me/identities/{provider}") { request, context in
            let principal = try context.requirePrincipal()
            let provider = request.pathParameters["provider"] ?? ""
            try await accounts.unlink(provider: String(provider.prefix(64)), principal: principal, context: context.caller)
            return .empty()
        }

        // Revokes Apple's tokens at Apple, ends every session, deletes personal data (docs/reference.md);
        // with a second factor enrolled, one must have been proved in the last five minutes.
        signedIn.delete("/me") { request, context in
            let principal = try context.requirePrincipal()
            try await accounts.delete(userID: principal.userID, principal: principal, reason: "user", context: context.caller)
            return .empty()
        }
    }

    /// The body of `PATCH /v1/me`. Any member other than the two names is refused, so a typo
    /// (`givenName`) is an error instead of a silent no-op.
    static func nameChange(_ request: HTTPRequest) throws -> NameChange {
        let json = try request.jsonBody()
        if case .object(let members) = json,
            let unknown = members.keys.sorted().first(where: { !WireAccountUpdateRequest.members.contains($0) })
        {
            throw HTTPError.invalidRequest("unknown field \(unknown): only given_name and family_name can be changed")
        }
        let body: WireAccountUpdateRequest
        do {
            body = try WireAccountUpdateRequest(json: json)
        } catch {
            throw HTTPError.invalidRequest(error.description)
        }
        return NameChange(givenName: try name(body.givenName, "given_name"), familyName: try name(body.familyName, "family_name"))
    }

    private static func name(_ update: WireNameUpdate, _ field: String) throws -> String?? {
        switch update {
        case .keep: nil
        case .clear: .some(nil)
        case .set(let raw): .some(try NameChange.name(raw, field: field))
        }
    }
}
