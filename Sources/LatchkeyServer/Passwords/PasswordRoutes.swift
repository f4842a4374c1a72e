import LatchkeyHTTP
import LatchkeyJOSE

/// `POST /v1/auth/password/signup`, `/login` and `/change` (API.md).
struct PasswordRoutes {
    let passwords: PasswordService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let passwords = passwords
        let bearer = bearer

        router.post("/v1/auth/password/signup") { request in
            let body = try Self.object(request)
            let response = try await passwords.signUp(
                username: try Self.string(body, "username"), password: try Self.string(body, "password"),
                givenName: try Self.optionalName(body, "given_name"), familyName: try Self.optionalName(body, "family_name"),
                context: RequestContext(request))
            return response.response(status: 201)
        }

        router.post("/v1/auth/password/login") { request in
            let body = try Self.object(request)
            return try await passwords.logIn(
                username: try Self.string(body, "username"), password: try Self.string(body, "password"), context: RequestContext(request)
            ).response()
        }

        router.post("/v1/auth/password/change") { request in
            let principal = try await bearer.authenticate(request)
            let body = try Self.object(request)
            try await passwords.change(
                principal: principal, currentPassword: try Self.string(body, "current_password"),
                newPassword: try Self.string(body, "new_password"), context: RequestContext(request))
            return .empty()
        }
    }

    static func object(_ request: HTTPRequest) throws -> [String: JSONValue] {
        guard let members = try request.jsonBody().objectValue else { throw HTTPError.invalidRequest("the body must be a JSON object") }
        return members
    }

    static func string(_ body: [String: JSONValue], _ name: String) throws -> String {
        guard let value = body[name] else { throw HTTPError.invalidRequest("\(name) is required") }
        guard let string = value.stringValue else { throw HTTPError.invalidRequest("\(name) must be a string") }
        return string
    }

    /// A name as Apple sends it: optional, at most 256 characters.
    static func optionalName(_ body: [String: JSONValue], _ name: String) throws -> String? {
        switch body[name] {
        case nil, .null?: return nil
        case .string(let value)? where value.count <= 256: return value.isEmpty ? nil : value
        default: throw HTTPError.invalidRequest("\(name) must be a string of at most 256 characters")
        }
    }
}
