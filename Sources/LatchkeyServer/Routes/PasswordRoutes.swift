import LatchkeyHTTP
import LatchkeyWire

/// `POST /v1/auth/password/signup`, `/login` and `/change` (docs/reference.md).
struct PasswordRoutes {
    let passwords: PasswordService
    let bearer: BearerAuthenticator
    /// Binds the tokens a sign-in issues to the key of its DPoP proof.
    let binding: DPoPBinding

    func register(on router: Router) {
        let passwords = passwords
        // Routes of `signedIn` run behind the bearer check, which puts the caller in the context.
        let signedIn = router.group("/v1", middleware: bearer)
        let issuing = router.group("", middleware: binding)

        issuing.post("/v1/auth/password/signup") { request, context in
            let body = try request.wireBody(WirePasswordSignUpRequest.self)
            let response = try await passwords.signUp(
                username: try Self.username(body.username), password: body.password,
                givenName: try Self.name(body.givenName, "given_name"), familyName: try Self.name(body.familyName, "family_name"),
                context: context.caller)
            return response.response(status: 201)
        }

        issuing.post("/v1/auth/password/login") { request, context in
            let body = try request.wireBody(WirePasswordLoginRequest.self)
            return try await passwords.logIn(
                username: try Self.username(body.username), password: body.password, context: context.caller
            ).response()
        }

        signedIn.post("/auth/password/change") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WirePasswordChangeRequest.self)
            // Passwords of any length the body allows: ``PasswordPolicy`` judges their length and says why.
            try await passwords.change(
                principal: principal, currentPassword: body.currentPassword, newPassword: body.newPassword, context: context.caller)
            return .empty()
        }
    }

    /// The username as typed, before ``Username`` normalises and judges it.
    static func username(_ username: String) throws -> String {
        try BodyMember.text(username, "username", maxLength: 1024)
    }

    /// A sign-up name: absent or null is none; otherwise a non-empty string of at most
    /// ``User/maxNameLength`` bytes.
    static func name(_ name: String?, _ field: String) throws -> String? {
        try name.map { try BodyMember.text($0, field, maxLength: User.maxNameLength) }
    }
}
