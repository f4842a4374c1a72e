import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyStore

/// `GET /v1/me` and `DELETE /v1/me`.
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

        // Revokes Apple's tokens at Apple, ends every session, deletes personal data (API.md);
        // with a second factor enrolled, one must have been proved in the last five minutes.
        router.delete("/v1/me") { request in
            let principal = try await bearer.authenticate(request)
            try await apple.deleteAccount(userID: principal.userID, principal: principal, reason: "user", context: RequestContext(request))
            return .empty()
        }
    }
}

/// What `GET /v1/me` shows: the user, their sign-in identities and second factors.
struct AccountProfile: Sendable {
    var user: User
    var identities: [JSONValue]
    var factors: [JSONValue]

    static func load(userID: String, database: any SQLDatabase) async throws -> AccountProfile? {
        let users = UserStore(database: database)
        let dialect = database.dialect
        return try await database.read { connection in
            guard let user = try users.find(userID, on: connection) else { return nil }
            let identities = try connection.query(
                dialect.sql("SELECT provider, email, created_at FROM identities WHERE user_id = ? ORDER BY created_at"), [.text(userID)]
            ).map { row -> JSONValue in
                ["provider": .string(try row.string("provider")), "email": row.optionalString("email").map(JSONValue.string) ?? .null,
                 "created_at": .string(RFC3339.string(try row.date("created_at")))]
            }
            let factors = try SecondFactors.list(userID: userID, dialect: dialect, on: connection)
            return AccountProfile(user: user, identities: identities, factors: factors)
        }
    }

    var json: JSONValue {
        ["user": user.json, "identities": .array(identities), "factors": .array(factors)]
    }
}
