import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// `/v1/token`, `/v1/logout`, `/v1/sessions`, `/v1/revoke` and the JWKS.
struct SessionRoutes {
    let sessions: SessionService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let sessions = sessions
        let bearer = bearer

        router.get("/.well-known/jwks.json", synchronous: { _ in sessions.keys.jwksResponse })

        router.post("/v1/token") { request in
            let fields = try Self.fields(of: request)
            guard let grantType = fields["grant_type"] else { throw HTTPError.invalidRequest("grant_type is required") }
            guard grantType == "refresh_token" else {
                throw HTTPError(status: 400, code: "unsupported_grant_type", description: "only refresh_token is supported here")
            }
            guard let refreshToken = fields["refresh_token"], !refreshToken.isEmpty, refreshToken.count <= 512 else {
                throw HTTPError.invalidRequest("refresh_token is required")
            }
            return try await sessions.refresh(refreshToken, context: RequestContext(request)).response()
        }

        router.post("/v1/revoke") { request in
            let fields = try Self.fields(of: request)
            if let token = fields["token"], !token.isEmpty, token.count <= 512 {
                try await sessions.revoke(refreshToken: token, context: RequestContext(request))
            }
            return .empty(status: 200)
        }

        router.post("/v1/logout") { request in
            let principal = try await bearer.authenticate(request)
            var all = false
            if !request.body.isEmpty {
                let body = try request.jsonBody()
                switch body["all"] {
                case nil: break
                case .bool(let value)?: all = value
                default: throw HTTPError.invalidRequest("all must be true or false")
                }
            }
            try await sessions.revokeSessions(
                userID: principal.userID, sessionIDs: all ? nil : [principal.sessionID], reason: "logout", context: RequestContext(request))
            return .empty()
        }

        router.get("/v1/sessions") { request in
            let principal = try await bearer.authenticate(request)
            let list = try await sessions.sessions(userID: principal.userID)
            return .json(["sessions": .array(list.map { Self.json($0, current: $0.id == principal.sessionID) })])
        }

        router.delete("/v1/sessions/{id}") { request in
            let principal = try await bearer.authenticate(request)
            let id = request.pathParameters["id"] ?? ""
            let revoked = try await sessions.revokeSessions(userID: principal.userID, sessionIDs: [id], reason: "revoked", context: RequestContext(request))
            guard !revoked.isEmpty else { throw HTTPError.notFound("no such session") }
            return .empty()
        }
    }

    /// OAuth clients send form bodies; apps may send JSON. Both carry flat string fields.
    static func fields(of request: HTTPRequest) throws -> [String: String] {
        try request.requireMediaType(["application/json", "application/x-www-form-urlencoded"])
        if request.mediaType(is: "application/x-www-form-urlencoded") { return try request.formBody() }
        guard case .object(let members) = try request.jsonBody() else { throw HTTPError.invalidRequest("the body must be a JSON object") }
        var fields = [String: String]()
        for (name, value) in members {
            guard let string = value.stringValue else { throw HTTPError.invalidRequest("\(name) must be a string") }
            fields[name] = string
        }
        return fields
    }

    static func json(_ session: Session, current: Bool) -> JSONValue {
        [
            "id": .string(session.id), "created_at": .string(RFC3339.string(session.createdAt)),
            "last_used_at": .string(RFC3339.string(session.lastUsedAt)), "expires_at": .string(RFC3339.string(session.expiresAt)),
            "amr": .array(session.amr.map(JSONValue.string)), "user_agent": session.userAgent.map(JSONValue.string) ?? .null,
            "ip": session.ip.map(JSONValue.string) ?? .null, "current": .bool(current),
        ]
    }
}
