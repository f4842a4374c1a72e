import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWire

/// `GET /v1/me`, `PATCH /v1/me` and `DELETE /v1/me`.
struct AccountRoutes {
    let sessions: SessionService
    let apple: AppleService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let sessions = sessions
        let apple = apple
        let bearer = bearer

        router.get("/v1/me") { request in
            let principal = try await bearer.authenticate(request)
            guard let profile = try await AccountProfile.load(userID: principal.userID, database: sessions.database) else {
                throw HTTPError.invalidToken("the account no longer exists")
            }
            return .json(profile.json)
        }

        router.patch("/v1/me") { request in
            let principal = try await bearer.authenticate(request)
            let change = try NameChange(JSONFields(request))
            let user = try await change.apply(
                userID: principal.userID, database: sessions.database, now: sessions.clock(), context: RequestContext(request))
            return .json(["user": user.json])
        }

        // Revokes Apple's tokens at Apple, ends every session, deletes personal data (docs/reference.md);
        // with a second factor enrolled, one must have been proved in the last five minutes.
        router.delete("/v1/me") { request in
            let principal = try await bearer.authenticate(request)
            try await apple.deleteAccount(userID: principal.userID, principal: principal, reason: "user", context: RequestContext(request))
            return .empty()
        }
    }
}

/// What `GET /v1/me` shows: the user, the password username if any, their sign-in identities
/// (a password account lists a `password` identity) and second factors.
struct AccountProfile: Sendable {
    var user: User
    var username: String?
    var identities: [JSONValue]
    var factors: [JSONValue]

    static func load(userID: String, database: any SQLDatabase) async throws -> AccountProfile? {
        let users = UserRepository(database: database)
        let dialect = database.dialect
        return try await database.read { connection in
            guard let user = try users.find(userID, on: connection) else { return nil }
            var identities = try connection.query(
                dialect.sql("SELECT provider, email, created_at FROM identities WHERE user_id = ? ORDER BY created_at"), [.text(userID)]
            ).map { row -> JSONValue in
                ["provider": .string(try row.string("provider")), "email": row.optionalString("email").map(JSONValue.string) ?? .null,
                 "created_at": .string(RFC3339.string(try row.date("created_at")))]
            }
            let password = try connection.queryOne(
                dialect.sql("SELECT username, created_at FROM password_credentials WHERE user_id = ?"), [.text(userID)])
            let username = try password.map { try $0.string("username") }
            if let password, let username {
                identities.insert(
                    ["provider": "password", "email": user.email.map(JSONValue.string) ?? .null, "username": .string(username),
                     "created_at": .string(RFC3339.string(try password.date("created_at")))],
                    at: 0)
            }
            let factors = try SecondFactors.list(userID: userID, on: connection).map { WireFactor($0).json }
            return AccountProfile(user: user, username: username, identities: identities, factors: factors)
        }
    }

    var json: JSONValue {
        ["user": user.json, "username": username.map(JSONValue.string) ?? .null, "identities": .array(identities),
         "factors": .array(factors)]
    }
}

/// The body of `PATCH /v1/me`: each name is left alone when absent, cleared by `null` or `""`,
/// and otherwise replaced (surrounding whitespace trimmed). Any other member is refused, so a
/// typo (`givenName`) is an error instead of a silent no-op.
struct NameChange: Sendable {
    /// `nil`: leave it; `.some(nil)`: clear it; `.some(name)`: set it.
    var givenName: String??
    var familyName: String??

    init(_ body: JSONFields) throws {
        if let unknown = body.members.keys.sorted().first(where: { $0 != "given_name" && $0 != "family_name" }) {
            throw HTTPError.invalidRequest("unknown field \(unknown): only given_name and family_name can be changed")
        }
        givenName = try Self.name(body, "given_name")
        familyName = try Self.name(body, "family_name")
    }

    private static func name(_ body: JSONFields, _ field: String) throws -> String?? {
        switch body.members[field] {
        case nil: return nil
        case .null?: return .some(nil)
        case .string(let value)?:
            let name = String(value.trimmingWhitespace())
            guard name.utf8.count <= User.maxNameLength else {
                throw HTTPError.invalidRequest("\(field) must be at most \(User.maxNameLength) bytes")
            }
            return .some(name.isEmpty ? nil : name)
        default: throw HTTPError.invalidRequest("\(field) must be a string or null")
        }
    }

    /// Writes the change and its audit entry in one transaction; the entry names the fields
    /// that changed, never their values.
    func apply(userID: String, database: any SQLDatabase, now: Date, context: RequestContext) async throws -> User {
        let users = UserRepository(database: database)
        let audit = AuditLog(database: database)
        return try await database.write { connection in
            guard var user = try users.find(userID, on: connection) else { throw HTTPError.invalidToken("the account no longer exists") }
            var changed: [String] = []
            if let givenName, givenName != user.givenName {
                user.givenName = givenName
                changed.append("given_name")
            }
            if let familyName, familyName != user.familyName {
                user.familyName = familyName
                changed.append("family_name")
            }
            guard !changed.isEmpty else { return user }
            try users.update(user, now: now, on: connection)
            try audit.record(
                .init(
                    time: now, userID: userID, event: .accountUpdated, outcome: .success, ip: context.ip, requestID: context.requestID,
                    details: ["fields": changed.joined(separator: ",")]),
                on: connection)
            return user
        }
    }
}
