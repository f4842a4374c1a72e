import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWire

/// The middleware of `/v1/admin`, inside ``BearerAuthenticator``: finds the role of the
/// principal's account on every request (a revoked role counts at once) when the token carries
/// the scope `admin`, and names the account as the `actor` of every audit entry the request
/// writes. Each handler then states the role it needs with ``LatchkeyContext/requireRole(_:)``.
struct AdminAuthorizer: RouterMiddleware {
    typealias Context = LatchkeyContext

    /// The scope an access token must carry for the admin API; `/v1` app tokens carry none.
    static let scope = "admin"

    let admin: AdminService

    func handle(
        _ request: HTTPRequest, context: LatchkeyContext, next: (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var context = context
        let principal = try context.requirePrincipal()
        if principal.scopes?.contains(Self.scope) == true {
            context.adminRole = try await admin.role(of: principal.userID)
            if context.adminRole != nil { context.caller.actor = principal.userID }
        }
        return try await next(request, context)
    }
}

/// `/v1/admin/…`: the admin API (docs/admin.md). Every route runs behind the bearer check and
/// ``AdminAuthorizer`` and states the role it needs first.
struct AdminRoutes {
    let admin: AdminService
    /// Disabling and enabling accounts, as `latchkey users disable|enable` does.
    let accounts: AccountService
    /// `latchkey clients`' service, for the admin-only client routes.
    let clients: ClientService
    let keys: SigningKeyRing
    /// The email flows, when mail can be delivered; without, no password reset route.
    let email: EmailService?
    let bearer: BearerAuthenticator
    let clock: @Sendable () -> Date

    /// The most lines one NDJSON export answer of the audit log carries, and the default.
    static let maxExportLimit = 5000
    static let defaultExportLimit = 1000
    /// The response header that carries the next page's cursor of an NDJSON export.
    static let nextCursorHeader = "Next-Cursor"

    func register(on router: Router) {
        let (admin, accounts, clients, keys, clock) = (admin, accounts, clients, keys, clock)
        let group = router.group("/v1/admin", middleware: bearer, AdminAuthorizer(admin: admin))

        group.get("/users") { request, context in
            try context.requireRole(.support)
            let page = try await admin.users(
                query: try Self.parameter(request, "query", maxLength: 256), cursor: try Self.cursor(request), limit: try AdminCursor.limit(request.query["limit"]))
            return .json(WireAdminUserList(users: page.rows.map(WireAdminUser.init), nextCursor: page.next).json)
        }

        // Counts for an overview; the keys' dates as GET /v1/admin/keys gives them.
        group.get("/stats") { request, context in
            try context.requireRole(.support)
            let stats = try await admin.stats()
            let now = clock()
            let count = { (value: Int64) in JSONValue.number(Double(value)) }
            return .json([
                "accounts": count(stats.accounts), "live_sessions": count(stats.liveSessions),
                "events_24h": .object(stats.events.mapValues { .object($0.mapValues(count)) }),
                "outbox": .object(stats.outboxDepths.mapValues(count)),
                "signing_keys": .array(try await keys.allKeys().map { WireAdminSigningKey($0, now: now).json }),
                "database": .string(admin.databaseEngine),
            ])
        }

        group.get("/users/{id}") { request, context in
            try context.requireRole(.support)
            let detail = try await admin.user(id: request.pathParameters["id"] ?? "")
            return .json(WireAdminUserDetail(detail).json)
        }

        group.post("/users/{id}/sessions/revoke") { request, context in
            try context.requireRole(.support)
            let body = request.body.isEmpty ? WireAdminSessionRevokeRequest() : try request.wireBody(WireAdminSessionRevokeRequest.self)
            if let id = body.sessionID, id.isEmpty || id.utf8.count > 64 { throw AuthError.invalidRequest("session_id must be a session id") }
            let revoked = try await admin.revokeSessions(userID: request.pathParameters["id"] ?? "", sessionID: body.sessionID, context: context.caller)
            return .json(WireAdminSessionRevokeResponse(revoked: revoked).json)
        }

        // A disabled account cannot sign in and its sessions end (S50, S51); enabling brings none back.
        for (action, disabling) in [("disable", true), ("enable", false)] {
            group.post("/users/{id}/\(action)") { request, context in
                try context.requireRole(.support)
                let userID = request.pathParameters["id"] ?? ""
                let changed =
                    disabling
                    ? try await accounts.disable(userID: userID, context: context.caller)
                    : try await accounts.enable(userID: userID, context: context.caller)
                return .json(WireAdminAccountState(userID: userID, disabled: disabling, changed: changed).json)
            }
        }

        // Newest first; `Accept: application/x-ndjson` answers one entry a line, up to
        // `maxExportLimit` an answer, with the next page's cursor in `Next-Cursor`.
        group.get("/audit") { request, context in
            try context.requireRole(.support)
            let export = request.headers["Accept"]?.lowercased().contains("application/x-ndjson") == true
            let filter = AdminRepository.AuditFilter(
                userID: try Self.parameter(request, "user", maxLength: 64), event: try Self.parameter(request, "event", maxLength: 64),
                since: try Self.time(request, "since"), until: try Self.time(request, "until"))
            let limit = export ? try Self.exportLimit(request.query["limit"]) : try AdminCursor.limit(request.query["limit"])
            let page = try await admin.audit(filter, cursor: try Self.cursor(request), limit: limit)
            let entries = page.rows.map { WireAuditEntry($0.entry) }
            guard export else { return .json(WireAuditPage(entries: entries, nextCursor: page.next).json) }
            var response = HTTPResponse(status: 200, headers: ["Content-Type": "application/x-ndjson"], body: entries.flatMap { $0.json.serialized + [0x0A] })
            if let next = page.next { response.headers.set(Self.nextCursorHeader, next) }
            return response
        }

        if let email {
            // The reset message of the email flow, to the account's address; 202, nothing to show.
            group.post("/users/{id}/password-reset") { request, context in
                try context.requireRole(.support)
                try await email.requestPasswordReset(
                    userID: request.pathParameters["id"] ?? "", locale: EmailRoutes.locale(request, email), context: context.caller)
                return .empty(status: 202)
            }
        }

        // Admin only from here on.

        group.delete("/users/{id}") { request, context in
            try context.requireRole(.admin)
            try await admin.deleteUser(id: request.pathParameters["id"] ?? "", context: context.caller)
            return .empty()
        }

        group.delete("/users/{id}/factors/{kind}/{factor}") { request, context in
            try context.requireRole(.admin)
            try await admin.removeFactor(
                userID: request.pathParameters["id"] ?? "", kind: request.pathParameters["kind"] ?? "", id: request.pathParameters["factor"] ?? "",
                context: context.caller)
            return .empty()
        }

        group.get("/clients") { request, context in
            try context.requireRole(.admin)
            return .json(["clients": .array(try await clients.list().map { WireAdminClient($0).json })])
        }

        group.post("/clients") { request, context in
            try context.requireRole(.admin)
            let body = try request.wireBody(WireAdminClientRegistration.self)
            var registration = ClientRegistration(
                name: body.name, redirectURIs: body.redirectURIs, postLogoutRedirectURIs: body.postLogoutRedirectURIs, confidential: body.confidential,
                firstParty: body.firstParty, grantTypes: try ClientService.grantTypes(body.grantTypes ?? [], field: "grant_types"), scopes: body.scopes.map(Set.init))
            registration.requiresDPoP = body.requireDPoP
            let (client, secret) = try await clients.register(registration, context: context.caller)
            var response = HTTPResponse.json(WireAdminClientCredentials(clientID: client.id, clientSecret: secret).json, status: 201)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        group.get("/clients/{id}") { request, context in
            try context.requireRole(.admin)
            guard let client = try await clients.client(id: request.pathParameters["id"] ?? "") else { throw AuthError.notFound("no such client") }
            return .json(WireAdminClient(client).json)
        }

        group.patch("/clients/{id}") { request, context in
            try context.requireRole(.admin)
            let body = try request.wireBody(WireAdminClientChange.self)
            let client = try await clients.update(
                id: request.pathParameters["id"] ?? "",
                ClientService.ClientChange(
                    name: body.name, redirectURIs: body.redirectURIs, postLogoutRedirectURIs: body.postLogoutRedirectURIs, scopes: body.scopes.map(Set.init)),
                context: context.caller)
            return .json(WireAdminClient(client).json)
        }

        group.delete("/clients/{id}") { request, context in
            try context.requireRole(.admin)
            guard try await clients.remove(id: request.pathParameters["id"] ?? "", context: context.caller) else {
                throw AuthError.notFound("no such client")
            }
            return .empty()
        }

        group.post("/clients/{id}/rotate-secret") { request, context in
            try context.requireRole(.admin)
            let id = request.pathParameters["id"] ?? ""
            let secret = try await clients.rotateSecret(id: id, context: context.caller)
            var response = HTTPResponse.json(WireAdminClientCredentials(clientID: id, clientSecret: secret).json)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        group.get("/keys") { request, context in
            try context.requireRole(.admin)
            let now = clock()
            return .json(["keys": .array(try await keys.allKeys().map { WireAdminSigningKey($0, now: now).json })])
        }

        // As `latchkey keys rotate`: each algorithm's new key is published now and signs after
        // the delay (at least 330 s: the JWKS max-age and the other processes' reload).
        group.post("/keys/rotate") { request, context in
            try context.requireRole(.admin)
            let body = request.body.isEmpty ? WireAdminKeyRotation() : try request.wireBody(WireAdminKeyRotation.self)
            let delay = body.activateIn ?? 900
            guard delay >= 330, delay <= 86_400 else { throw AuthError.invalidRequest("activate_in must be from 330 to 86400 seconds") }
            var algorithms = SigningKeyRing.algorithms
            if let name = body.algorithm {
                guard let algorithm = algorithms.first(where: { $0.rawValue == name }) else { throw AuthError.invalidRequest("algorithm must be ES256 or RS256") }
                algorithms = [algorithm]
            }
            let now = clock()
            var rotated: [JSONValue] = []
            for algorithm in algorithms {
                let key = try await keys.rotate(algorithm, activationDelay: TimeInterval(delay), now: now, context: context.caller)
                rotated.append(WireAdminSigningKey(key, now: now).json)
            }
            return .json(["keys": .array(rotated)])
        }
    }

    /// A query parameter, `nil` when absent or empty.
    ///
    /// - Throws: 400 `invalid_request` when it is longer than `maxLength` bytes.
    static func parameter(_ request: HTTPRequest, _ name: String, maxLength: Int) throws -> String? {
        guard let value = request.query[name], !value.isEmpty else { return nil }
        guard value.utf8.count <= maxLength else { throw AuthError.invalidRequest("\(name) must be at most \(maxLength) bytes") }
        return value
    }

    static func cursor(_ request: HTTPRequest) throws -> AdminCursor? {
        try parameter(request, "cursor", maxLength: 256).map { try AdminCursor($0) }
    }

    /// A time parameter: RFC 3339 (`2026-12-01T00:00:00Z`).
    static func time(_ request: HTTPRequest, _ name: String) throws -> Date? {
        guard let text = try parameter(request, name, maxLength: 64) else { return nil }
        guard let time = WireTimestamp(rfc3339: text) else { throw AuthError.invalidRequest("\(name) must be an RFC 3339 time") }
        return Date(timeIntervalSince1970: TimeInterval(time.secondsSince1970))
    }

    static func exportLimit(_ raw: String?) throws -> Int {
        guard let raw else { return defaultExportLimit }
        guard let limit = Int(raw), (1...maxExportLimit).contains(limit) else {
            throw AuthError.invalidRequest("limit must be a whole number from 1 to \(maxExportLimit)")
        }
        return limit
    }
}

extension WireAdminUser {
    init(_ summary: AdminUserSummary) {
        self.init(
            user: WireUser(summary.user), username: summary.username, lastSignInAt: summary.lastSignInAt.map(WireTimestamp.init),
            disabledAt: summary.disabledAt.map(WireTimestamp.init), methods: summary.methods, factors: summary.factors)
    }
}

extension WireAuditEntry {
    init(_ entry: AuditLog.Entry) {
        self.init(
            time: WireTimestamp(entry.time), userID: entry.userID, event: entry.event.rawValue, outcome: entry.outcome.rawValue, ip: entry.ip,
            requestID: entry.requestID, details: entry.details)
    }
}

extension WireAdminUserDetail {
    init(_ detail: AdminUserDetail) {
        self.init(
            account: WireAdminUser(detail.summary), role: detail.role?.rawValue,
            identities: detail.profile.identities.map(WireIdentity.init),
            passkeys: detail.passkeys.map {
                WireAdminCredential(id: $0.id, name: $0.name, createdAt: WireTimestamp($0.createdAt), lastUsedAt: $0.lastUsedAt.map(WireTimestamp.init))
            },
            deviceKeys: detail.deviceKeys.map {
                WireAdminCredential(id: $0.id, name: $0.label, createdAt: WireTimestamp($0.createdAt), lastUsedAt: $0.lastUsedAt.map(WireTimestamp.init))
            },
            totp: detail.totp.map { WireAdminTOTP(createdAt: WireTimestamp($0.createdAt), confirmedAt: $0.confirmedAt.map(WireTimestamp.init)) },
            sessions: detail.sessions.map { WireSessionInfo($0, current: false) }, grants: detail.grants.map(WireGrant.init),
            audit: detail.audit.map { WireAuditEntry($0.entry) })
    }
}

extension WireAdminClient {
    init(_ client: OAuthClient) {
        self.init(
            clientID: client.id, name: client.name, confidential: client.isConfidential, firstParty: client.isFirstParty,
            redirectURIs: client.redirectURIs, postLogoutRedirectURIs: client.postLogoutRedirectURIs,
            grantTypes: client.grantTypes.map(\.rawValue).sorted(), scopes: client.scopes.sorted(), idTokenAlgorithm: client.idTokenAlgorithm,
            requireDPoP: client.requiresDPoP, createdAt: WireTimestamp(client.createdAt))
    }
}

extension WireAdminSigningKey {
    init(_ key: SigningKeyRing.Key, now: Date) {
        self.init(
            kid: key.id, algorithm: key.algorithm.rawValue, state: key.state(at: now), createdAt: WireTimestamp(key.createdAt),
            activatesAt: WireTimestamp(key.activatesAt), retiresAt: key.retiresAt.map(WireTimestamp.init), expiresAt: key.expiresAt.map(WireTimestamp.init))
    }
}
