import Foundation
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The admin API over HTTP against a running server, with tokens got as a script gets them: the
/// authorization-code flow of a first-party client registered with the scope `admin`. Each test
/// names the requirement of docs/security.md it proves.
@Suite("Admin API")
struct AdminAPITests {
    static let password = "correct horse battery staple"

    /// A server with a first-party client allowed the scope `admin`.
    static func with<T>(_ body: (TestServer, TestOAuthClient) async throws -> T) async throws -> T {
        try await TestServer.with { server in
            let (client, _) = try await server.application.clients.register(
                ClientRegistration(
                    name: "Admin scripts", redirectURIs: ["https://admin.example/cb"], postLogoutRedirectURIs: [], confidential: false,
                    firstParty: true, scopes: ["openid", "admin"]))
            return try await body(server, TestOAuthClient(id: client.id, secret: nil, redirectURI: "https://admin.example/cb"))
        }
    }

    /// A password account, with `role` granted as `latchkey admins grant` does; its user id.
    static func account(_ server: TestServer, _ username: String, role: AdminRole?) async throws -> String {
        let (userID, _) = try await server.passwordUser(username: username, password: password)
        if let role { try await server.application.services.admin.grant(userID: userID, role: role, context: RequestContext(requestID: "cli")) }
        return userID
    }

    /// An access token of `username` from the authorization-code flow of `client`, asking for `scope`.
    static func token(_ server: TestServer, _ client: TestOAuthClient, _ username: String, scope: String = "openid admin") async throws -> String {
        let attempt = AuthorizationAttempt(client, scope: scope)
        let callback = try await OAuthBrowser(server).authorize(attempt, username: username, password: password)
        let response = try await server.exchange(callback, attempt, as: client)
        #expect(response.status == 200, "\(response.text)")
        return try response.oauthTokens.accessToken
    }

    static func get(_ server: TestServer, _ path: String, _ token: String, headers: [String: String] = [:]) async throws -> TestResponse {
        try await server.request(.get, path, headers: headers.merging(["Authorization": "Bearer \(token)"]) { $1 })
    }

    static func post(_ server: TestServer, _ path: String, _ token: String, json: JSONValue? = nil) async throws -> TestResponse {
        try await server.request(.post, path, json: json ?? [:], headers: ["Authorization": "Bearer \(token)"])
    }

    /// The audit entries of `event`, newest first, as stored.
    static func audit(_ server: TestServer, _ event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(event: event)
    }

    /// The `error` member of an error body.
    static func error(_ response: TestResponse) -> String? { (try? response.json)?["error"]?.stringValue }

    static let readPaths = ["/v1/admin/users", "/v1/admin/audit", "/v1/admin/stats"]

    // MARK: S53, S54: roles from the CLI, role and scope on every request

    @Test("S53: a role is granted and taken away by the service the CLI uses, each audited in its transaction with the role")
    func s53RolesAreGrantedAndRevokedWithAudit() async throws {
        try await Self.with { server, _ in
            let ada = try await Self.account(server, "ada@example.com", role: .support)
            try await server.application.services.admin.grant(userID: ada, role: .admin, context: RequestContext(requestID: "cli"))
            let roles = try await server.application.services.admin.grantedRoles()
            #expect(roles.map(\.user.id) == [ada] && roles.map(\.role) == [.admin])
            #expect(try await server.application.services.admin.revoke(userID: ada, context: RequestContext(requestID: "cli")))
            #expect(try await !server.application.services.admin.revoke(userID: ada, context: RequestContext(requestID: "cli")))
            let granted = try await Self.audit(server, "admin.granted")
            #expect(granted.map { $0.details["role"] } == ["admin", "support"] && granted.allSatisfy { $0.userID == ada })
            #expect(try await Self.audit(server, "admin.revoked").map { $0.details["role"] } == ["admin"])
            await #expect(throws: AuthError.notFound("")) {
                try await server.application.services.admin.grant(userID: "usr_nobody", role: .admin, context: RequestContext())
            }
            let rows = try await server.database.read { try $0.query("SELECT count(*) AS n FROM admin_roles", [])[0].int("n") }
            #expect(rows == 0)
        }
    }

    @Test("S53: latchkey admins grant, list and revoke change the role of a running server's account, audited, and refuse an unknown user or role")
    func s53AdminsCommand() async throws {
        let deployment = try BackupTests.Deployment()
        defer { deployment.remove() }
        let (server, port) = try await deployment.serve()
        defer { server.stop() }
        let signUp = try AuditCommandTests.post(port: port, "/v1/auth/password/signup", #"{"username":"ada@example.com","password":"\#(Self.password)"}"#)
        let ada = try WireTokenResponse(parsing: signUp.body).user.id

        let granted = try deployment.latchkey(["admins", "grant", ada, "--role", "support"])
        #expect(granted.status == 0 && granted.output == "\(ada) is support\n", "\(granted.error)")
        let listed = try deployment.latchkey(["admins", "list"])
        #expect(listed.status == 0 && listed.output.contains(ada) && listed.output.contains("support") && listed.output.contains("ada@example.com"))
        #expect(try deployment.latchkey(["admins", "grant", "usr_nobody", "--role", "admin"]).status == 1)
        #expect(try deployment.latchkey(["admins", "grant", ada, "--role", "owner"]).status == 2)
        #expect(try deployment.latchkey(["admins", "revoke", ada]).status == 0)
        #expect(try deployment.latchkey(["admins", "revoke", ada]).status == 1)
        let events = try AuditCommandTests.entries(deployment, ["--user", ada]).compactMap { $0["event"]?.stringValue }
        #expect(Array(events.prefix(2)) == ["admin.revoked", "admin.granted"])
    }

    @Test("S54: without the scope admin, without a role, or after the role is revoked, every admin endpoint answers 403 forbidden")
    func s54ScopeAndRoleAreCheckedOnEveryRequest() async throws {
        try await Self.with { server, client in
            let ada = try await Self.account(server, "ada@example.com", role: .admin)
            _ = try await Self.account(server, "plain@example.com", role: nil)
            let adminToken = try await Self.token(server, client, "ada@example.com")
            let withoutScope = try await Self.token(server, client, "ada@example.com", scope: "openid")
            let plain = try await Self.token(server, client, "plain@example.com")
            // A /v1 sign-in's token carries no scope at all.
            let appToken = try await server.request(
                .post, "/v1/auth/password/login", json: ["username": "ada@example.com", "password": .string(Self.password)]
            ).tokens.accessToken
            for path in Self.readPaths + ["/v1/admin/users/\(ada)"] {
                #expect(try await Self.get(server, path, adminToken).status == 200, "\(path)")
                for token in [withoutScope, plain, appToken] {
                    let refused = try await Self.get(server, path, token)
                    #expect(refused.status == 403 && Self.error(refused) == "forbidden", "\(path)")
                }
            }
            let revoke = try await Self.post(server, "/v1/admin/users/\(ada)/sessions/revoke", plain, json: ["session_id": "ses_x"])
            #expect(revoke.status == 403 && Self.error(revoke) == "forbidden")
            // No token at all is the bearer check's 401.
            #expect(try await server.request(.get, "/v1/admin/users").status == 401)
            // A role taken away counts on the next request, with the same token.
            #expect(try await server.application.services.admin.revoke(userID: ada, context: RequestContext(requestID: "cli")))
            #expect(try await Self.get(server, "/v1/admin/users", adminToken).status == 403)
        }
    }

    // MARK: S55, S56: support's limits; actions audited with the actor

    @Test("S55, S56: support ends one session or all of an account's; each session.revoked entry names the actor and the address, and the sessions are over")
    func s55s56SupportEndsSessionsAudited() async throws {
        try await Self.with { server, client in
            let support = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let user = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let first = try await server.startSession(for: user)
            let second = try await server.startSession(for: user)
            let third = try await server.startSession(for: user)

            let one = try await Self.post(server, "/v1/admin/users/\(user.id)/sessions/revoke", token, json: ["session_id": .string(first.session.id)])
            #expect(one.status == 200)
            #expect(try one.json["revoked"] == [.string(first.session.id)])
            #expect(try await server.application.services.sessions.session(first.session.id)?.revokedAt != nil)
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(first.accessToken)"]).status == 401)
            // A session that is not the account's, or is over, is not found.
            let again = try await Self.post(server, "/v1/admin/users/\(user.id)/sessions/revoke", token, json: ["session_id": .string(first.session.id)])
            #expect(again.status == 404)

            let all = try await Self.post(server, "/v1/admin/users/\(user.id)/sessions/revoke", token)
            #expect(try Set(all.json["revoked"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [second.session.id, third.session.id])
            let revoked = try await Self.audit(server, "session.revoked")
            #expect(revoked.count == 3)
            for entry in revoked {
                #expect(entry.userID == user.id && entry.details["actor"] == support && entry.details["reason"] == "admin")
                #expect(entry.ip == "127.0.0.1" && entry.requestID?.isEmpty == false)
            }
            #expect(try await server.application.services.sessions.sessions(userID: user.id).isEmpty)
            #expect(try await Self.post(server, "/v1/admin/users/usr_nobody/sessions/revoke", token).status == 404)
        }
    }

    @Test("the account page shows identities, factors, sessions and the account's newest audit entries")
    func userDetail() async throws {
        try await Self.with { server, client in
            _ = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let grace = try await Self.account(server, "grace@example.com", role: nil)
            let response = try await Self.get(server, "/v1/admin/users/\(grace)", token)
            #expect(response.status == 200)
            let body = try response.json
            #expect(body["account"]?["user"]?["id"]?.stringValue == grace)
            #expect(body["account"]?["username"]?.stringValue == "grace@example.com")
            #expect(body["account"]?["methods"] == ["password"])
            #expect(body["identities"]?.arrayValue?.first?["provider"]?.stringValue == "password")
            #expect(body["sessions"]?.arrayValue?.count == 1)
            #expect(body["role"] == .null && body["totp"] == .null)
            #expect(body["audit"]?.arrayValue?.compactMap { $0["event"]?.stringValue } == ["session.created", "password.signup"])
            #expect(try await Self.get(server, "/v1/admin/users/usr_nobody", token).status == 404)
        }
    }

    @Test("S50, S51, S55, S56: support disables an account (its sessions end, sign-in is refused, the list shows it) and enables it; each change is audited with the actor, a repeat changes nothing")
    func s50s51s55s56SupportDisablesAndEnables() async throws {
        try await Self.with { server, client in
            let support = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let grace = try await Self.account(server, "grace@example.com", role: nil)
            let login: JSONValue = ["username": "grace@example.com", "password": .string(Self.password)]
            let session = try await server.request(.post, "/v1/auth/password/login", json: login).tokens

            let live = try await server.application.services.sessions.sessions(userID: grace).count
            let disabled = try await Self.post(server, "/v1/admin/users/\(grace)/disable", token)
            #expect(disabled.status == 200)
            #expect(try disabled.json == ["user_id": .string(grace), "disabled": true, "changed": true])
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(session.accessToken)"]).status == 401)
            let refused = try await server.request(.post, "/v1/auth/password/login", json: login)
            #expect(refused.status == 403 && Self.error(refused) == "account_disabled")
            let listed = try await Self.get(server, "/v1/admin/users?query=grace", token)
            #expect(try listed.json["users"]?.arrayValue?.first?["disabled_at"]?.stringValue != nil)
            let again = try await Self.post(server, "/v1/admin/users/\(grace)/disable", token)
            #expect(try again.json["changed"] == false)
            let entry = try #require(try await Self.audit(server, "account.disabled").first)
            #expect(entry.userID == grace && entry.details["actor"] == support && entry.details["sessions_ended"] == String(live))
            let left = try await server.application.services.sessions.sessions(userID: grace)
            #expect(live >= 1 && left.isEmpty)
            #expect(try await Self.audit(server, "account.disabled").count == 1)

            let enabled = try await Self.post(server, "/v1/admin/users/\(grace)/enable", token)
            #expect(try enabled.json == ["user_id": .string(grace), "disabled": false, "changed": true])
            #expect(try await Self.audit(server, "account.enabled").first?.details["actor"] == support)
            #expect(try await server.request(.post, "/v1/auth/password/login", json: login).status == 200)
            #expect(try await server.request(.get, "/v1/me", headers: ["Authorization": "Bearer \(session.accessToken)"]).status == 401)
            #expect(try await Self.get(server, "/v1/admin/users?query=grace", token).json["users"]?.arrayValue?.first?["disabled_at"] == .null)

            #expect(try await Self.post(server, "/v1/admin/users/usr_nobody/disable", token).status == 404)
            _ = try await Self.account(server, "plain@example.com", role: nil)
            let plain = try await Self.token(server, client, "plain@example.com")
            let forbidden = try await Self.post(server, "/v1/admin/users/\(grace)/disable", plain)
            #expect(forbidden.status == 403 && Self.error(forbidden) == "forbidden")
            #expect(try await server.application.services.accounts.disabledAt(userID: grace) == nil)
        }
    }

    @Test("S55, S56: support mails an account the password reset of the email flow; the answer shows no link or code, and email.requested names the actor")
    func s55s56SupportSendsAPasswordReset() async throws {
        try await Self.with { server, client in
            let support = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let grace = try await Self.account(server, "grace@example.com", role: nil)
            let sent = try await Self.post(server, "/v1/admin/users/\(grace)/password-reset", token)
            #expect(sent.status == 202 && sent.body.isEmpty)
            let mail = try await EmailFlowTests.mail(server, to: "grace@example.com")
            #expect(mail.link.hasPrefix("/email/reset?token="))
            let requested = try #require(try await Self.audit(server, "email.requested").first)
            #expect(requested.userID == grace && requested.details["purpose"] == "reset" && requested.details["actor"] == support)
            #expect(try await Self.post(server, "/v1/admin/users/usr_nobody/password-reset", token).status == 404)
        }
    }

    @Test("S55, S56: an admin removes a device key and TOTP of an account, support may not; each removal is audited with the actor")
    func s55s56AdminRemovesFactors() async throws {
        try await Self.with { server, client in
            let ada = try await Self.account(server, "ada@example.com", role: .admin)
            _ = try await Self.account(server, "help@example.com", role: .support)
            let admin = ["Authorization": "Bearer \(try await Self.token(server, client, "ada@example.com"))"]
            let support = ["Authorization": "Bearer \(try await Self.token(server, client, "help@example.com"))"]
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            try await server.database.write { connection in
                try connection.execute(
                    "INSERT INTO device_keys (id, user_id, public_key, label, created_at) VALUES ('dk_1', ?, ?, 'iPhone', 1)",
                    [.text(grace.id), .blob([1, 2, 3])])
                try connection.execute(
                    "INSERT INTO totp_factors (id, user_id, secret, confirmed_at, created_at) VALUES ('totp_1', ?, ?, 1, 1)", [.text(grace.id), .blob([1])])
            }
            let page = try await server.request(.get, "/v1/admin/users/\(grace.id)", headers: support)
            #expect(try page.json["device_keys"]?.arrayValue?.first?["name"]?.stringValue == "iPhone")
            #expect(try page.json["account"]?["factors"] == ["device_key", "totp"])
            let refused = try await server.request(.delete, "/v1/admin/users/\(grace.id)/factors/device_key/dk_1", headers: support)
            #expect(refused.status == 403 && Self.error(refused) == "forbidden")

            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)/factors/device_key/dk_1", headers: admin).status == 204)
            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)/factors/totp/totp_other", headers: admin).status == 404)
            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)/factors/totp/totp_1", headers: admin).status == 204)
            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)/factors/device_key/dk_1", headers: admin).status == 404)
            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)/factors/sms/x", headers: admin).status == 404)
            let left = try await server.database.read { connection in
                try connection.queryOne(
                    "SELECT (SELECT count(*) FROM device_keys) + (SELECT count(*) FROM totp_factors) AS n", [])!.int("n")
            }
            #expect(left == 0)
            for event in ["device_key.removed", "totp.removed"] {
                let entry = try #require(try await Self.audit(server, event).first, "\(event)")
                #expect(entry.userID == grace.id && entry.details["actor"] == ada && entry.details["by"] == "operator", "\(event)")
            }
        }
    }

    // MARK: S55, S56: admin-only actions

    @Test("S55: support is refused 403 forbidden on client, key and delete actions, and nothing changes")
    func s55SupportIsRefusedAdminActions() async throws {
        try await Self.with { server, client in
            _ = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let auth = ["Authorization": "Bearer \(token)"]
            let clientsBefore = try await server.application.clients.list()
            let attempts: [TestResponse] = [
                try await server.request(.delete, "/v1/admin/users/\(grace.id)", headers: auth),
                try await server.request(.get, "/v1/admin/clients", headers: auth),
                try await server.request(.post, "/v1/admin/clients", json: ["name": "X", "redirect_uris": ["https://x.example/cb"]], headers: auth),
                try await server.request(.get, "/v1/admin/clients/\(client.id)", headers: auth),
                try await server.request(.patch, "/v1/admin/clients/\(client.id)", json: ["name": "Mine"], headers: auth),
                try await server.request(.delete, "/v1/admin/clients/\(client.id)", headers: auth),
                try await server.request(.post, "/v1/admin/clients/\(client.id)/rotate-secret", headers: auth),
                try await server.request(.get, "/v1/admin/keys", headers: auth),
                try await server.request(.post, "/v1/admin/keys/rotate", json: [:], headers: auth),
            ]
            for refused in attempts {
                #expect(refused.status == 403 && Self.error(refused) == "forbidden", "\(refused.text)")
            }
            #expect(try await UserRepository(database: server.database).find(grace.id) != nil)
            #expect(try await server.application.clients.list() == clientsBefore)
        }
    }

    @Test("S56: an admin deletes an account and manages clients; each change is audited in its transaction with the actor")
    func s56AdminActionsAreAuditedWithTheActor() async throws {
        try await Self.with { server, client in
            let ada = try await Self.account(server, "ada@example.com", role: .admin)
            let token = try await Self.token(server, client, "ada@example.com")
            let auth = ["Authorization": "Bearer \(token)"]
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            _ = try await server.startSession(for: grace)

            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)", headers: auth).status == 204)
            #expect(try await UserRepository(database: server.database).find(grace.id) == nil)
            let deleted = try #require(try await Self.audit(server, "account.deleted").first)
            #expect(deleted.userID == grace.id && deleted.details["actor"] == ada && deleted.details["reason"] == "admin")
            // The deletion scrubs the account's earlier entries, its session's end among them.
            #expect(try await Self.audit(server, "session.revoked").first?.details == [:])
            #expect(try await server.request(.delete, "/v1/admin/users/\(grace.id)", headers: auth).status == 404)

            let added = try await server.request(
                .post, "/v1/admin/clients",
                json: ["name": "Notes <b>", "redirect_uris": ["https://notes.example/cb"], "confidential": true, "grant_types": ["authorization_code"]],
                headers: auth)
            #expect(added.status == 201 && added.headers["Cache-Control"] == "no-store")
            let id = try #require(try added.json["client_id"]?.stringValue)
            let secret = try #require(try added.json["client_secret"]?.stringValue)
            let stored = try #require(try await server.application.clients.client(id: id))
            #expect(stored.name == "Notes <b>" && stored.isConfidential && stored.grantTypes == [.authorizationCode, .refreshToken])
            #expect(try await server.application.clients.authenticate(id: id, secret: secret).id == id)
            let shown = try await server.request(.get, "/v1/admin/clients/\(id)", headers: auth)
            #expect(try shown.json["name"]?.stringValue == "Notes <b>" && !shown.text.contains(secret))
            let listed = try await server.request(.get, "/v1/admin/clients", headers: auth)
            #expect(try listed.json["clients"]?.arrayValue?.compactMap { $0["client_id"]?.stringValue }.contains(id) == true)

            let patched = try await server.request(
                .patch, "/v1/admin/clients/\(id)", json: ["name": "Notes", "redirect_uris": ["https://notes.example/cb", "https://notes.example/cb2"]],
                headers: auth)
            #expect(patched.status == 200)
            #expect(try patched.json["redirect_uris"] == ["https://notes.example/cb", "https://notes.example/cb2"])
            let changed = try #require(try await server.application.clients.client(id: id))
            #expect(changed.name == "Notes" && changed.redirectURIs.count == 2 && changed.isConfidential && changed.scopes == stored.scopes)
            let nearMiss = try await server.request(.patch, "/v1/admin/clients/\(id)", json: ["redirect_uris": ["http://localhost/cb"]], headers: auth)
            #expect(nearMiss.status == 400)
            #expect(try await server.application.clients.client(id: id)?.redirectURIs == changed.redirectURIs, "S20: nothing written")
            #expect(try await server.request(.patch, "/v1/admin/clients/cl_nobody", json: ["name": "X"], headers: auth).status == 404)

            let rotated = try await server.request(.post, "/v1/admin/clients/\(id)/rotate-secret", headers: auth)
            let newSecret = try #require(try rotated.json["client_secret"]?.stringValue)
            #expect(newSecret != secret)
            await #expect(throws: AuthError.self) { try await server.application.clients.authenticate(id: id, secret: secret) }
            #expect(try await server.request(.post, "/v1/admin/clients/\(client.id)/rotate-secret", headers: auth).status == 400, "a public client")

            #expect(try await server.request(.delete, "/v1/admin/clients/\(id)", headers: auth).status == 204)
            #expect(try await server.application.clients.client(id: id) == nil)
            #expect(try await server.request(.get, "/v1/admin/clients/\(id)", headers: auth).status == 404)
            #expect(try await Self.audit(server, "client.updated").first?.details["fields"] == "name,redirect_uris")
            for event in ["client.registered", "client.updated", "client.secret_rotated", "client.removed"] {
                let entry = try #require(try await Self.audit(server, event).first { $0.details["client_id"] == id }, "\(event)")
                #expect(entry.details["actor"] == ada && entry.ip == "127.0.0.1", "\(event)")
            }
            let refused = try await server.request(.post, "/v1/admin/clients", json: ["name": "Bad", "redirect_uris": ["http://localhost/cb"]], headers: auth)
            #expect(refused.status == 400)

            let keys = try await server.request(.get, "/v1/admin/keys", headers: auth)
            let listedKeys = try keys.json["keys"]?.arrayValue ?? []
            #expect(Set(listedKeys.compactMap { $0["algorithm"]?.stringValue }) == ["ES256", "RS256"])
            #expect(listedKeys.allSatisfy { $0["state"]?.stringValue == "active" } && !keys.text.contains("\"d\""))

            let rotation = try await server.request(.post, "/v1/admin/keys/rotate", json: ["algorithm": "ES256", "activate_in": 330], headers: auth)
            #expect(rotation.status == 200)
            let kid = try #require(try rotation.json["keys"]?.arrayValue?.first?["kid"]?.stringValue)
            #expect(try rotation.json["keys"]?.arrayValue?.first?["state"]?.stringValue == "pending")
            #expect(try await server.application.signingKeys.allKeys().contains { $0.id == kid && $0.algorithm == .es256 })
            let keyRotated = try #require(try await Self.audit(server, "key.rotated").first)
            #expect(keyRotated.details["kid"] == kid && keyRotated.details["actor"] == ada && keyRotated.ip == "127.0.0.1")
            for bad: JSONValue in [["activate_in": 10], ["algorithm": "HS256"]] {
                #expect(try await server.request(.post, "/v1/admin/keys/rotate", json: bad, headers: auth).status == 400)
            }
        }
    }

    @Test("the overview counts accounts, live sessions, the last day's audit events by outcome, the outboxes and the keys")
    func stats() async throws {
        try await Self.with { server, client in
            _ = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            let ended = try await server.startSession(for: grace)
            _ = try await server.startSession(for: grace)
            _ = try await server.application.services.sessions.revokeSessions(
                userID: grace.id, sessionIDs: [ended.session.id], reason: "logout", context: RequestContext())
            let failed = try await server.request(.post, "/v1/auth/password/login", json: ["username": "help@example.com", "password": "wrong password here"])
            #expect(failed.status == 401)
            let stats = try await Self.get(server, "/v1/admin/stats", token)
            #expect(stats.status == 200)
            let body = try stats.json
            #expect(body["accounts"] == 2)
            // help's sign-up and code-flow sessions, and grace's live one.
            #expect(body["live_sessions"] == 3)
            #expect(body["events_24h"]?["password.login"]?["failure"] == 1)
            #expect(body["events_24h"]?["session.revoked"]?["success"] == 1)
            #expect(body["outbox"] == ["apple_revocation": 0, "mail": 0])
            #expect(body["signing_keys"]?.arrayValue?.count == 2)
            #expect(body["database"]?.stringValue == server.database.dialect.name)
        }
    }

    // MARK: S57: search and keyset pagination

    @Test("S57: search is by prefix, whatever the case, over email, username and names; pages walk every row once; limit is at most 200")
    func s57SearchAndKeysetPagination() async throws {
        try await Self.with { server, client in
            _ = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            var made: [String] = []
            for (index, name) in ["Ada", "adele", "Bob", "ADAM", "Carol", "ada", "Dave"].enumerated() {
                made.append(try await server.createUser(email: "\(name)\(index)@Example.com", givenName: name).id)
                server.clock.advance(by: index % 2 == 0 ? 0 : 1)  // some share a second: the id breaks the tie
            }
            let found = try await Self.get(server, "/v1/admin/users?query=AdA", token)
            let ids = try found.json["users"]?.arrayValue?.compactMap { $0["user"]?["id"]?.stringValue } ?? []
            #expect(Set(ids) == [made[0], made[3], made[5]])
            #expect(try await Self.get(server, "/v1/admin/users?query=help", token).json["users"]?.arrayValue?.count == 1, "by username")
            #expect(try await Self.get(server, "/v1/admin/users?query=\(made[4])", token).json["users"]?.arrayValue?.count == 1, "by id")
            #expect(try await Self.get(server, "/v1/admin/users?query=carol4%40example.com", token).json["users"]?.arrayValue?.count == 1)
            #expect(try await Self.get(server, "/v1/admin/users?query=zzz", token).json["users"] == [])

            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await Self.get(server, "/v1/admin/users?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""), token)
                #expect(page.status == 200)
                seen += try page.json["users"]?.arrayValue?.compactMap { $0["user"]?["id"]?.stringValue } ?? []
                cursor = try page.json["next_cursor"]?.stringValue
                pages += 1
            } while cursor != nil && pages < 10
            #expect(seen.count == 8 && Set(seen).count == 8 && Set(made).isSubset(of: Set(seen)))
            for bad in ["limit=0", "limit=201", "limit=x", "cursor=not-a-cursor"] {
                let refused = try await Self.get(server, "/v1/admin/users?\(bad)", token)
                #expect(refused.status == 400 && Self.error(refused) == "invalid_request", "\(bad)")
            }
        }
    }

    @Test("S57: the audit log pages newest first by filter, and exports NDJSON in bounded pages with the next cursor in a header")
    func s57AuditPagesAndExport() async throws {
        try await Self.with { server, client in
            _ = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let grace = try await server.createUser(email: "grace@example.com", givenName: "Grace")
            for _ in 0..<5 {
                _ = try await server.startSession(for: grace)
                server.clock.advance(by: 1)
            }
            let created = try await AuditLog(database: server.database).entries(userID: grace.id, event: "session.created")
            var walked: [String] = []
            var cursor: String?
            repeat {
                let page = try await Self.get(
                    server, "/v1/admin/audit?user=\(grace.id)&event=session.created&limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), token)
                walked += try page.json["entries"]?.arrayValue?.compactMap { $0["details"]?["session_id"]?.stringValue } ?? []
                cursor = try page.json["next_cursor"]?.stringValue
            } while cursor != nil && walked.count < 20
            #expect(walked == created.compactMap { $0.details["session_id"] } && walked.count == 5)

            let since = WireTimestamp(created[1].time).rfc3339
            let until = WireTimestamp(created[0].time).rfc3339
            let window = try await Self.get(server, "/v1/admin/audit?user=\(grace.id)&since=\(since)&until=\(until)", token)
            #expect(try window.json["entries"]?.arrayValue?.compactMap { $0["details"]?["session_id"]?.stringValue } == [created[1].details["session_id"]!])

            let export = try await Self.get(server, "/v1/admin/audit?user=\(grace.id)&limit=3", token, headers: ["Accept": "application/x-ndjson"])
            #expect(export.status == 200 && export.headers["Content-Type"] == "application/x-ndjson")
            let lines = export.text.split(separator: "\n").map { try? JSONValue(parsing: Array($0.utf8)) }
            #expect(lines.count == 3 && lines.allSatisfy { $0?["event"]?.stringValue == "session.created" })
            let next = try #require(export.headers[AdminRoutes.nextCursorHeader])
            let rest = try await Self.get(server, "/v1/admin/audit?user=\(grace.id)&cursor=\(next)", token, headers: ["Accept": "application/x-ndjson"])
            #expect(rest.text.split(separator: "\n").count == 2 && rest.headers[AdminRoutes.nextCursorHeader] == nil)
            #expect(try await Self.get(server, "/v1/admin/audit?since=yesterday", token).status == 400)
        }
    }

    // MARK: S58: hostile values

    @Test("S58: a name with markup and an email with quotes come back as JSON strings, intact, in the search and the account page")
    func s58HostileValuesAreJSONStrings() async throws {
        try await Self.with { server, client in
            _ = try await Self.account(server, "help@example.com", role: .support)
            let token = try await Self.token(server, client, "help@example.com")
            let name = "<script>alert(\"x\")</script>"
            let email = #""o'hara\"@example.com"#
            let hostile = try await server.createUser(email: email, givenName: name)
            let found = try await Self.get(server, "/v1/admin/users?query=%3Cscript", token)
            #expect(found.headers["Content-Type"] == "application/json; charset=utf-8")
            let row = try #require(found.json["users"]?.arrayValue?.first?["user"])
            #expect(row["given_name"]?.stringValue == name && row["email"]?.stringValue == email)
            let detail = try await Self.get(server, "/v1/admin/users/\(hostile.id)", token)
            #expect(try detail.json["account"]?["user"]?["given_name"]?.stringValue == name)
            #expect(try detail.json["account"]?["user"]?["email"]?.stringValue == email)
        }
    }
}
