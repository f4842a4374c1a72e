import LatchkeyHTTP
import LatchkeyJSON

/// `POST /v1/auth/password/signup`, `/login` and `/change` (docs/reference.md).
struct PasswordRoutes {
    let passwords: PasswordService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let passwords = passwords
        let bearer = bearer

        router.post("/v1/auth/password/signup") { request in
            let body = try JSONFields(request)
            let response = try await passwords.signUp(
                username: try Self.username(body), password: try Self.password(body, "password"),
                givenName: try body.optional("given_name", maxLength: User.maxNameLength),
                familyName: try body.optional("family_name", maxLength: User.maxNameLength), context: RequestContext(request))
            return response.response(status: 201)
        }

        router.post("/v1/auth/password/login") { request in
            let body = try JSONFields(request)
            return try await passwords.logIn(
                username: try Self.username(body), password: try Self.password(body, "password"), context: RequestContext(request)
            ).response()
        }

        router.post("/v1/auth/password/change") { request in
            let principal = try await bearer.authenticate(request)
            let body = try JSONFields(request)
            try await passwords.change(
                principal: principal, currentPassword: try Self.password(body, "current_password"),
                newPassword: try Self.password(body, "new_password"), context: RequestContext(request))
            return .empty()
        }
    }

    static func username(_ body: JSONFields) throws -> String {
        try body.required("username", maxLength: 1024)
    }

    /// A password of any length the body allows: ``PasswordPolicy`` judges its length and says why.
    static func password(_ body: JSONFields, _ name: String) throws -> String {
        switch body.members[name] {
        case .string(let value)?: return value
        case nil, .null?: throw HTTPError.invalidRequest("\(name) is required")
        default: throw HTTPError.invalidRequest("\(name) must be a string")
        }
    }
}
