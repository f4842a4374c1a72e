import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// `/v1/token`, `/v1/logout`, `/v1/sessions`, `/v1/revoke` and the JWKS.
struct SessionRoutes {
    let sessions: SessionService
    let refreshTokens: RefreshTokens
    let keys: SigningKeyRing
    let bearer: BearerAuthenticator
    /// Binds a refresh to the key of its DPoP proof, and checks a bound session's.
    let binding: DPoPBinding

    func register(on router: Router) {
        let (sessions, refreshTokens, binding) = (sessions, refreshTokens, binding)
        // Routes of `signedIn` run behind the bearer check, which puts the caller in the context.
        let signedIn = router.group("/v1", middleware: bearer)
        let anyone = router.group("", context: LatchkeyContext.self)
        let jwks = JWKSResponder(keys: keys)

        router.get("/.well-known/jwks.json", synchronous: { _ in jwks.response })

        // Its refusals are no-store as its tokens are (OAuthTokenRoutes.neverCached).
        anyone.post("/v1/token") { request, context in
            try await OAuthTokenRoutes.neverCached(pragma: false) {
                let body = try request.fieldsBody(WireRefreshRequest.self)
                guard body.grantType == WireRefreshRequest.refreshTokenGrant else {
                    throw AuthError(.unsupportedGrantType, "only refresh_token is supported here")
                }
                guard let refreshToken = body.refreshToken, !refreshToken.isEmpty, refreshToken.count <= 512 else {
                    throw AuthError.invalidRequest("refresh_token is required")
                }
                let caller = try await binding.bind(request, context.caller, spentByRefresh: true)
                return try await refreshTokens.refresh(refreshToken, context: caller).response()
            }
        }

        anyone.post("/v1/revoke") { request, context in
            let body = try request.fieldsBody(WireRevokeRequest.self)
            if let token = body.token, !token.isEmpty, token.count <= 512 {
                try await sessions.revoke(refreshToken: token, context: context.caller)
            }
            return .empty(status: 200)
        }

        signedIn.post("/logout") { request, context in
            let principal = try context.requirePrincipal()
            let body = request.body.isEmpty ? WireLogoutRequest() : try request.wireBody(WireLogoutRequest.self)
            try await sessions.revokeSessions(
                userID: principal.userID, sessionIDs: body.all ? nil : [principal.sessionID], reason: "logout", context: context.caller)
            return .empty()
        }

        signedIn.get("/sessions") { request, context in
            let principal = try context.requirePrincipal()
            let list = try await sessions.sessions(userID: principal.userID)
            return .json(WireSessionList(sessions: list.map { WireSessionInfo($0, current: $0.id == principal.sessionID) }).json)
        }

        signedIn.delete("/sessions/{id}") { request, context in
            let principal = try context.requirePrincipal()
            let id = request.pathParameters["id"] ?? ""
            let revoked = try await sessions.revokeSessions(userID: principal.userID, sessionIDs: [id], reason: "revoked", context: context.caller)
            guard !revoked.isEmpty else { throw AuthError.notFound("no such session") }
            return .empty()
        }
    }
}

extension WireSessionInfo {
    init(_ session: Session, current: Bool) {
        self.init(
            id: session.id, createdAt: WireTimestamp(session.createdAt), lastUsedAt: WireTimestamp(session.lastUsedAt),
            expiresAt: WireTimestamp(session.expiresAt), amr: session.amr, userAgent: session.userAgent, ip: session.ip, current: current)
    }
}
